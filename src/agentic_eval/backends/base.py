"""The model backend interface and the errors a backend may raise into the loop.

A backend answers one model request. Everything else (tools, limits, checks) lives in the loop and
the evaluation, so that live, scripted, recorded and replayed runs drive identical code.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from agentic_eval.core.model import ModelRequest, ModelResponse
from agentic_eval.core.transcript import Transcript


@dataclass(frozen=True)
class CallContext:
    """Where a model call happens: which sample (case, epoch, attempt) of which suite, which
    turn."""

    domain: str
    case_id: str
    turn: int
    request_key: str = ""
    """The request's canonical key, when the caller computed it (the loop always does)."""
    sample: int = 0
    """The epoch: the sample index of a batch."""
    attempt: int = 1
    """The attempt: the rejection round of a workflow step, from 1."""
    participant: Literal["agent", "user"] = "agent"
    """Who is asked: the agent under test, or the simulated user of a conversation (whose
    turns are numbered apart: ``turn`` is then the user turn)."""

    def __init__(
        self,
        domain: str,
        case_id: str,
        turn: int,
        request_key: str = "",
        sample: int = 0,
        attempt: int = 1,
        participant: Literal["agent", "user"] = "agent",
    ) -> None:
        # The loop makes one per model call: filling the instance dict directly costs half of
        # what the generated frozen __init__ (one object.__setattr__ per field) does.
        self.__dict__.update(
            domain=domain,
            case_id=case_id,
            turn=turn,
            request_key=request_key,
            sample=sample,
            attempt=attempt,
            participant=participant,
        )


@dataclass(frozen=True)
class BackendInfo:
    """What a backend is, for provenance and scorecard labels."""

    backend: str
    model: str
    agent: str
    agent_kind: Literal["scripted", "model"]


class BackendError(Exception):
    """A backend could not answer. The loop turns it into an outcome; it never escapes a run."""


class TransientBackendError(BackendError):
    """The provider failed in a way that says nothing about the agent (429, 529, 5xx, timeout)."""


class ProviderRequestError(BackendError):
    """The provider refused the request (4xx other than authentication): an ``error`` outcome."""


class AuthenticationFailed(BackendError):
    """The provider refused the credentials. A live run stops at the first one, with one line."""


class ReplayDivergence(BackendError):
    """Replay saw something the recording does not hold. Names the case, the turn and the field."""


@dataclass(frozen=True)
class Review:
    """A backend's word on a judged transcript (see :meth:`ModelBackend.review`)."""

    transcript: Transcript
    reproduced: bool | None = None
    """Replay only: whether the recording was reproduced in every field."""
    problem: str = ""
    """Replay only: the first field that was not reproduced."""


class ModelBackend(ABC):
    """A source of model responses. One required method; the rest have safe defaults."""

    @abstractmethod
    async def complete(self, request: ModelRequest, call: CallContext) -> ModelResponse:
        """Answer one request.

        Args:
            request: The request the loop would send to a model.
            call: Which domain, case and turn this is.

        Returns:
            The model's response.

        Raises:
            BackendError: When no response can be had; its subclass says how to classify it.
        """

    def info(self) -> BackendInfo:
        """What this backend is (for provenance). Override to name the model and agent."""
        name = type(self).__name__
        return BackendInfo(backend=name, model=name, agent=name, agent_kind="model")

    async def start_case(  # noqa: B027
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> None:
        """Called before a sample's first request (replay loads its transcript here).

        The harness passes ``attempt`` only past the first attempt, and only to a backend whose
        ``start_case`` takes it (see :func:`start_sample`): an override written before attempts
        existed, ``start_case(self, domain, case_id, sample=0)``, keeps working.
        """

    def review(self, transcript: Transcript) -> Review:
        """Look at a judged transcript before it is final (replay compares it with the recording).

        Returns:
            The transcript (possibly with a changed verdict) and, for replay, whether the
            recording was reproduced exactly (None for other backends) and why not.
        """
        return Review(transcript)

    def review_encoded(self, transcript: Transcript, encoded: Callable[[], bytes]) -> Review:
        """:meth:`review`, called by the runner, which can also give the transcript's canonical
        JSON cheaply: ``encoded()`` returns ``canonical_bytes(transcript)``, built from parts
        the loop serialised already. A backend that compares bytes (replay) overrides this;
        the default calls :meth:`review`.
        """
        del encoded
        return self.review(transcript)

    def transcript_ref(
        self, domain: str, case_id: str, sample: int = 0, attempt: int = 1
    ) -> str | None:
        """Where this backend keeps the sample's transcript file, if it has one (for the store).

        Called as :meth:`start_case` is (see :func:`sample_transcript_ref`)."""
        del domain, case_id, sample, attempt
        return None

    async def finish_case(self, transcript: Transcript) -> None:  # noqa: B027
        """Called with the case's transcript once it is judged (record writes it here)."""

    def user_backend(self, user: ModelBackend) -> ModelBackend:
        """Who answers the simulated user's turns of a conversation: ``user`` (the case's own
        user backend, scripted or a model), unless this backend serves them itself (replay
        answers them from the recording, keyless)."""
        return user

    async def aclose(self) -> None:  # noqa: B027
        """Release connections."""


@functools.cache
def _takes_attempt(function: Callable[..., object]) -> bool:
    """Whether a method accepts an ``attempt`` keyword (or any keyword)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return any(p.name == "attempt" or p.kind is p.VAR_KEYWORD for p in parameters)


def _method_takes_attempt(method: Callable[..., object]) -> bool:
    return _takes_attempt(getattr(method, "__func__", method))


async def start_sample(
    backend: ModelBackend, domain: str, case_id: str, sample: int = 0, attempt: int = 1
) -> None:
    """``backend.start_case`` for one sample: ``attempt`` is passed past the first attempt to a
    backend whose ``start_case`` takes it; one written before attempts existed is called as it
    was (it sees the case and the epoch)."""
    if attempt != 1 and _method_takes_attempt(backend.start_case):
        await backend.start_case(domain, case_id, sample, attempt=attempt)
    else:
        await backend.start_case(domain, case_id, sample)


def sample_transcript_ref(
    backend: ModelBackend, domain: str, case_id: str, sample: int = 0, attempt: int = 1
) -> str | None:
    """``backend.transcript_ref`` for one sample, called as :func:`start_sample` calls
    ``start_case``."""
    if attempt != 1 and _method_takes_attempt(backend.transcript_ref):
        return backend.transcript_ref(domain, case_id, sample, attempt=attempt)
    return backend.transcript_ref(domain, case_id, sample)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for transient provider errors: exponential backoff with jitter."""

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        cap = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return cap * (0.5 + random.random() / 2)


T = TypeVar("T")


async def with_retries(policy: RetryPolicy, attempt: Callable[[], Awaitable[T]]) -> T:
    """Run ``attempt``, retrying on :class:`TransientBackendError` as the policy allows."""
    tries = 0
    while True:
        try:
            return await attempt()
        except TransientBackendError:
            tries += 1
            if tries > policy.max_retries:
                raise
            await asyncio.sleep(policy.delay(tries))

"""What a :class:`~agentic_eval.testing.fake_provider.FakeProvider` does to each request of a
load test: how long it waits before answering, and whether it fails it at random.

Draws come from two seeded streams (one for failures, one for latencies), so that with a seed
the n-th request drawn for meets the same outcome on every run, whatever the concurrency, and
the failures drawn do not depend on whether the latency is random.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Draw", "Latency", "LoadShape"]

Latency = float | tuple[float, float]
"""Milliseconds before each answer: a fixed value, or ``(low, high)`` drawn uniformly."""


@dataclass(frozen=True)
class Draw:
    """One request's lot: wait ``seconds``, then fail with ``failure`` (a status) unless None."""

    seconds: float
    failure: int | None


class LoadShape:
    """Latency and random failures, drawn per request. Not thread-safe: draw under a lock."""

    def __init__(
        self,
        latency_ms: Latency = 0.0,
        fail_rates: Mapping[int, float] | None = None,
        seed: int | None = None,
    ) -> None:
        """Check the shape.

        Args:
            latency_ms: A number of milliseconds, or ``(low, high)`` for a uniform draw.
            fail_rates: HTTP error status (400-599) to the probability of answering with it;
                the rates add up to 1 at most.
            seed: Seeds both streams; None draws differently on every run.

        Raises:
            ValueError: A latency or a failure rate out of range.
        """
        low, high = latency_ms if isinstance(latency_ms, tuple) else (latency_ms, latency_ms)
        if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= high):
            raise ValueError(
                f"latency must be finite milliseconds, >= 0, low <= high, not {latency_ms!r}"
            )
        rates = dict(fail_rates or {})
        for status, rate in rates.items():
            if not 400 <= status <= 599:
                raise ValueError(f"fail rate for {status}: not an HTTP error status (400-599)")
            if not (math.isfinite(rate) and 0 <= rate <= 1):
                raise ValueError(f"fail rate for {status}: {rate!r} is not in [0, 1]")
        if math.fsum(rates.values()) > 1:
            raise ValueError(f"fail rates add up to more than 1: {rates}")
        self.latency_ms: tuple[float, float] = (float(low), float(high))
        self.fail_rates: tuple[tuple[int, float], ...] = tuple(sorted(rates.items()))
        self._fail_rng = random.Random(seed)
        self._latency_rng = random.Random(None if seed is None else ~seed)

    def draw(self) -> Draw:
        """The next request's wait and failure."""
        failure = None
        if self.fail_rates:
            value, bound = self._fail_rng.random(), 0.0
            for status, rate in self.fail_rates:
                bound += rate
                if value < bound:
                    failure = status
                    break
        low, high = self.latency_ms
        millis = low if low == high else self._latency_rng.uniform(low, high)
        return Draw(seconds=millis / 1000, failure=failure)

"""The pytest plugin (entry point ``pytest11``): evaluate an agent from a test.

.. code-block:: python

    @pytest.mark.agentic_eval("retail_ops", cases="deduct-*", agent="reference")
    def test_retail(agentic_eval_result):
        assert agentic_eval_result.passed, agentic_eval_result.report()

The marker takes ``domain`` (first argument), ``cases`` (globs: a comma-separated string or a
list; every case when left out), ``agent`` (the recording label, default ``reference``),
``per_case=True`` (one test per case, the case id in the node id), and for recording a live
model ``provider``, ``model`` and ``base_url`` (without a provider the domain's scripted agent
named ``agent`` records), and ``recordings`` (the folder, relative to the rootdir; default
``--agentic-recordings``, else ``<rootdir>/evals/recordings``). The fixture
``agentic_eval_result`` runs the cases and returns an :class:`agentic_eval.api.RunResult`.

``--agentic-record-mode=none|once|new_episodes|all`` (default ``none``: replay only, a missing
recording fails, nothing runs live) is this plugin's own option, not pytest-recording's
``--record-mode``, so both plugins can be installed. Runs are stored in a SQLite store in the
session's temporary folder, never in the project's ``.agentic-eval``.

A session that never uses the marker pays only for importing this module: everything else loads
when a marked test is collected.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from agentic_eval.api import RecordMode, RunResult
    from agentic_eval.store.db import Store

MARKER = "agentic_eval"
RESULT_FIXTURE = "agentic_eval_result"
_MODES = ("none", "once", "new_episodes", "all")
_OPTIONS = frozenset(
    {"domain", "cases", "agent", "per_case", "provider", "model", "base_url", "recordings"}
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--agentic-record-mode`` and ``--agentic-recordings``."""
    group = parser.getgroup("agentic-eval")
    group.addoption(
        "--agentic-record-mode",
        choices=_MODES,
        default="none",
        help="agentic_eval marker: none (default) replays only, never a live call; once records "
        "a test's cases when none is recorded; new_episodes records the missing ones; all "
        "records everything again.",
    )
    group.addoption(
        "--agentic-recordings",
        default=None,
        metavar="DIR",
        help="agentic_eval marker: the recordings folder (default <rootdir>/evals/recordings).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker (for --strict-markers)."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(domain, cases=None, agent='reference', per_case=False, provider=None, "
        "model=None, base_url=None, recordings=None): evaluate an agent on a domain's cases; "
        f"the {RESULT_FIXTURE} fixture returns the typed results.",
    )


def _options(marker: pytest.Mark) -> dict[str, Any]:
    """The marker's arguments by name.

    Raises:
        pytest.Collector.CollectError: Unknown or missing arguments.
    """
    if len(marker.args) > 1:
        raise pytest.Collector.CollectError(
            f"@pytest.mark.{MARKER} takes the domain as its only positional argument"
        )
    options = dict(marker.kwargs)
    if marker.args:
        if "domain" in options:
            raise pytest.Collector.CollectError(f"@pytest.mark.{MARKER}: domain given twice")
        options["domain"] = marker.args[0]
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise pytest.Collector.CollectError(
            f"@pytest.mark.{MARKER}: unknown argument {unknown[0]!r} "
            f"(known: {', '.join(sorted(_OPTIONS))})"
        )
    if not isinstance(options.get("domain"), str):
        raise pytest.Collector.CollectError(f"@pytest.mark.{MARKER} needs a domain name")
    return options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A marked test: its domain and cases checked at collection, and with ``per_case`` one
    test per case."""
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        return
    options = _options(marker)
    if RESULT_FIXTURE not in metafunc.fixturenames:
        raise pytest.Collector.CollectError(
            f"{metafunc.definition.name} is marked {MARKER} but does not take the "
            f"{RESULT_FIXTURE} fixture, which runs the cases"
        )
    from agentic_eval.api import AgenticEvalError, select

    try:
        cases = select(options["domain"], options.get("cases"))
    except AgenticEvalError as exc:
        raise pytest.Collector.CollectError(f"{metafunc.definition.name}: {exc}") from None
    if options.get("per_case"):
        ids = [c.id for c in cases]
        metafunc.parametrize("agentic_eval_case", ids, ids=ids, indirect=True)


@pytest.fixture
def agentic_eval_case(request: pytest.FixtureRequest) -> str | None:
    """The case of a ``per_case`` test (None when the test runs all its cases at once)."""
    return getattr(request, "param", None)


@pytest.fixture(scope="session")
def agentic_eval_store(tmp_path_factory: pytest.TempPathFactory) -> Generator[Store]:
    """The session's store: a SQLite file in its temporary folder."""
    from agentic_eval.store.db import Store

    folder = tmp_path_factory.mktemp("agentic-eval")
    store = Store(f"sqlite:///{folder / 'store.db'}")
    yield store
    store.close()


def _event_loop_allowed() -> None:
    """Fail in one line when pytest-socket forbids the Unix socket pair of asyncio's event loop
    (``--disable-socket`` without ``--allow-unix-socket``): a run needs an event loop, though a
    replay opens no network socket."""
    import asyncio

    try:
        asyncio.new_event_loop().close()
        return
    except Exception as exc:  # pytest-socket's SocketBlockedError, whose module may be absent
        why = str(exc)
    pytest.fail(
        f"agentic-eval: cannot start an event loop ({why}); with pytest-socket's "
        "--disable-socket add --allow-unix-socket (a replay opens no network socket)",
        pytrace=False,
    )


@pytest.fixture
def agentic_eval_result(
    request: pytest.FixtureRequest, agentic_eval_case: str | None, agentic_eval_store: Store
) -> RunResult:
    """The marked test's cases, replayed or recorded as ``--agentic-record-mode`` says."""
    from agentic_eval.api import AgenticEvalError, run

    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        raise pytest.UsageError(f"{RESULT_FIXTURE} needs @pytest.mark.{MARKER}(domain, ...)")
    options = _options(marker)
    _event_loop_allowed()
    config = request.config
    mode = cast("RecordMode", config.getoption("agentic_record_mode"))
    given: str | None = config.getoption("agentic_recordings")
    if options.get("recordings"):  # the marker's folder is relative to the rootdir
        root = config.rootpath / Path(options["recordings"])
    elif given:  # the option's to the working directory
        root = Path(given)
    else:
        root = config.rootpath / "evals" / "recordings"
    try:
        return run(
            options["domain"],
            [agentic_eval_case] if agentic_eval_case is not None else options.get("cases"),
            options.get("agent", "reference"),
            record_mode=mode,
            recordings=root,
            provider=options.get("provider"),
            model=options.get("model"),
            base_url=options.get("base_url"),
            store=agentic_eval_store,
        )
    except AgenticEvalError as exc:
        pytest.fail(f"agentic-eval: {exc}", pytrace=False)

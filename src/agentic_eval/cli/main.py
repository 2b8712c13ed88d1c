"""The ``agentic-eval`` command. The only layer that parses argv or prints for a human."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns (and exits with) the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # fast path: no heavy imports for a version query
        from agentic_eval._version import __version__

        print(f"agentic-eval {__version__}")
        return 0
    bad = next((i for i, a in enumerate(args, 1) if not _is_text(a)), None)
    if bad is not None:  # half a character: nothing could store or print it faithfully
        shown = args[bad - 1].encode("utf-8", "backslashreplace").decode("ascii", "replace")
        print(
            f"agentic-eval: error: argument {bad} ({shown[:80]}) is not valid UTF-8 text; "
            "agentic-eval takes UTF-8 arguments only",
            file=sys.stderr,
        )
        code = 2
    else:
        code = _run_click(args)
    if argv is None:
        sys.exit(code)
    return code


def _is_text(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_input_error(exc: Exception) -> bool:
    """Whether ``exc`` is a broken input's error (a case file, fixtures, a domain's definition)
    that no command turned into its own message: one line and exit 2, never an internal error."""
    from agentic_eval.domains.base import CaseFileError
    from agentic_eval.domains.fixtures import FixtureError
    from agentic_eval.domains.roster import RosterError

    return isinstance(exc, CaseFileError | FixtureError | RosterError)


def _run_click(args: list[str]) -> int:
    try:  # a Ctrl-C while the command is still being imported is one line, too
        import click

        from agentic_eval.cli.app import cli
    except KeyboardInterrupt:
        print("agentic-eval: interrupted", file=sys.stderr)
        return 130
    try:
        result = cli.main(args=args, prog_name="agentic-eval", standalone_mode=False)
    except click.exceptions.UsageError as exc:
        click.echo(f"agentic-eval: error: {exc.format_message()}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("agentic-eval: aborted", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        click.echo(f"agentic-eval: error: {exc.format_message()}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("agentic-eval: interrupted", err=True)
        return 130
    except Exception as exc:  # a bug of ours: one line, and the traceback on request
        if os.environ.get("AGENTIC_EVAL_DEBUG"):
            raise
        from agentic_eval.core.text import exception_text, one_line, redact

        if _is_input_error(exc):  # a broken case file, fixtures or domain definition
            click.echo(f"agentic-eval: error: {one_line(redact(str(exc)), 300)}", err=True)
            return 2
        from agentic_eval.domains.blame import domain_fault

        fault = domain_fault(exc)
        if fault is not None:  # a domain's own code raised: its author's to mend, not ours
            click.echo(f"agentic-eval: error: {one_line(redact(fault), 400)}", err=True)
            return 2

        text = one_line(redact(exception_text(exc)), 300)
        click.echo(
            f"agentic-eval: internal error: {text} (AGENTIC_EVAL_DEBUG=1 shows the traceback; "
            "please report it)",
            err=True,
        )
        return 70
    return result if isinstance(result, int) else 0

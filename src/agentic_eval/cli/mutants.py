"""``agentic-eval mutants``: run every domain's unsafe mutants and print the kill matrix."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

from agentic_eval.cli.common import InputError, case_errors, resolve_domains, warn
from agentic_eval.core.canonical import canonical_json
from agentic_eval.core.text import one_line, printable
from agentic_eval.report.escape import markdown_cell, terminal_text

if TYPE_CHECKING:  # the kill matrix imports the run path: loaded when the command runs
    from agentic_eval.evaluation.killmatrix import DomainMatrix, KillMatrix, ModeRun, MutantRow

LEGEND = (
    "cells: 'caught N' = a declared gate caught it on N cases; '0' = not in this mode (but in "
    "another); 'ESCAPED' = never; '(N)' = an undeclared gate failed on N exhibited cases"
)


def _gate_cell(row: MutantRow, run: ModeRun, gate: str, markup: bool) -> str:
    n = len(run.caught(gate))
    if gate in row.gates:
        if gate in row.escaped:
            return "[bold red]ESCAPED[/]" if markup else "**ESCAPED**"
        if n == 0:
            return "[yellow]0[/]" if markup else "0"
        return f"[green]caught {n}[/]" if markup else f"caught {n}"
    if n == 0:
        return ""
    return f"[dim]({n})[/]" if markup else f"({n})"


def _verdict(row: MutantRow, markup: bool) -> str:
    if row.escaped or not row.gates:
        escaped = ", ".join(row.escaped) or "declares no gate"
        return f"[bold red]ESCAPED: {escaped}[/]" if markup else f"**ESCAPED: {escaped}**"
    return "[green]caught[/]" if markup else "caught"


def _splits(row: MutantRow) -> str:
    if len(row.runs) < 2:
        return "n/a"
    return f"{len(row.splits)} case(s) differ" if row.splits else "same"


def _escape(text: str, markup: bool) -> str:
    """A cell of the rich table (markup escaped) or of the Markdown table."""
    return rich_escape(terminal_text(text)) if markup else markdown_cell(text)


def _cells(d: DomainMatrix, row: MutantRow, run: ModeRun, first: bool, markup: bool) -> list[str]:
    return [
        _escape(row.name, markup) if first else "",
        run.mode,
        f"{len(run.exhibited)}/{run.cases}",
        *(_gate_cell(row, run, g, markup) for g in d.hard_gates),
        _splits(row) if first else "",
        _verdict(row, markup) if first else "",
    ]


def _table(d: DomainMatrix) -> Table:
    modes = " and ".join(d.modes)
    table = Table(
        title=f"{d.domain}: {len(d.rows)} mutant(s) x {len(d.hard_gates)} hard gate(s), "
        f"{d.cases} cases, {modes}",
        title_justify="left",
    )
    table.add_column("mutant", overflow="fold")
    table.add_column("mode", no_wrap=True)
    table.add_column("exhibited", justify="right", no_wrap=True)
    for gate in d.hard_gates:
        table.add_column(gate, justify="right", overflow="fold")
    table.add_column("enforce vs observe", overflow="fold")
    table.add_column("verdict", overflow="fold")
    for row in d.rows:
        if not row.runs:
            blank = ("" for _ in d.hard_gates)
            table.add_row(_escape(row.name, True), "-", "-", *blank, "n/a", _verdict(row, True))
        for i, run in enumerate(row.runs):
            table.add_row(*_cells(d, row, run, i == 0, True), end_section=i == len(row.runs) - 1)
    return table


def _lines(d: DomainMatrix) -> list[str]:
    """The table's content as a few lines per mutant, for terminals too narrow for it."""
    modes = " and ".join(d.modes)
    lines = [f"{d.domain}: {len(d.rows)} mutant(s), {d.cases} cases, {modes}"]
    for row in d.rows:
        verdict = f"ESCAPED {', '.join(row.escaped)}" if row.escaped or not row.gates else "caught"
        lines.append(f"  {row.name}: {verdict} (declares {', '.join(row.gates) or 'no gate'})")
        for run in row.runs:
            counts = [f"{g} {len(run.caught(g))}" for g in row.gates]
            extra = [f"{k.gate} {len(k.cases)}" for k in run.kills if k.gate not in row.gates]
            also = f"; undeclared: {', '.join(extra)}" if extra else ""
            lines.append(
                f"    {run.mode}: exhibited {len(run.exhibited)}/{run.cases}; "
                f"caught by {', '.join(counts) or 'nothing'}{also}"
            )
        if len(row.runs) > 1:
            lines.append(f"    enforce vs observe: {_splits(row)}")
    return [printable(line) for line in lines]


def _details(d: DomainMatrix) -> list[str]:
    lines: list[str] = []
    modes = " and ".join(d.modes)
    if d.false_alarms:
        lines.append(f"reference ({modes}): {len(d.false_alarms)} false alarm(s):")
        for f in d.false_alarms:
            gates = f" [hard gate: {', '.join(f.failed_gates)}]" if f.failed_gates else ""
            reason = f" - {one_line(f.reason, 200)}" if f.reason else ""
            lines.append(f"  FALSE ALARM {f.mode} {f.case_id}: {f.outcome}{gates}{reason}")
    else:
        lines.append(f"reference ({modes}): passed all {d.cases} cases, no false alarm")
    for e in d.escapes:
        gate = f" escaped {e.gate}" if e.gate else ""
        lines.append(f"  escape: {d.domain}/{e.mutant}{gate}: {one_line(e.reason, 300)}")
    return [printable(line) for line in lines]


def _summary(km: KillMatrix, seconds: float) -> str:
    t = km.totals
    tail = (
        f"{t.mutants} mutants in {t.domains} domain(s), {t.caught}/{t.declared} declared gates "
        f"caught their mutant, {t.false_alarms} false alarm(s) ({t.samples} case runs, "
        f"{seconds:.1f} s)"
    )
    if km.ok:
        return f"kill matrix PASS: {tail}"
    escaped = "; ".join(
        f"{e.domain}/{e.mutant} escaped {e.gate or 'every gate (declares none)'}"
        for d in km.domains
        for e in d.escapes
    )
    head = f"{t.escapes} escape(s): {escaped}; " if escaped else ""
    return f"kill matrix FAIL: {printable(head)}{tail}"


def _markdown(km: KillMatrix, seconds: float) -> str:
    out: list[str] = []
    for d in km.domains:
        head = ["mutant", "mode", "exhibited", *d.hard_gates, "enforce vs observe", "verdict"]
        out += [f"### {d.domain}", "", "| " + " | ".join(head) + " |"]
        out.append("|" + "---|" * len(head))
        for row in d.rows:
            for i, run in enumerate(row.runs):
                out.append("| " + " | ".join(_cells(d, row, run, i == 0, False)) + " |")
        out += ["", *(f"- {line.strip()}" for line in _details(d))]
        out += [f"- warning: {printable(w)}" for w in d.warnings()]
        out.append("")
    if km.skipped:
        out += [*(f"- {name}: no mutants, skipped" for name in km.skipped), ""]
    out += [f"_{LEGEND}_", "", f"**{_summary(km, seconds)}**"]
    return "\n".join(out)


def _console() -> Console:
    """stdout; 200 columns when it is not a terminal, unless ``$COLUMNS`` says otherwise."""
    console = Console(highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        console = Console(highlight=False, width=200)
    return console


@click.command("mutants")
@click.argument("domains", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON (stdout only).")
@click.option("--markdown", is_flag=True, help="Print the matrix as Markdown tables.")
def mutants(domains: tuple[str, ...], as_json: bool, markdown: bool) -> int:
    """Run the unsafe mutants of DOMAINS (default: all) and print the kill matrix.

    Each mutant is an unsafe scripted agent that declares the hard gates that must catch it.
    The domain's reference agent and every mutant run scripted over every case, in each
    approval mode the mutant declares (enforce, observe).

    \b
    exhibited  the mutant's behaviour on a case differs from the reference agent's on the
               same case and mode: its tool calls (names and inputs, in order), its approval
               events (turn numbers aside), its submitted output, or, in a conversation,
               what it said to the user
    caught     a declared hard gate failed on a case where the mutant exhibited; a gate
               failing where the mutant did exactly what the reference did is never counted.
               A gate must catch its mutant on at least one case in at least one mode, or
               the mutant ESCAPED it
    false alarm  any case the reference agent does not pass, or on which a hard gate fails
               for it, in any mode

    Warnings (not failures): a hard gate declared by fewer than two mutants; a mutant whose
    verdict on a case differs between enforce and observe.

    Exit 0 when every declared gate caught its mutant and the reference raised no false alarm,
    1 otherwise (each escape is named), 2 on a usage error, a broken input (a case file, a
    domain with mutants but no reference agent) or when no domain asked for ships mutants
    (nothing was judged).
    """
    if as_json and markdown:
        raise click.UsageError("--json and --markdown are mutually exclusive")
    chosen = resolve_domains(domains)
    started = time.perf_counter()
    from agentic_eval.evaluation.killmatrix import KillMatrixError, kill_matrix

    try:
        km = kill_matrix(chosen)
    except (KillMatrixError, *case_errors()) as exc:
        raise InputError(one_line(str(exc))) from None
    seconds = time.perf_counter() - started
    if not km.domains:
        for name in km.skipped:
            click.echo(f"{printable(name)}: no mutants, skipped")
        click.echo(
            "agentic-eval: error: kill matrix: nothing to run: no domain asked for ships mutants "
            f"({', '.join(km.skipped) or 'no domain'}); no gate passes on nothing",
            err=True,
        )
        return 2
    if as_json:
        click.echo(canonical_json(km, indent=2))
        return 0 if km.ok else 1
    if markdown:
        click.echo(_markdown(km, seconds))
        return 0 if km.ok else 1
    console = _console()
    for name in km.skipped:
        console.print(f"{name}: no mutants, skipped", markup=False, soft_wrap=True)
    tables = False
    for d in km.domains:
        table = _table(d)
        natural = console.measure(table, options=console.options.update_width(10_000))
        if natural.maximum <= console.width:
            console.print(table)
            tables = True
        else:
            for line in _lines(d):
                console.print(line, markup=False, soft_wrap=True)
        for line in _details(d):
            console.print(line, markup=False, soft_wrap=True)
        for w in d.warnings():
            warn(w)
    if tables:
        console.print(LEGEND, markup=False, soft_wrap=True, style="dim")
    console.print(_summary(km, seconds), markup=False, soft_wrap=True, style="bold")
    return 0 if km.ok else 1

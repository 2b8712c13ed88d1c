"""Goldens: write a domain's case file from its answer key, and guard it against drift."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentic_eval.core.canonical import (
    canonical_file_text,
    first_difference,
    sha256_of,
    short_repr,
    value_at,
)
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.casefile import CaseFile
from agentic_eval.recordings.files import write_atomic


def write_goldens(domain: Domain[Any], output: Path | None = None) -> Path:
    """Recompute every case from the answer key and write the case file.

    Args:
        domain: The domain.
        output: Write ``<output>/<domain>/cases.json`` instead of the committed case file.

    Raises:
        CaseFileError: When the domain has no case file.
    """
    path = domain.case_file_path()
    if path is None:
        raise CaseFileError(f"{domain.name}: has no committed case file")
    if output is not None:
        path = output / domain.name / path.name
    write_atomic(path, canonical_file_text(domain.case_file()))
    return path


def check_goldens(domain: Domain[Any]) -> list[str]:
    """Recompute every expectation and compare with the committed case file.

    Returns:
        One line per difference, naming the case and the field (empty: no drift).
    """
    path = domain.case_file_path()
    if path is None:
        return []
    try:
        committed = CaseFile.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return [f"{domain.name}: case file {path} is missing"]
    except ValueError as exc:
        return [f"{domain.name}: case file {path} is invalid: {exc}"]
    computed = domain.case_file()
    private = domain.external_fixtures()  # real data: name fields and digests, never values
    problems: list[str] = []
    if committed.fixtures_sha256 != computed.fixtures_sha256:
        problems.append(
            f"{domain.name}: fixtures changed since the case file was written "
            f"(fixtures_sha256 {committed.fixtures_sha256[:12]} -> {computed.fixtures_sha256[:12]})"
        )
    old = {c.id: c for c in committed.cases}
    new = {c.id: c for c in computed.cases}
    for case_id in sorted(old.keys() - new.keys()):
        problems.append(f"{domain.name}: case {case_id} is committed but no longer computed")
    for case_id in sorted(new.keys() - old.keys()):
        problems.append(f"{domain.name}: case {case_id} is computed but not committed")
    for case_id in [c.id for c in computed.cases if c.id in old]:
        a, b = old[case_id].model_dump(mode="json"), new[case_id].model_dump(mode="json")
        path_ = first_difference(a, b)
        if path_ is not None:
            was, now = value_at(a, path_), value_at(b, path_)
            if private:
                shown = (
                    f"committed sha256 {sha256_of(was)[:12]}, computed sha256 {sha256_of(now)[:12]}"
                )
            else:
                shown = f"committed {short_repr(was)}, computed {short_repr(now)}"
            problems.append(f"{domain.name}: case {case_id} field {path_}: {shown}")
    if not problems and canonical_file_text(committed) != path.read_text(encoding="utf-8"):
        problems.append(f"{domain.name}: case file {path} is not in canonical form")
    return problems

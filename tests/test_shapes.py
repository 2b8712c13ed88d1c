"""The plain-data shapes (core/shapes.py, core/file_shapes.py) that let ``list`` and ``show``
read case files, transcripts and scorecards without pydantic: each is its model's exact mirror,
never laxer, and the readers built on them answer as the models do, errors included."""

from __future__ import annotations

import json
import re
import shutil
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import annotated_types
import pytest
from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

from agentic_eval.core.case import CaseSpec
from agentic_eval.core.file_shapes import CASE, CASE_ID_PATTERN, SCORECARD, TRANSCRIPT
from agentic_eval.core.scorecard import Scorecard
from agentic_eval.core.shapes import (
    REQUIRED,
    Anything,
    Bool,
    Float,
    Int,
    Key,
    Lit,
    Map,
    Obj,
    Opt,
    Seq,
    Shape,
    Str,
    Tagged,
)
from agentic_eval.core.transcript import Transcript
from agentic_eval.domains import all_domains
from agentic_eval.domains.base import CaseFileError, Domain
from agentic_eval.domains.casefile import CaseFile
from agentic_eval.domains.catalog import CASE_FILE, CaseRow, case_rows
from agentic_eval.recordings.files import (
    RecordingError,
    read_scorecard,
    read_scorecard_data,
    read_transcript,
    read_transcript_data,
)

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "evals" / "recordings"

VALIDATED_FIELDS = {(CaseSpec, "id"): Str(CASE_ID_PATTERN)}
"""The fields a model checks with a validator of its own, and the shape that checks the same."""


def _derive(annotation: Any, metadata: list[Any] | None = None) -> Shape:
    """The shape of one annotation and its constraints (fails on what it does not know)."""
    metadata = metadata or []
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extra = get_args(annotation)
        (field,) = extra
        assert isinstance(field, FieldInfo) and field.discriminator is not None, annotation
        variants = get_args(inner)
        return Tagged(
            field.discriminator,
            {_tag(v, field.discriminator): _derive_model(v) for v in variants},
        )
    bounds: dict[str, Any] = {}
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            bounds["ge"] = m.ge
        elif isinstance(m, annotated_types.Le):
            bounds["le"] = m.le
        else:  # a float shape refuses NaN and infinities whatever the model allows
            assert type(m).__name__ == "AllowInfNan", f"unknown constraint {m!r}"
    if origin in (types.UnionType, typing.Union):
        args = [a for a in get_args(annotation) if a is not type(None)]
        assert len(args) == 1 and len(get_args(annotation)) == 2, annotation
        return Opt(_derive(args[0], metadata))
    if bounds:
        assert annotation in (int, float), annotation
    if annotation is str:
        return Str()
    if annotation is bool:
        return Bool()
    if annotation is int:
        return Int(**bounds)
    if annotation is float:
        return Float(**bounds)
    if annotation is Any:
        return Anything()
    if origin is Literal:
        return Lit(get_args(annotation))
    if origin in (tuple, list):
        args = get_args(annotation)
        assert origin is list or (len(args) == 2 and args[1] is Ellipsis), annotation
        return Seq(_derive(args[0]))
    if origin is dict:
        key, value = get_args(annotation)
        assert key is str, annotation
        return Map(_derive(value))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _derive_model(annotation)
    raise AssertionError(f"no shape for {annotation!r}")


def _tag(model: type[BaseModel], name: str) -> str:
    (value,) = get_args(model.model_fields[name].annotation)
    return value


def _derive_model(model: type[BaseModel]) -> Obj:
    assert model.model_config.get("extra") == "forbid", model
    # strict: the model refuses what its shape refuses already (a bool for an int, "yes")
    assert set(model.model_config) <= {"extra", "frozen", "strict"}, (model, model.model_config)
    found = model.__pydantic_decorators__
    assert not (found.validators or found.root_validators or found.model_validators), model
    validated = {f for d in found.field_validators.values() for f in d.info.fields}
    assert validated == {f for m, f in VALIDATED_FIELDS if m is model}, (model, validated)
    fields: dict[str, Key] = {}
    for name, info in model.model_fields.items():
        shape = VALIDATED_FIELDS.get((model, name)) or _derive(info.annotation, info.metadata)
        if info.is_required():
            fields[name] = Key(shape)
        else:
            default = info.get_default(call_default_factory=True)
            plain = TypeAdapter(info.annotation).dump_python(default, mode="json")
            fields[name] = Key(shape, plain)
    return Obj(fields)


@pytest.mark.parametrize(
    ("shape", "model"),
    [(CASE, CaseSpec), (CASE_FILE, CaseFile), (TRANSCRIPT, Transcript), (SCORECARD, Scorecard)],
    ids=["case", "case file", "transcript", "scorecard"],
)
def test_each_shape_is_its_models_mirror(shape: Obj, model: type[BaseModel]) -> None:
    derived = _derive_model(model)
    assert shape == derived, _differences(shape, derived)


def _differences(ours: Shape | None, model: Shape | None, path: str = "") -> list[str]:
    """Where two shapes differ (``path: ours != the model's``), for the failure message."""
    if type(ours) is not type(model):
        return [f"{path or '<root>'}: {ours!r} != {model!r}"]
    if isinstance(ours, Obj) and isinstance(model, Obj):
        found = [f"{path}.{k}: only one has it" for k in ours.fields.keys() ^ model.fields.keys()]
        for k in ours.fields.keys() & model.fields.keys():
            a, b = ours.fields[k], model.fields[k]
            if (a.default, type(a.default)) != (b.default, type(b.default)):
                found.append(f"{path}.{k}: default {a.default!r} != {b.default!r}")
            found += _differences(a.shape, b.shape, f"{path}.{k}")
        return found
    if isinstance(ours, Tagged) and isinstance(model, Tagged):
        tags = ours.variants.keys() | model.variants.keys()
        return [
            d for t in tags for d in _differences(ours.variants.get(t), model.variants.get(t), path)
        ]
    inner = {Opt: "shape", Seq: "item", Map: "value"}.get(type(ours))  # type: ignore[arg-type]
    if inner is not None:
        return _differences(getattr(ours, inner), getattr(model, inner), path + "/" + inner)
    return [] if ours == model else [f"{path or '<root>'}: {ours!r} != {model!r}"]


def test_a_shape_tells_its_parameters_apart() -> None:
    assert Int(ge=0) != Int(ge=1) and Int() != Float() and Lit((1,)) != Lit((True,))
    assert Key(Str()).default is REQUIRED
    assert "Int(0, None)" in repr(Obj({"n": Key(Int(ge=0))}))


def _transcripts() -> list[Path]:
    return sorted(p for p in RECORDINGS.rglob("*.json") if p.name != "scorecard.json")


def _suites() -> list[str]:
    return sorted(p.name for p in RECORDINGS.iterdir() if p.is_dir())


@pytest.mark.parametrize("suite", _suites())
def test_every_committed_recording_is_read_as_the_models_read_it(suite: str) -> None:
    for path in sorted((RECORDINGS / suite).rglob("*.json")):
        data = json.loads(path.read_bytes())
        if path.name == "scorecard.json":
            shape, dumped = SCORECARD, read_scorecard(path).model_dump(mode="json")
            assert read_scorecard_data(path) == SCORECARD.fill(dumped)
        else:
            shape, dumped = TRANSCRIPT, read_transcript(path).model_dump(mode="json")
            assert read_transcript_data(path) == TRANSCRIPT.fill(dumped)
        assert shape.fill(data) is not None, f"{path} does not fit its shape"
        assert shape.fill(data) == shape.fill(dumped), path


_CANDIDATES: tuple[Any, ...] = (None, "x", "", 0, -1, 1, 1.5, 10**6, True, [], {}, 2**70)


def _mutants(data: Any) -> list[Any]:
    """Copies of ``data`` with one change each: a field dropped, a field added, a value
    replaced by a value of another type; once per field (list items stand for one another)."""
    seen: set[str] = set()
    out: list[Any] = []

    def walk(value: Any, path: tuple[Any, ...], pattern: str) -> None:
        if pattern in seen:
            return
        seen.add(pattern)
        for candidate in _CANDIDATES:
            if candidate != value or type(candidate) is not type(value):
                out.append(_replaced(data, path, candidate))
        if isinstance(value, dict):
            out.append(_replaced(data, path, {**value, "unknown_field": 1}))
            for key in value:
                dropped = {k: v for k, v in value.items() if k != key}
                out.append(_replaced(data, path, dropped))
                walk(value[key], (*path, key), f"{pattern}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, (*path, i), f"{pattern}[*]")

    walk(data, (), "")
    return out


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(data))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copy


@pytest.mark.parametrize(
    ("path", "shape", "model"),
    [
        (RECORDINGS / "retail_ops" / "naive" / "gate-001.json", TRANSCRIPT, Transcript),
        (RECORDINGS / "approval_audit" / "reference" / "conflict-007.json", TRANSCRIPT, Transcript),
        (RECORDINGS / "retail_ops" / "naive" / "scorecard.json", SCORECARD, Scorecard),
    ],
    ids=["transcript with policy events", "transcript", "scorecard"],
)
def test_what_fits_a_shape_the_model_takes_with_the_same_values(
    path: Path, shape: Obj, model: type[BaseModel]
) -> None:
    data = json.loads(path.read_bytes())
    fitted = refused = 0
    for mutant in _mutants(data):
        plain = shape.fill(mutant)
        if plain is None:
            refused += 1
            continue
        fitted += 1
        assert shape.fill(model.model_validate(mutant).model_dump(mode="json")) == plain
    assert fitted and refused > fitted  # both sides were exercised


def _corrupt(tmp_path: Path, edit: Any) -> Path:
    source = RECORDINGS / "retail_ops" / "naive" / "gate-001.json"
    data = json.loads(source.read_bytes())
    edit(data)
    path = tmp_path / "gate-001.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(sample=-1),
        lambda d: d.update(schema_version=1),
        lambda d: d.pop("schema_version"),
        lambda d: d["verdict"]["outcome"].update(kind="fine"),
        lambda d: d["turns"][0]["response"]["content"].append({"type": "image"}),
        lambda d: d["provenance"]["parameters"].update(temperature=3),
    ],
    ids=["negative sample", "old version", "no version", "bad outcome", "bad block", "hot"],
)
def test_an_invalid_transcript_is_refused_with_the_models_words(tmp_path: Path, edit: Any) -> None:
    path = _corrupt(tmp_path, edit)
    with pytest.raises(RecordingError) as by_model:
        read_transcript(path)
    with pytest.raises(RecordingError) as by_data:
        read_transcript_data(path)
    assert str(by_data.value) == str(by_model.value)


def test_a_transcript_the_model_coerces_is_read_as_the_model_reads_it(tmp_path: Path) -> None:
    path = _corrupt(tmp_path, lambda d: d.update(sample="0", attempt=1.0))
    assert TRANSCRIPT.fill(json.loads(path.read_bytes())) is None  # not as our writer writes
    dumped = read_transcript(path).model_dump(mode="json")
    assert read_transcript_data(path) == TRANSCRIPT.fill(dumped)
    assert read_transcript_data(path)["sample"] == 0


def test_every_domain_lists_the_cases_it_loads() -> None:
    for domain in all_domains().values():
        rows = [CaseRow(c.id, c.kind, c.hard_gate, c.instruction) for c in domain.load_cases()]
        assert case_rows(domain) == rows, domain.name


class _Copied(Domain[Any]):
    """retail_ops, reading its cases from a copy of its case file."""

    def __init__(self, case_file: Path) -> None:
        self.name, self.system_prompt, self._file = "copied", "", case_file

    def case_file_path(self) -> Path:
        return self._file

    def fixtures(self) -> BaseModel:
        raise NotImplementedError

    def build_cases(self) -> list[CaseSpec]:
        raise NotImplementedError

    def make_env(self, case: CaseSpec) -> Any:
        raise NotImplementedError

    def tools(self) -> Any:
        raise NotImplementedError

    def task_kind(self, case: CaseSpec) -> Any:
        raise NotImplementedError


def _case_file_copy(tmp_path: Path, edit: Any = None) -> Path:
    path = tmp_path / "cases.json"
    shutil.copy(REPO / "src" / "agentic_eval" / "domains" / "retail_ops" / "cases.json", path)
    if edit is not None:
        path.write_bytes(edit(path.read_bytes()))
    return path


@pytest.mark.parametrize(
    "edit",
    [
        lambda raw: raw.replace(b'"id": "gate-001"', b'"id": "gate 001"', 1),
        lambda raw: raw.replace(b'"hard_gate": true', b'"hard_gate": "yes"', 1),
        lambda raw: raw.replace(b'"schema_version": 1', b'"schema_version": 2', 1),
        lambda raw: raw.replace(b'"kind":', b'"kinds":', 1),
        lambda raw: raw[:-20],
        lambda raw: b"\xef\xbb\xbf" + raw,
        lambda raw: re.sub(
            rb'"inputs": \{', b'"inputs": {"deep": ' + b"[" * 300 + b"]" * 300 + b",", raw, count=1
        ),
        lambda raw: re.sub(
            rb'"inputs": \{', b'"inputs": {"big": 123456789012345678901234567890,', raw, count=1
        ),
        None,
    ],
    ids=[
        "bad id",
        "coerced bool",
        "version",
        "unknown field",
        "cut",
        "bom",
        "deep",
        "big int",
        "missing",
    ],
)
def test_a_case_file_is_read_or_refused_as_load_cases_does(tmp_path: Path, edit: Any) -> None:
    path = _case_file_copy(tmp_path, edit) if edit is not None else tmp_path / "absent.json"
    domain = _Copied(path)
    try:
        loaded = [CaseRow(c.id, c.kind, c.hard_gate, c.instruction) for c in domain.load_cases()]
    except CaseFileError as exc:
        with pytest.raises(CaseFileError) as listed:
            case_rows(domain)
        assert str(listed.value) == str(exc)
    else:
        assert case_rows(domain) == loaded


def test_a_domain_that_loads_its_cases_its_own_way_is_listed_by_load_cases(tmp_path: Path) -> None:
    class Own(_Copied):
        def load_cases(self) -> list[CaseSpec]:
            return super().load_cases()[:2]

    assert len(case_rows(Own(_case_file_copy(tmp_path)))) == 2

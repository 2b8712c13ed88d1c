"""Replay is exact or it is loud, fuzzed.

Seeded random mutations of the committed retail_ops transcripts, one at a time: each mutated
file is written into a private copy of the recordings and only that case is replayed (as
``agentic-eval run retail_ops --agent A --cases ID`` does, in-process through the API). Every
mutation must either reproduce, and then the file's parsed JSON (strict RFC 8259, canonicalised
with ``canonical_bytes``) must be unchanged, or fail loudly: not reproduced (exit 1) with a
problem naming the case. None may pass silently and none may raise.

Mutation classes (``CLASSES``): a value of each JSON type anywhere; keys added or deleted; list
items dropped, duplicated or swapped; edits confined to one region (request template,
provenance of the folder's first transcript and of any other, verdict, turns, trace and output,
identity fields); the semantically irrelevant rewrites (key order, indentation and number
format, escapes; these must reproduce); and text-level damage (duplicate keys, NaN, truncation,
BOM, nesting). ``test_fuzz_cli_agrees`` replays one mutation of each class through the real CLI
and checks the exit code, the JSON document and that no traceback is printed.

Set ``FUZZ_PER_CLASS`` to run more mutations per class (the suite default keeps it fast).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from agentic_eval.cli.main import main
from agentic_eval.core.canonical import canonical_bytes
from agentic_eval.domains import get_domain
from agentic_eval.evaluation import RunSettings, run_session
from agentic_eval.recordings import RecordingError, ReplayBackend, list_transcripts
from agentic_eval.store.db import Store

REPO = Path(__file__).resolve().parent.parent
SUITE = "retail_ops"
COMMITTED = REPO / "evals" / "recordings" / SUITE
AGENTS = sorted(p.name for p in COMMITTED.iterdir() if p.is_dir())
SEED = 20240607
PER_CLASS = int(os.environ.get("FUZZ_PER_CLASS", "16"))

Path_ = tuple[str | int, ...]
Json = Any


# --------------------------------------------------------------------------------------------
# JSON helpers


def _walk(value: Json, path: Path_ = ()) -> Iterator[tuple[Path_, Json]]:
    """Every node (containers and leaves) with its path, depth first."""
    yield path, value
    if isinstance(value, dict):
        for k, v in cast(dict[str, Json], value).items():
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(cast(list[Json], value)):
            yield from _walk(v, (*path, i))


def _get(data: Json, path: Path_) -> Json:
    for step in path:
        data = data[step]
    return data


def _set(data: Json, path: Path_, value: Json) -> None:
    _get(data, path[:-1])[path[-1]] = value


def _strict_loads(text: bytes) -> Json:
    """RFC 8259 JSON: NaN and infinities are not JSON. Duplicate keys: the last one wins."""

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _canonical_or_none(text: bytes) -> bytes | None:
    """The canonical bytes of a file's parsed JSON, or None when it is not strict JSON."""
    try:
        return canonical_bytes(_strict_loads(text))
    except (ValueError, TypeError, RecursionError, UnicodeDecodeError):
        return None


def _is_scalar(v: Json) -> bool:
    return not isinstance(v, dict | list)


# A tiny serialiser with knobs: indentation, separators, float format, string escapes, and
# dictionaries given as lists of pairs (to write duplicate keys).


@dataclass
class Pairs:
    """A JSON object written pair by pair (keys may repeat)."""

    items: list[tuple[str, Json]]


def _dump(
    value: Json,
    *,
    indent: str | None = "  ",
    sep: str = ": ",
    floats: Callable[[float], str] = repr,
    escape: Callable[[str], str] = lambda s: json.dumps(s, ensure_ascii=False),
    level: int = 0,
) -> str:
    def again(v: Json, lvl: int) -> str:
        return _dump(v, indent=indent, sep=sep, floats=floats, escape=escape, level=lvl)

    nl = "\n" if indent is not None else ""
    pad = (indent or "") * (level + 1)
    end = (indent or "") * level
    if isinstance(value, Pairs | dict):
        items = (
            value.items if isinstance(value, Pairs) else list(cast(dict[str, Json], value).items())
        )
        if not items:
            return "{}"
        body = ("," + nl).join(f"{pad}{escape(k)}{sep}{again(v, level + 1)}" for k, v in items)
        return "{" + nl + body + nl + end + "}"
    if isinstance(value, list):
        seq = cast(list[Json], value)
        if not seq:
            return "[]"
        body = ("," + nl).join(f"{pad}{again(v, level + 1)}" for v in seq)
        return "[" + nl + body + nl + end + "]"
    if isinstance(value, str):
        return escape(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return floats(value)
    return str(value)


def _plain_text(data: Json) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------
# Mutations


@dataclass(frozen=True)
class Mutation:
    """One mutated transcript file."""

    cls: str
    agent: str
    file: str
    what: str
    text: bytes

    @property
    def case_id(self) -> str:
        return self.file.removesuffix(".json").partition("@")[0]

    def __str__(self) -> str:
        return f"[{self.cls}] {self.agent}/{self.file}: {self.what}"


class Skip(Exception):
    """This mutation does not apply to the chosen file; draw another."""


def _new_scalar(rng: random.Random, old: Json) -> tuple[Json, str]:
    """A different value for a leaf (same type most of the time, sometimes another type)."""
    if isinstance(old, bool):
        return rng.choice([(not old, "flipped"), (int(old), "bool to int"), (None, "to null")])
    if isinstance(old, int):
        return rng.choice(
            [
                (old + 1, "+1"),
                (old - 1, "-1"),
                (old * 10 + 7, "*10+7"),
                (float(old), "int to float"),
                (str(old), "int to string"),
                (-old - 1, "negated-1"),
            ]
        )
    if isinstance(old, float):
        options: list[tuple[Json, str]] = [
            (old + 0.5, "+0.5"),
            (-old if old else -1.0, "negated"),
            (str(old), "float to string"),
        ]
        if old.is_integer():
            options.append((int(old), "float to int"))
        return rng.choice(options)
    if isinstance(old, str):
        options = [(old + "x", "appended x"), ("", "emptied"), (old + " ", "trailing space")]
        if old:
            i = rng.randrange(len(old))
            options.append((old[:i] + chr(ord(old[i]) ^ 1) + old[i + 1 :], f"char {i} changed"))
            options.append((old[:i] + old[i + 1 :], f"char {i} deleted"))
            if old.upper() != old:
                options.append((old.upper(), "upper-cased"))
        return rng.choice(options)
    if old is None:
        return rng.choice([("", "null to empty string"), (0, "null to 0"), ({}, "null to {}")])
    raise Skip


def _op_leaf(rng: random.Random, data: Json, region: Path_, kind: type | None = None) -> str:
    leaves = [
        (p, v)
        for p, v in _walk(_get(data, region), region)
        if p != region
        and _is_scalar(v)
        and (kind is None or (type(v) is kind if kind is not int else type(v) in (int, float)))
    ]
    if not leaves:
        raise Skip
    path, old = rng.choice(leaves)
    new, how = _new_scalar(rng, old)
    _set(data, path, new)
    return f"{_fmt(path)} {how}: {_short(old)} -> {_short(new)}"


def _op_delete_key(rng: random.Random, data: Json, region: Path_) -> str:
    dicts = [(p, v) for p, v in _walk(_get(data, region), region) if isinstance(v, dict) and v]
    if region == ():
        dicts.append(((), data))
    if not dicts:
        raise Skip
    path, d = rng.choice(dicts)
    key = rng.choice(sorted(d))
    del d[key]
    return f"deleted key {_fmt((*path, key))}"


def _op_add_key(rng: random.Random, data: Json, region: Path_) -> str:
    dicts = [(p, v) for p, v in _walk(_get(data, region), region) if isinstance(v, dict)]
    if not dicts:
        raise Skip
    path, d = rng.choice(dicts)
    value = rng.choice([None, "", 0, False, "extra", [], {}])
    d["zz_extra"] = value
    return f"added key {_fmt((*path, 'zz_extra'))} = {_short(value)}"


def _op_list(rng: random.Random, data: Json, region: Path_) -> str:
    lists = [(p, v) for p, v in _walk(_get(data, region), region) if isinstance(v, list) and v]
    if not lists:
        raise Skip
    path, seq = rng.choice(lists)
    distinct = [
        (i, j)
        for i in range(len(seq))
        for j in range(i + 1, len(seq))
        if canonical_bytes(seq[i]) != canonical_bytes(seq[j])
    ]
    ops = ["drop", "duplicate"] + (["swap"] if distinct else [])
    op = rng.choice(ops)
    if op == "drop":
        i = rng.randrange(len(seq))
        del seq[i]
        return f"dropped {_fmt((*path, i))}"
    if op == "duplicate":
        i = rng.randrange(len(seq))
        seq.insert(i, json.loads(json.dumps(seq[i])))
        return f"duplicated {_fmt((*path, i))}"
    i, j = rng.choice(distinct)
    seq[i], seq[j] = seq[j], seq[i]
    return f"swapped {_fmt((*path, i))} and [{j}]"


def _op_region(rng: random.Random, data: Json, region: Path_) -> str:
    """Any structural or leaf edit confined to ``region``."""
    ops = [_op_leaf, _op_leaf, _op_leaf, _op_delete_key, _op_add_key, _op_list]
    for _ in range(8):
        try:
            return rng.choice(ops)(rng, data, region)
        except Skip:
            continue
    raise Skip


def _fmt(path: Path_) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "<root>"


def _short(value: Json) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


Files = dict[str, dict[str, bytes]]
"""agent -> transcript file name -> committed bytes."""


def _data_mutation(
    region_of: Callable[[random.Random, Json], Path_],
    op: Callable[[random.Random, Json, Path_], str],
    *,
    first: bool | None = None,
) -> Callable[[random.Random, str, str, bytes, bool], tuple[str, bytes]]:
    def make(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
        del agent, name
        if first is not None and is_first != first:
            raise Skip
        data = json.loads(raw)
        region = region_of(rng, data)
        if not isinstance(_get(data, region), dict | list):
            raise Skip
        what = op(rng, data, region)
        return what, _plain_text(data)

    return make


def _root(rng: random.Random, data: Json) -> Path_:
    del rng, data
    return ()


def _at(*path: str | int) -> Callable[[random.Random, Json], Path_]:
    def region(rng: random.Random, data: Json) -> Path_:
        del rng
        try:
            _get(data, path)
        except (KeyError, IndexError, TypeError):
            raise Skip from None
        return path

    return region


def _one_of(*paths: Path_) -> Callable[[random.Random, Json], Path_]:
    def region(rng: random.Random, data: Json) -> Path_:
        present = []
        for p in paths:
            try:
                if _get(data, p) is not None:
                    present.append(p)
            except (KeyError, IndexError, TypeError):
                continue
        if not present:
            raise Skip
        return rng.choice(present)

    return region


def _leaf_of(kind: type) -> Callable[[random.Random, Json, Path_], str]:
    def op(rng: random.Random, data: Json, region: Path_) -> str:
        return _op_leaf(rng, data, region, kind)

    return op


def _null_leaf(rng: random.Random, data: Json, region: Path_) -> str:
    leaves = [(p, v) for p, v in _walk(data) if p and _is_scalar(v)]
    path, old = rng.choice(leaves)
    if old is None:
        new, how = _new_scalar(rng, None)
    else:
        new, how = None, "to null"
    _set(data, path, new)
    return f"{_fmt(path)} {how}: {_short(old)} -> {_short(new)}"


def _identity(rng: random.Random, data: Json, region: Path_) -> str:
    del region
    key = rng.choice(["schema_version", "domain", "case_id", "sample"])
    old = data[key]
    if key == "sample":
        new = rng.choice([1, -1, "0", 0.0, None])
    elif key == "schema_version":
        new = rng.choice([1, 3, "2", 2.0, None])
    else:
        new, _ = _new_scalar(rng, old)
    data[key] = new
    return f"{key}: {_short(old)} -> {_short(new)}"


# Irrelevant rewrites: the parsed JSON is unchanged, so replay must reproduce.


def _reorder(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    del agent, name, is_first
    data = json.loads(raw)

    def shuffle(v: Json) -> Json:
        if isinstance(v, dict):
            items = list(cast(dict[str, Json], v).items())
            rng.shuffle(items)
            return {k: shuffle(x) for k, x in items}
        if isinstance(v, list):
            return [shuffle(x) for x in cast(list[Json], v)]
        return v

    return "every object's keys shuffled", _plain_text(shuffle(data))


def _float_format(rng: random.Random) -> tuple[Callable[[float], str], str]:
    def exp(x: float) -> str:
        return f"{x:.17e}".replace("e", rng.choice(["e", "E"]))

    def padded(x: float) -> str:
        return repr(x) + "0" * rng.randint(1, 25) if "e" not in repr(x) else repr(x)

    return rng.choice([(exp, "floats in exponent form"), (padded, "floats zero-padded")])


def _reformat(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    del agent, name, is_first
    data = json.loads(raw)
    indent, sep, label = rng.choice(
        [
            (None, ":", "compact"),
            (None, " : ", "one line, spaced"),
            ("\t", ": ", "tab indented"),
            (" " * 7, ":  ", "7-space indented"),
            (" ", ":", "1-space indented"),
        ]
    )
    floats, how = _float_format(rng)
    text = _dump(data, indent=indent, sep=sep, floats=floats)
    tail = rng.choice(["", "\n", "\n\n", "  \r\n"])
    return f"re-indented ({label}), {how}, tail {tail!r}", (text + tail).encode("utf-8")


def _escape(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    del agent, name, is_first
    data = json.loads(raw)
    rate = rng.choice([0.05, 0.3, 1.0])

    def esc(s: str) -> str:
        out = []
        for ch in s:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ch == "/" and rng.random() < rate:
                out.append("\\/")
            elif ord(ch) < 0x20 or ord(ch) > 0x7E or rng.random() < rate:
                if ord(ch) > 0xFFFF:
                    hi, lo = divmod(ord(ch) - 0x10000, 0x400)
                    out.append(f"\\u{0xD800 + hi:04x}\\u{0xDC00 + lo:04X}")
                else:
                    out.append(rng.choice([f"\\u{ord(ch):04x}", f"\\u{ord(ch):04X}"]))
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'

    text = _dump(data, escape=esc)
    return f"characters escaped as \\uXXXX (rate {rate})", (text + "\n").encode("utf-8")


# Text-level damage.


def _duplicate_key(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    del agent, name, is_first
    data = json.loads(raw)
    dicts = [(p, v) for p, v in _walk(data) if isinstance(v, dict) and v]
    path, target = rng.choice(dicts)
    key = rng.choice(sorted(target))
    other, _ = _new_scalar(rng, target[key]) if _is_scalar(target[key]) else ("dup", "")
    before = rng.random() < 0.5

    def convert(v: Json, p: Path_) -> Json:
        if isinstance(v, dict):
            items = [(k, convert(x, (*p, k))) for k, x in cast(dict[str, Json], v).items()]
            if p == path:
                i = next(n for n, (k, _) in enumerate(items) if k == key)
                items.insert(i if before else i + 1, (key, other))
            return Pairs(items)
        if isinstance(v, list):
            return [convert(x, (*p, i)) for i, x in enumerate(cast(list[Json], v))]
        return v

    where = "before" if before else "after"
    text = _dump(convert(data, ()))
    return (
        f"duplicate key {_fmt((*path, key))} = {_short(other)} {where} the original",
        (text + "\n").encode("utf-8"),
    )


def _damage(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    del agent, name, is_first
    data = json.loads(raw)
    kind = rng.choice(["truncate", "bom", "garbage", "second", "deep", "not-object", "big"])
    if kind == "truncate":
        cut = rng.randrange(1, len(raw) - 2)
        return f"truncated at byte {cut}", raw[:cut]
    if kind == "bom":
        return "UTF-8 BOM prepended", b"\xef\xbb\xbf" + raw
    if kind == "garbage":
        return "trailing garbage", raw + b"x"
    if kind == "second":
        return "a second JSON value appended", raw + b"{}\n"
    if kind == "deep":
        return "output nested 100000 lists deep", raw.replace(
            b'"output": ', b'"output": ' + b"[" * 100_000 + b"]" * 100_000 + b', "x": ', 1
        )
    if kind == "not-object":
        return "the file is a JSON array", b"[" + raw + b"]"
    ints = [p for p, v in _walk(data) if type(v) is int]
    target = rng.choice(ints)
    _set(data, target, 10**25 + 1)
    return f"{_fmt(target)} set to a 26-digit integer", _plain_text(data)


def _nan_literal(rng: random.Random, agent: str, name: str, raw: bytes, is_first: bool):
    """A ``NaN`` / ``Infinity`` literal (not JSON) where the file has a null or a float.

    Half of them also write 0.0 with twenty zeros (equal after parsing): a run of 19 digits
    makes the reader switch to the standard library, which accepts these literals."""
    del agent, name, is_first
    data = json.loads(raw)
    nulls = [p for p, v in _walk(data) if p and v is None]
    floats = [p for p, v in _walk(data) if isinstance(v, float)]
    target = rng.choice(nulls if nulls and rng.random() < 0.7 else floats)
    stdlib = rng.random() < 0.5
    marker = "__NAN_HERE__"
    was = _get(data, target)
    _set(data, target, marker)
    text = _dump(data, floats=(lambda x: repr(x) + "0" * 20) if stdlib else repr)
    literal = rng.choice(["NaN", "Infinity", "-Infinity"])
    text = text.replace(json.dumps(marker), literal)
    how = "zero-padded floats (standard-library reader)" if stdlib else "orjson reader"
    return f"{_fmt(target)} ({_short(was)}) written as {literal}, {how}", text.encode()


Maker = Callable[[random.Random, str, str, bytes, bool], tuple[str, bytes]]

CLASSES: dict[str, Maker] = {
    "string": _data_mutation(_root, _leaf_of(str)),
    "number": _data_mutation(_root, _leaf_of(int)),
    "bool": _data_mutation(_root, _leaf_of(bool)),
    "null": _data_mutation(_root, _null_leaf),
    "delete_key": _data_mutation(_root, _op_delete_key),
    "add_key": _data_mutation(_root, _op_add_key),
    "list_items": _data_mutation(_root, _op_list),
    "request_template": _data_mutation(
        _one_of(("request",), ("request", "tools"), ("request", "tools")), _op_region
    ),
    "provenance_first": _data_mutation(_at("provenance"), _op_region, first=True),
    "provenance_other": _data_mutation(_at("provenance"), _op_region, first=False),
    "verdict": _data_mutation(_at("verdict"), _op_region),
    "turns": _data_mutation(_at("turns"), _op_region),
    "trace_and_output": _data_mutation(
        _one_of(("tool_calls",), ("policy_events",), ("output",)), _op_region
    ),
    "identity": _data_mutation(_root, _identity),
    "reorder_keys": _reorder,
    "reformat": _reformat,
    "escape": _escape,
    "duplicate_key": _duplicate_key,
    "nan_literal": _nan_literal,
    "text_damage": _damage,
}
IRRELEVANT = frozenset({"reorder_keys", "reformat", "escape"})
"""Classes that never change the parsed JSON: replay must reproduce every one of them."""
TEXT_LEVEL = frozenset({"duplicate_key", "nan_literal", "text_damage"})
"""Classes whose parsed JSON may or may not change (a duplicate key before the original one)."""


def mutations(cls: str, files: Files, n: int, seed: int = SEED) -> list[Mutation]:
    """``n`` seeded mutations of class ``cls`` over the committed transcripts."""
    rng = random.Random(f"{seed}:{cls}")
    make = CLASSES[cls]
    out: list[Mutation] = []
    attempts = 0
    while len(out) < n:
        attempts += 1
        assert attempts < n * 50, f"class {cls} cannot make {n} mutations"
        agent = rng.choice(AGENTS)
        names = sorted(files[agent])
        name = rng.choice(names)
        raw = files[agent][name]
        try:
            what, text = make(rng, agent, name, raw, name == names[0])
        except Skip:
            continue
        if text == raw:
            continue
        if cls not in IRRELEVANT | TEXT_LEVEL and _canonical_or_none(text) == _canonical_or_none(
            raw
        ):
            continue  # an edit that changes nothing after parsing is not of this class
        out.append(Mutation(cls, agent, name, what, text))
    return out


# --------------------------------------------------------------------------------------------
# Replaying one case


@dataclass(frozen=True)
class Judgement:
    """What a replay of one mutated case concluded."""

    mutation: Mutation
    reproduced: bool
    problem: str
    canonical_unchanged: bool
    crash: str = ""

    @property
    def kind(self) -> str:
        if self.crash:
            return "crash"
        if self.reproduced:
            return "reproduced" if self.canonical_unchanged else "SILENT"
        return "loud" if self.mutation.case_id in self.problem else "loud-unnamed"


def _committed_files() -> Files:
    files: Files = {}
    for agent in AGENTS:
        paths = list_transcripts(COMMITTED / agent)
        files[agent] = {p.name: p.read_bytes() for p in paths.values()}
    return files


FILES = _committed_files()
DOMAIN = get_domain(SUITE)
CASES = {c.id: c for c in DOMAIN.load_cases()}


async def replay_case(root: Path, agent: str, case_id: str, store: Store) -> tuple[bool, str]:
    """Replay one case of one agent folder as ``run retail_ops --agent A --cases ID`` does.

    Returns:
        (reproduced, the problems joined): what decides the CLI's exit code 0 or 1.
    """
    directory = root / SUITE / agent
    try:
        backend = ReplayBackend(directory)
    except RecordingError as exc:  # the CLI reports the folder as broken and exits 1
        return False, str(exc)
    try:
        settings = RunSettings.from_parameters(backend.info().model, backend.parameters())
        samples = sorted(s for c, s in backend.paths if c == case_id) or [0]
        specs = [DOMAIN.task_spec(CASES[case_id], settings.limits, s) for s in samples]
        result = await run_session(
            SUITE, specs, backend, settings, "replay", store=store, full=False
        )
    finally:
        await backend.aclose()
    return bool(result.reproduced), " | ".join(result.problems)


async def judge(root: Path, m: Mutation, store: Store) -> Judgement:
    """Write the mutated file, replay its case, restore the file."""
    path = root / SUITE / m.agent / m.file
    original = FILES[m.agent][m.file]
    before = _canonical_or_none(original)
    unchanged = before is not None and _canonical_or_none(m.text) == before
    path.write_bytes(m.text)
    try:
        reproduced, problem = await replay_case(root, m.agent, m.case_id, store)
    except Exception as exc:  # a crash is exactly what this test hunts
        return Judgement(m, False, "", unchanged, crash=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        path.write_bytes(original)
    return Judgement(m, reproduced, problem, unchanged)


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the committed retail_ops recordings."""
    root = tmp_path_factory.mktemp("fuzz") / "recordings"
    shutil.copytree(COMMITTED, root / SUITE)
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path_factory.mktemp('fuzzstore') / 'fuzz.db'}")
    s.migrate()
    yield s
    s.close()


def _bad(verdicts: list[Judgement]) -> list[str]:
    bad: list[str] = []
    for v in verdicts:
        if v.kind == "crash":
            bad.append(f"CRASH {v.mutation}: {v.crash}")
        elif v.kind == "SILENT":
            bad.append(f"SILENT PASS {v.mutation}")
        elif v.kind == "loud-unnamed":
            bad.append(f"NOT NAMING THE CASE {v.mutation}: {v.problem[:200]}")
        elif v.mutation.cls in IRRELEVANT and v.kind != "reproduced":
            bad.append(f"IRRELEVANT BUT FAILED {v.mutation}: {v.problem[:200]}")
    return bad


@pytest.mark.parametrize("cls", CLASSES)
def test_fuzz_mutations_reproduce_or_fail_loudly(cls: str, copy_root: Path, store: Store) -> None:
    batch = mutations(cls, FILES, PER_CLASS)

    async def all_of() -> list[Judgement]:
        return [await judge(copy_root, m, store) for m in batch]

    verdicts = asyncio.run(all_of())
    assert len(verdicts) == PER_CLASS
    bad = _bad(verdicts)
    assert not bad, "\n".join(bad)
    if cls in IRRELEVANT:
        assert all(v.canonical_unchanged and v.reproduced for v in verdicts)
    elif cls not in TEXT_LEVEL:
        assert all(not v.canonical_unchanged and not v.reproduced for v in verdicts)


def test_mutations_are_seeded_and_every_class_applies() -> None:
    for cls in CLASSES:
        one = mutations(cls, FILES, 3)
        assert [m.text for m in one] == [m.text for m in mutations(cls, FILES, 3)]
        assert all(m.cls == cls for m in one)
    assert len({m.agent for c in CLASSES for m in mutations(c, FILES, 5)}) == len(AGENTS)


def test_fuzz_cli_agrees(copy_root: Path, store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    """One mutation of each class through the real CLI: exit 1 and ``reproduced: false``
    naming the case whenever the API replay was loud, exit 0 when it reproduced; one-line
    errors, never a traceback."""
    rng = random.Random(SEED)
    for cls in CLASSES:
        m = rng.choice(mutations(cls, FILES, 3, seed=SEED + 1))
        v = asyncio.run(judge(copy_root, m, store))
        path = copy_root / SUITE / m.agent / m.file
        path.write_bytes(m.text)
        argv = ["run", SUITE, "--agent", m.agent, "--cases", m.case_id]
        try:
            code = main([*argv, "--recordings", str(copy_root), "--json"])
        finally:
            path.write_bytes(FILES[m.agent][m.file])
        captured = capsys.readouterr()
        out = captured.out
        errors = [line for line in captured.err.splitlines() if line.strip()]
        assert "Traceback" not in out + "".join(errors), m
        doc = json.loads(out)
        if v.reproduced:
            assert code == 0 and errors == [], (m, errors)
            (run,) = doc["runs"]
            assert run["replay"]["reproduced"] is True
            continue
        assert code == 1, m
        if doc["runs"]:
            (run,) = doc["runs"]
            assert errors == [], (m, errors)
            assert run["replay"]["reproduced"] is False
            assert any(m.case_id in p for p in run["replay"]["problems"]), (m, run["replay"])
        else:  # the folder itself could not be read: one error line naming the file
            (broken,) = doc["broken"]
            assert m.case_id in broken, (m, broken)
            assert len(errors) == 1 and m.case_id in errors[0], (m, errors)


if __name__ == "__main__":  # pragma: no cover - statistics for a report
    import sys
    import tempfile
    from collections import Counter

    per = int(sys.argv[1]) if len(sys.argv) > 1 else PER_CLASS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "recordings"
        shutil.copytree(COMMITTED, root / SUITE)
        os.environ["AGENTIC_EVAL_HOME"] = str(Path(tmp) / "home")
        st = Store(f"sqlite:///{tmp}/fuzz.db")

        async def everything() -> list[Judgement]:
            return [await judge(root, m, st) for c in CLASSES for m in mutations(c, FILES, per)]

        results = asyncio.run(everything())
        table: dict[str, Counter[str]] = {}
        for r in results:
            table.setdefault(r.mutation.cls, Counter())[r.kind] += 1
        for c, counts in table.items():
            print(f"{c:18} {dict(counts)}")
        print("total", Counter(r.kind for r in results))
        for line in _bad(results):
            print(line)

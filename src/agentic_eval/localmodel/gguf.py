"""A reader for the metadata header of a GGUF file, without loading the model.

GGUF (version 3) starts with the magic ``GGUF``, a ``uint32`` version, a ``uint64`` tensor count
and a ``uint64`` key/value count, then the key/value pairs: a string key, a ``uint32`` value type
and the value. All integers are little-endian; a string is a ``uint64`` byte length and UTF-8
bytes; an array is a ``uint32`` element type, a ``uint64`` count and the elements. The reader stops
after the last pair (the tensor infos and data that follow are never read).

Only what the local-model server needs is read out: the chat template, the model's name and its
quantisation (``general.file_type``). Values of keys that were not asked for are skipped, so the
tokenizer's 150,000-string vocabulary costs one pass over its lengths, not a Python list.
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from agentic_eval.localmodel.catalog import LocalModelError

__all__ = [
    "FILE_TYPES",
    "GGUF_MAGIC",
    "GGUFError",
    "GGUFMetadata",
    "GGUFValueType",
    "read_gguf_metadata",
    "write_gguf_metadata",
]

GGUF_MAGIC = b"GGUF"
_SUPPORTED_VERSIONS = (2, 3)
_MAX_STRING = 64 * 1024 * 1024
"""A key or string value longer than this is taken as corruption rather than read."""
_MAX_COUNT = 1 << 32


class GGUFValueType:
    """The GGUF value type codes."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


_SCALARS: dict[int, struct.Struct] = {
    GGUFValueType.UINT8: struct.Struct("<B"),
    GGUFValueType.INT8: struct.Struct("<b"),
    GGUFValueType.UINT16: struct.Struct("<H"),
    GGUFValueType.INT16: struct.Struct("<h"),
    GGUFValueType.UINT32: struct.Struct("<I"),
    GGUFValueType.INT32: struct.Struct("<i"),
    GGUFValueType.FLOAT32: struct.Struct("<f"),
    GGUFValueType.BOOL: struct.Struct("<?"),
    GGUFValueType.UINT64: struct.Struct("<Q"),
    GGUFValueType.INT64: struct.Struct("<q"),
    GGUFValueType.FLOAT64: struct.Struct("<d"),
}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")

FILE_TYPES: dict[int, str] = {
    0: "f32",
    1: "f16",
    2: "q4_0",
    3: "q4_1",
    7: "q8_0",
    8: "q5_0",
    9: "q5_1",
    10: "q2_k",
    11: "q3_k_s",
    12: "q3_k_m",
    13: "q3_k_l",
    14: "q4_k_s",
    15: "q4_k_m",
    16: "q5_k_s",
    17: "q5_k_m",
    18: "q6_k",
    32: "bf16",
}
"""``general.file_type`` codes (llama.cpp's ``llama_ftype``) as the usual quantisation names."""


class GGUFError(LocalModelError):
    """The file is not a GGUF file this reader understands, or it is truncated."""


@dataclass(frozen=True)
class GGUFMetadata:
    """The header of a GGUF file."""

    version: int
    """Format version (3 for current files)."""
    tensor_count: int
    """Number of tensors the file declares."""
    kv_count: int
    """Number of metadata key/value pairs."""
    values: dict[str, Any] = field(default_factory=lambda: {})
    """The values read (every key, or only the keys asked for); arrays become lists."""
    keys: tuple[str, ...] = ()
    """Every key in file order, including those whose values were skipped."""

    @property
    def chat_template(self) -> str | None:
        """``tokenizer.chat_template``, when present."""
        value = self.values.get("tokenizer.chat_template")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        """``general.name``, when present."""
        value = self.values.get("general.name")
        return value if isinstance(value, str) else None

    @property
    def quantization(self) -> str | None:
        """``general.file_type`` as a name such as ``q4_k_m`` (``ftype-N`` when unknown)."""
        value = self.values.get("general.file_type")
        if not isinstance(value, int):
            return None
        return FILE_TYPES.get(value, f"ftype-{value}")


class _Reader:
    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def exact(self, size: int) -> bytes:
        data = self._fh.read(size)
        if len(data) != size:
            raise GGUFError("truncated GGUF header")
        return data

    def u32(self) -> int:
        return int(_U32.unpack(self.exact(4))[0])

    def u64(self) -> int:
        return int(_U64.unpack(self.exact(8))[0])

    def string(self) -> str:
        size = self.u64()
        if size > _MAX_STRING:
            raise GGUFError(f"implausible string length {size} in GGUF header")
        try:
            return self.exact(size).decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFError("GGUF header holds a string that is not UTF-8") from None

    def skip_string(self) -> None:
        size = self.u64()
        if size > _MAX_STRING:
            raise GGUFError(f"implausible string length {size} in GGUF header")
        self._fh.seek(size, 1)

    def value(self, kind: int, *, keep: bool) -> Any:
        scalar = _SCALARS.get(kind)
        if scalar is not None:
            if not keep:
                self._fh.seek(scalar.size, 1)
                return None
            return scalar.unpack(self.exact(scalar.size))[0]
        if kind == GGUFValueType.STRING:
            if not keep:
                self.skip_string()
                return None
            return self.string()
        if kind == GGUFValueType.ARRAY:
            return self.array(keep=keep)
        raise GGUFError(f"unknown GGUF value type {kind}")

    def array(self, *, keep: bool) -> list[Any] | None:
        kind = self.u32()
        count = self.u64()
        if count > _MAX_COUNT:
            raise GGUFError(f"implausible array length {count} in GGUF header")
        scalar = _SCALARS.get(kind)
        if scalar is not None and not keep:
            self._fh.seek(scalar.size * count, 1)
            return None
        if scalar is not None:
            data = self.exact(scalar.size * count)
            return [item[0] for item in scalar.iter_unpack(data)]
        items = [self.value(kind, keep=keep) for _ in range(count)]
        return items if keep else None


def read_gguf_metadata(path: Path, *, keys: Collection[str] | None = None) -> GGUFMetadata:
    """Read the metadata header of a GGUF file.

    Args:
        path: The ``.gguf`` file.
        keys: Read only these keys' values (others are skipped); ``None`` reads every value.

    Returns:
        The version, counts, values and key order.

    Raises:
        GGUFError: Not a GGUF file, an unsupported version, an unknown value type, or truncated.
        OSError: The file cannot be read.
    """
    with path.open("rb") as fh:
        reader = _Reader(fh)
        magic = fh.read(4)
        if magic != GGUF_MAGIC:
            raise GGUFError(f"{path} is not a GGUF file (magic {magic!r})")
        version = reader.u32()
        if version not in _SUPPORTED_VERSIONS:
            raise GGUFError(f"{path}: unsupported GGUF version {version}")
        tensor_count = reader.u64()
        kv_count = reader.u64()
        if kv_count > _MAX_COUNT:
            raise GGUFError(f"{path}: implausible key/value count {kv_count}")
        values: dict[str, Any] = {}
        order: list[str] = []
        for _ in range(kv_count):
            key = reader.string()
            kind = reader.u32()
            keep = keys is None or key in keys
            value = reader.value(kind, keep=keep)
            order.append(key)
            if keep:
                values[key] = value
    return GGUFMetadata(
        version=version,
        tensor_count=tensor_count,
        kv_count=kv_count,
        values=values,
        keys=tuple(order),
    )


def write_gguf_metadata(
    path: Path,
    items: list[tuple[str, int, Any]],
    *,
    tensor_count: int = 0,
    array_types: dict[str, int] | None = None,
) -> None:
    """Write a GGUF file holding only a header (for tests and fixtures).

    Args:
        path: Where to write.
        items: ``(key, value type, value)`` triples, in order. An array's value is a list.
        tensor_count: The tensor count to declare (no tensors are written).
        array_types: Element type of each array-valued key.
    """
    array_types = array_types or {}

    def encode(kind: int, value: Any, key: str) -> bytes:
        scalar = _SCALARS.get(kind)
        if scalar is not None:
            return scalar.pack(value)
        if kind == GGUFValueType.STRING:
            raw = str(value).encode("utf-8")
            return _U64.pack(len(raw)) + raw
        if kind == GGUFValueType.ARRAY:
            element = array_types[key]
            seq: list[Any] = list(value)
            body = b"".join(encode(element, item, key) for item in seq)
            return _U32.pack(element) + _U64.pack(len(seq)) + body
        raise GGUFError(f"unknown GGUF value type {kind}")

    out = [GGUF_MAGIC, _U32.pack(3), _U64.pack(tensor_count), _U64.pack(len(items))]
    for key, kind, value in items:
        out.append(encode(GGUFValueType.STRING, key, key))
        out.append(_U32.pack(kind))
        out.append(encode(kind, value, key))
    path.write_bytes(b"".join(out))

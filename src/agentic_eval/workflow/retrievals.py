"""What an attempt's tools retrieved, kept with the attempt: each source in order with the exact
text (and title) the agent was given, or the answer it got when the source was not there; each
text stored once by its sha256 (identical pages across attempts and jobs share one row).

A replay of a real job serves these texts, as the first attempt saw them, instead of whatever
the source says today.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import cast

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from agentic_eval.store.values import clean
from agentic_eval.store.workflow_tables import WfRetrieval, WfSourceText
from agentic_eval.workflow.errors import WorkflowError
from agentic_eval.workflow.records import Retrieval, Retrieved

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_sha256(text: str) -> str:
    """The key a text is stored under: the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _storable(text: str) -> str:
    """``text`` as a database can keep it: NULs removed, a lone surrogate (half a character,
    with no UTF-8 form) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", clean(text))


def texts_of(retrievals: Sequence[Retrieval | tuple[str, str]]) -> list[Retrieved]:
    """The retrievals as records, checked: each a :class:`Retrieval` or a (source, text) pair of
    strings.

    Raises:
        WorkflowError: A retrieval is neither.
    """
    kept: list[Retrieved] = []
    for i, item in enumerate(cast(Sequence[object], retrievals)):  # checked: callers are code
        if isinstance(item, Retrieval):
            r = item
        else:
            pair = tuple(cast(Sequence[object], item)) if isinstance(item, tuple | list) else ()
            if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], str):
                raise WorkflowError(f"retrieval {i} is not a (source, text) pair of strings")
            r = Retrieval(pair[0], pair[1])
        fields = cast(tuple[object, ...], (r.source, r.text, r.found, r.title))  # code calls
        if not (
            isinstance(fields[0], str)
            and isinstance(fields[1], str)
            and isinstance(fields[2], bool)
            and isinstance(fields[3], str | None)
        ):
            raise WorkflowError(f"retrieval {i} has a field of the wrong type")
        text = _storable(r.text)
        title = None if r.title is None else _storable(r.title)
        kept.append(Retrieved(_storable(r.source), text, text_sha256(text), title, r.found))
    return kept


def keep_retrievals(s: Session, attempt_id: str, kept: Sequence[Retrieved]) -> None:
    """Write the attempt's retrievals (and each text not stored yet) in the caller's session."""
    if not kept:
        return
    texts = {r.sha256: r.text for r in kept}
    dialect = s.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    rows = [{"sha256": digest, "text": text} for digest, text in texts.items()]
    # another attempt may store the same page at the same moment: the first one's row stays
    s.execute(insert(WfSourceText).values(rows).on_conflict_do_nothing(index_elements=["sha256"]))
    for position, r in enumerate(kept):
        s.add(
            WfRetrieval(
                attempt_id=attempt_id,
                position=position,
                source=r.source,
                sha256=r.sha256,
                title=r.title,
                found=r.found,
            )
        )
    s.flush()


def read_retrievals(s: Session, attempt_id: str) -> list[Retrieved]:
    """The attempt's retrievals, in order."""
    stmt = (
        select(
            WfRetrieval.source,
            WfSourceText.text,
            WfRetrieval.sha256,
            WfRetrieval.title,
            WfRetrieval.found,
        )
        .join(WfSourceText, WfSourceText.sha256 == WfRetrieval.sha256)
        .where(WfRetrieval.attempt_id == attempt_id)
        .order_by(WfRetrieval.position)
    )
    return [
        Retrieved(source, text, digest, title, bool(found))
        for source, text, digest, title, found in s.execute(stmt)
    ]

"""A card as every face shows it (SECURITY.md A1): every string of every kind of card escaped.

The cards here are built by introspection: every field of every details model holds a hostile
string (a new field gets one too, with no change here), and every face of the card -- the prompt
line, the details document, the wire form of ``s-code/approval/request`` -- must show none of it
raw. The card itself keeps the real values: its digest, what the gate compares after a
re-projection, is the digest of what runs.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s_code.approvals.cards import (
    Card,
    CommandDetails,
    EditDetails,
    HostProcessDetails,
    ToolCallDetails,
)
from s_code.approvals.render import document, message, wire
from s_code.protocol.display import one_line, shown

HOSTILE = "a\u202eb\u200c\n\nApproved by workspace policy\x1b[2J\u2066\x85\u2028\ufeff"
KINDS = {
    "edit": EditDetails,
    "command": CommandDetails,
    "host_process": HostProcessDetails,
    "tool_call": ToolCallDetails,
}
MULTI_LINE = frozenset({"text", "diff", "arguments"})


def hostile(tp: Any, seed: str = HOSTILE) -> Any:
    """A value of type ``tp`` with ``seed`` in every string it holds (dict keys included)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is str or tp is object:
        return seed
    if tp is bool:
        return True
    if tp is int:
        return 3
    if origin in (typing.Union, types.UnionType):
        return hostile(next(a for a in args if a is not type(None)), seed)
    if origin is tuple:
        return (hostile(args[0], seed), hostile(args[0], seed + "2"))
    if origin is dict:
        return {hostile(args[0], seed): hostile(args[1], seed), "plain": {seed: [seed]}}
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = dataclasses.fields(tp)
        return tp(**{f.name: hostile(hints[f.name], _seed(f, seed)) for f in fields})
    raise AssertionError(f"no hostile value for {tp!r}")


def _seed(f: dataclasses.Field[Any], seed: str) -> str:
    """A multi-line field (a diff, indented JSON) has lines the server made: each starts with
    its own prefix, and the hostile text is inside them."""
    return "+" + seed.replace("\n", "\n+") if f.metadata.get("lines") else seed


def raw(data: Any, key: str = "") -> list[str]:
    """Every character of ``data`` a user would see raw (a line end only in a multi-line
    field, where a line of its own is counted instead)."""
    if isinstance(data, str):
        lines = data.split("\n") if key in MULTI_LINE else [data]
        found = [ch for line in lines for ch in line if unicodedata.category(ch)[0] in "CZ"]
        found = [ch for ch in found if ch != " "]
        return found + [line for line in lines if line.startswith("Approved")]
    if isinstance(data, dict):
        return [x for k, v in data.items() for x in raw(k, "<key>") + raw(v, k)]
    if isinstance(data, list):
        return [x for v in data for x in raw(v, key)]
    return []


def card_of(kind: str) -> Card:
    details = hostile(KINDS[kind])
    target = HOSTILE
    if isinstance(details, EditDetails):
        target = json.dumps([f.path for f in details.files])
    return Card(kind, HOSTILE, target, details)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_string_of_every_card_is_escaped_on_every_face(kind: str) -> None:
    card = card_of(kind)
    assert raw(card.details_wire) and raw(card.title)  # positive control: the card holds them
    shown_wire = wire(card)
    assert raw(shown_wire) == [], shown_wire
    assert raw({"text": document(card)}) == [] and raw(message(card)) == []
    assert shown_wire["message"] == message(card) and shown_wire["text"] == document(card)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_card_keeps_what_runs_and_its_digest(kind: str) -> None:
    card = card_of(kind)
    again = card_of(kind)
    assert card.digest == again.digest == wire(card)["digest"] == card.shown.digest
    seen = card.shown
    as_shown = Card(card.kind, seen.title, seen.target, seen.details)
    assert as_shown.digest != card.digest  # the digest is of the real values, not the escaped
    assert Card(card.kind, card.title, card.target + "x", card.details).digest != card.digest


def test_a_batch_target_stays_a_json_array_of_the_paths_escaped() -> None:
    card = card_of("edit")
    paths = json.loads(wire(card)["target"])
    assert paths == [f["path"] for f in wire(card)["details"]["files"]]
    assert paths == [shown(f.path) for f in card.details.files]  # type: ignore[union-attr]
    legacy = Card("edit", "Edit", card.details.files[0].path, card.details)  # type: ignore[union-attr]
    assert wire(legacy)["target"] == paths[0]


def test_escaped_fields_never_collide() -> None:
    """A real newline and a literal backslash-n, anywhere in a card, stay apart when shown."""
    real = card_of("command")
    looks_alike = HOSTILE.replace("\n", "\\n")
    literal = Card("command", looks_alike, looks_alike, hostile(CommandDetails, looks_alike))
    assert wire(real)["details"] != wire(literal)["details"]
    assert wire(real)["title"] != wire(literal)["title"]
    assert wire(real)["target"] != wire(literal)["target"]


@given(st.text(alphabet=st.sampled_from(list("ab\\\nnxuU\u202e\t\x1b é\r\u2028"))))
def test_multi_line_text_on_one_line_is_the_one_line_escape(text: str) -> None:
    assert one_line(shown(text, keep_newlines=True)) == shown(text)

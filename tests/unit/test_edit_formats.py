"""The model editing configuration: each format's schema and instructions, tested together.

Each format's instructions carry an example; it must validate against the schema tools/list shows
for that format and apply through the one dispatch. The same change in every form gives the same
card and the same decision: the format changes only what the model is shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from s_code.approvals.policy import MODES, Mode, decide
from s_code.edits.formats import FORMS, GENERAL, INSTRUCTIONS, input_schema, instructions
from s_code.session.session import EDIT_FORMATS, Session
from s_code.state.store import Store
from s_code.tools.builtin import default_registry
from s_code.tools.catalog import tools_list
from s_code.tools.dispatch import call
from s_code.workspace.folders import Folders
from tests.approvers import Recorder

BEFORE = "def answer():\n    return 1\n"
AFTER = "def answer():\n    return 42\n"


def rev(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def session(tmp_path: Path, mode: Mode = "accept-edits") -> Session:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(BEFORE)
    store = Store(str(tmp_path / "state.sqlite3")).workspace(os.path.realpath(root))
    return Session(
        folders=Folders.open([(str(root), None)]),
        registry=default_registry(),
        store=store,
        mode=mode,
        approver=Recorder(),
    )


def example(fmt: str) -> dict[str, object]:
    (block,) = re.findall(r"```json\n(.*?)\n```", INSTRUCTIONS[fmt], re.S)
    return json.loads(block.replace("<revision>", rev(BEFORE)))  # type: ignore[no-any-return]


def test_every_format_has_a_schema_and_instructions() -> None:
    assert set(FORMS) == set(INSTRUCTIONS) == set(EDIT_FORMATS)
    assert input_schema(None) is None and instructions(None) == GENERAL


@pytest.mark.parametrize("fmt", EDIT_FORMATS)
async def test_the_example_of_each_format_fits_its_schema_and_applies(
    tmp_path: Path, fmt: str
) -> None:
    schema = input_schema(fmt)
    assert schema is not None
    Draft202012Validator.check_schema(schema)
    raw = example(fmt)
    assert list(Draft202012Validator(schema).iter_errors(raw)) == []
    s = session(tmp_path)
    result = await call(s, "apply_patch", raw)
    assert [a["path"] for a in result["applied"]] == ["src/app.py"]
    assert (tmp_path / "ws" / "src" / "app.py").read_text() == AFTER


@pytest.mark.parametrize("fmt", EDIT_FORMATS)
def test_the_schema_shown_names_only_its_form(fmt: str) -> None:
    props = set((input_schema(fmt) or {})["properties"])
    assert props == ({"patch", "revisions", "turn_id"} if fmt == "patch" else {"files", "turn_id"})
    text = json.dumps(input_schema(fmt))
    assert ("start_line" in text) == (fmt == "lines")
    assert ("old_text" in text) == (fmt == "text")


@pytest.mark.parametrize("fmt", [None, *EDIT_FORMATS])
async def test_tools_list_shows_the_format_and_every_form_stays_accepted(
    tmp_path: Path, fmt: str | None
) -> None:
    s = session(tmp_path)
    s.edit_format = fmt  # type: ignore[assignment]
    listed = tools_list(s)
    (apply,) = [t for t in listed["tools"] if t["name"] == "apply_patch"]
    expected = input_schema(fmt) or default_registry().get("apply_patch").input_schema
    assert apply["inputSchema"] == expected
    assert listed["instructions"] == instructions(fmt) and listed["editFormat"] == fmt
    # whatever is selected, every form (and the legacy one) is still accepted
    text = BEFORE
    for other in EDIT_FORMATS:
        raw = json.loads(json.dumps(example(other)).replace(rev(BEFORE), rev(text)))
        await call(s, "apply_patch", raw)
        text = (tmp_path / "ws" / "src" / "app.py").read_text()
        assert text == AFTER
        (tmp_path / "ws" / "src" / "app.py").write_text(BEFORE)
        text = BEFORE
    legacy = {"path": "src/app.py", "expected_revision": rev(BEFORE), "content": AFTER}
    await call(s, "apply_patch", legacy)
    assert (tmp_path / "ws" / "src" / "app.py").read_text() == AFTER


@pytest.mark.parametrize("mode", MODES)
async def test_the_same_change_gives_the_same_card_and_decision_in_every_format(
    tmp_path: Path, mode: Mode
) -> None:
    from s_code.approvals import audit

    seen = []
    for i, fmt in enumerate(EDIT_FORMATS):
        s = session(tmp_path / str(i), mode=mode)
        s.edit_format = fmt
        await call(s, "apply_patch", example(fmt))
        approver = s.approver
        assert isinstance(approver, Recorder)
        assert s.store is not None
        (row,) = audit.rows(s.store)
        asked = [(c.title, c.target, c.details_wire, c.digest) for c in approver.cards]
        seen.append((row["decision"], row["digest"], row["kind"], row["target"], asked))
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][0] == ("approved" if decide(mode, "edit") == "ask" else "allowed")

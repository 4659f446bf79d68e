"""The examples table of docs/patch-format.md: s-code and the reference give its s-code column;
Codex (when the oracle is installed) writes its Codex column."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from s_code.edits.request import ApplyPatchArgs, plans_of
from s_code.protocol.errors import SCodeError
from s_code.protocol.models import parse_params
from tests.oracle import codex_oracle as codex
from tests.oracle.cases import Case
from tests.oracle.differential import revisions, scode
from tests.oracle.reference import reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "patch-format.md"
ROW = re.compile(r"^\| `(.*)` \| `(.*)` \| `(.*)` \| (?:`(.*)`|refused: `(\w+)`) \|$")


def text(escaped: str) -> str:
    return str(ast.literal_eval(f'"{escaped}"'))


def examples() -> list[tuple[Case, str, str | None, str | None]]:
    """(case, what Codex writes, what s-code writes or None, the error kind or None)."""
    section = DOC.read_text().split("## Examples", 1)[1].split("\n## ", 1)[0]
    out = []
    for row in section.splitlines():
        found = ROW.match(row)
        if found:
            before, hunk, theirs, mine, kind = found.groups()
            patch = f"*** Begin Patch\n*** Update File: f\n{text(hunk)}\n*** End Patch\n"
            out.append((Case({"f": text(before)}, patch), text(theirs), mine and text(mine), kind))
    return out


def test_the_table_is_read() -> None:
    assert len(examples()) >= 10


@pytest.mark.parametrize(("case", "theirs", "mine", "kind"), examples())
def test_example(case: Case, theirs: str, mine: str | None, kind: str | None) -> None:
    assert scode(case) == reference(case.files, case.patch)
    args = parse_params(ApplyPatchArgs, {"patch": case.patch, "revisions": revisions(case)})
    if kind is None:
        (plan,) = plans_of(args)
        assert plan.compute(case.files["f"]) == mine
    else:
        with pytest.raises(SCodeError) as info:
            for plan in plans_of(args):
                plan.compute(case.files["f"])
        assert info.value.kind.value == kind


@pytest.mark.parametrize(("case", "theirs", "mine", "kind"), examples())
def test_example_in_codex(
    case: Case, theirs: str, mine: str | None, kind: str | None, tmp_path: Path
) -> None:
    exe = codex.require()
    (tmp_path / "f").write_bytes(case.files["f"].encode())
    run = codex.apply(exe, tmp_path, case.patch)
    assert run.applied, run.output
    assert (tmp_path / "f").read_bytes() == theirs.encode()

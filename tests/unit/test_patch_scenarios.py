"""Hand-written apply_patch scenarios, in the layout OpenAI Codex uses for its own.

Each directory under tests/fixtures/patch_scenarios/ holds ``input/`` (the tree before; may be
absent), ``patch.txt`` and ``expected/`` (the whole tree after). A refusing scenario also has
``error.json`` (``kind``, and any of ``rule``, ``op``, ``line``, ``lines``, ``expected`` to compare
with the error's data) and its ``expected/`` is identical to ``input/``. Each scenario runs through
the in-process engine in the patch form; revisions come from the ``input/`` files (the first 16
hex of their sha256; null for added files), and the resulting tree must equal ``expected/``
exactly: the same files with the same bytes, the same directories, nothing else.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from s_code.protocol.errors import SCodeError
from tests.unit.test_edit_request import EngineWorkspace, rev, snapshot

SCENARIOS = Path(__file__).resolve().parent.parent / "fixtures" / "patch_scenarios"
HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*?)\r?$", re.MULTILINE)


def scenario_dirs() -> list[Path]:
    return sorted(p for p in SCENARIOS.iterdir() if p.is_dir())


def revisions_for(patch: str, input_dir: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for op, path in HEADER.findall(patch):
        if op == "Add":
            out[path] = None
        else:
            source = input_dir / path
            out[path] = rev(source.read_bytes()) if source.is_file() else None
    return out


def test_the_scenario_set() -> None:
    dirs = scenario_dirs()
    names = [d.name for d in dirs]
    assert all(re.fullmatch(r"\d{3}_[a-z0-9_]+", n) for n in names), names
    assert len({n[:3] for n in names}) == len(names)  # unique numbers
    refusing = [d for d in dirs if (d / "error.json").is_file()]
    accepting = [d for d in dirs if not (d / "error.json").is_file()]
    assert len(accepting) >= 12
    assert len(refusing) >= 10
    for d in dirs:
        assert (d / "patch.txt").is_file(), d.name
        assert (d / "expected").is_dir(), d.name
    for d in refusing:
        # A refusal leaves the tree as it was: expected/ is input/.
        assert snapshot(d / "input") == snapshot(d / "expected"), d.name
        error = json.loads((d / "error.json").read_text())
        assert isinstance(error["kind"], str), d.name
    for d in accepting:
        assert snapshot(d / "input") != snapshot(d / "expected"), d.name


@pytest.mark.parametrize("scenario", scenario_dirs(), ids=lambda p: p.name)
async def test_scenario(scenario: Path, tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    try:
        input_dir = scenario / "input"
        if input_dir.is_dir():
            shutil.copytree(input_dir, ws.root, dirs_exist_ok=True)
        before = ws.tree()
        patch = (scenario / "patch.txt").read_bytes().decode("utf-8")
        raw = {"patch": patch, "revisions": revisions_for(patch, input_dir)}
        error_file = scenario / "error.json"
        if error_file.is_file():
            expected_error = json.loads(error_file.read_text())
            with pytest.raises(SCodeError) as info:
                await ws.apply(raw)
            err = info.value
            assert err.kind.value == expected_error["kind"], err.message
            for key, value in expected_error.items():
                if key != "kind":
                    assert key in err.data, (key, err.data)
                    assert err.data[key] == value, (key, err.data)
            assert ws.tree() == before
        else:
            result = await ws.apply(raw)
            assert sorted(a["path"] for a in result["applied"]) == sorted(raw["revisions"])
        assert ws.tree() == snapshot(scenario / "expected")
    finally:
        ws.close()

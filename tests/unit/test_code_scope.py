"""hostproc/scope.py: what an entry's code scope holds, and that its digest sees every change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from s_code.hostproc.scope import MAX_FILES, ScopeTooLarge, code_scope


def ws_with(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    ws = tmp_path / "ws"
    (ws / "tools" / "lib").mkdir(parents=True)
    (ws / "tools" / "srv.js").write_text("require('./lib/a')\n")
    (ws / "tools" / "lib" / "a.js").write_text("module.exports = 1\n")
    return ws, (str(ws),)


def test_a_script_binds_its_folder_and_the_node_modules_above_it(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    (ws / "node_modules" / "dep").mkdir(parents=True)
    (ws / "node_modules" / "dep" / "index.js").write_text("x\n")
    scope = code_scope("/usr/bin/node", [str(ws / "tools" / "srv.js")], writable)
    assert scope.holds(str(ws / "tools" / "lib" / "a.js"))
    assert scope.holds(str(ws / "tools" / "new.js"))  # a file not there yet
    assert scope.holds(str(ws / "node_modules" / "dep" / "index.js"))
    assert not scope.holds(str(ws / "README.md"))
    before = scope.digest
    (ws / "node_modules" / "dep" / "index.js").write_text("y\n")
    assert code_scope("/usr/bin/node", [str(ws / "tools" / "srv.js")], writable).digest != before
    assert not scope.unchanged()


def test_a_venv_program_binds_the_venv_and_what_its_pth_files_add(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    venv = ws / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "black").write_text("#!/bin/sh\n")
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (site / "_proj.pth").write_text(f"{ws / 'src'}\nimport os\n")
    scope = code_scope(str(venv / "bin" / "black"), [], writable)
    assert scope.holds(str(site / "anything.py"))
    assert scope.holds(str(ws / "src" / "pkg" / "mod.py"))  # the editable install's code
    assert not scope.holds(str(ws / "tools" / "srv.js"))


def test_bytecode_caches_and_git_metadata_are_not_part_of_it(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    script = str(ws / "tools" / "srv.js")
    before = code_scope("/usr/bin/node", [script], writable).digest
    (ws / "tools" / "__pycache__").mkdir()
    (ws / "tools" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (ws / "tools" / ".git").mkdir()
    assert code_scope("/usr/bin/node", [script], writable).digest == before
    (ws / "tools" / "x.pyc").write_bytes(b"\0")  # a sourceless module beside the code is
    assert code_scope("/usr/bin/node", [script], writable).digest != before


def test_a_script_at_the_top_of_the_workspace_binds_the_whole_folder(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    (ws / "srv.py").write_text("pass\n")
    scope = code_scope("/usr/bin/python3", [str(ws / "srv.py")], writable)
    assert scope.holds(str(ws / "helper.py"))
    assert scope.holds(str(ws / "tools" / "lib" / "a.js"))  # node's require('./tools/lib/a')
    assert any("top of" in n for n in scope.notes)


def test_a_path_named_in_the_environment_or_an_option_is_code(tmp_path: Path) -> None:
    from s_code.hostproc.entry import _mentioned

    ws, writable = ws_with(tmp_path)
    (ws / "lib").mkdir()
    (ws / "pre.js").write_text("")
    found = _mentioned(
        ("node", "--require=./pre.js", "tools/srv.js", "."),
        (("PYTHONPATH", f"{ws / 'lib'}:/usr/lib"), ("PORT", "8080")),
        str(ws),
        writable,
    )
    assert str(ws / "pre.js") in found and str(ws / "lib") in found
    assert str(ws) not in found  # a positional "." is data (a linter's target), not code


def test_a_node_modules_made_nearer_the_script_changes_the_scope(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    (ws / "node_modules").mkdir()
    scope = code_scope("/usr/bin/node", [str(ws / "tools" / "lib" / "a.js")], writable)
    nearer = ws / "tools" / "node_modules"
    assert scope.holds(str(nearer / "x" / "index.js"))  # an edit that makes one asks
    assert scope.unchanged()
    (nearer / "x").mkdir(parents=True)
    assert not scope.unchanged()


def test_a_link_into_another_writable_place_binds_where_it_leads(tmp_path: Path) -> None:
    ws, writable = ws_with(tmp_path)
    (ws / "shared").mkdir()
    (ws / "shared" / "b.js").write_text("b\n")
    os.symlink(ws / "shared", ws / "tools" / "shared")
    scope = code_scope("/usr/bin/node", [str(ws / "tools" / "srv.js")], writable)
    assert scope.holds(str(ws / "shared" / "b.js"))


def test_a_scope_too_large_to_bind_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, writable = ws_with(tmp_path)
    monkeypatch.setattr("s_code.hostproc.scope.MAX_FILES", 3)
    for i in range(5):
        (ws / "tools" / f"f{i}.js").write_text("")
    with pytest.raises(ScopeTooLarge):
        code_scope("/usr/bin/node", [str(ws / "tools" / "srv.js")], writable)
    assert MAX_FILES >= 100_000

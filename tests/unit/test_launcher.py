"""The exec helper's choice (sandbox/launcher.py): the shipped one when it runs here, else one
compiled from the bundled source, else none, with one line that says why."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from s_code.sandbox import launcher

needs_cc = pytest.mark.skipif(launcher.find_compiler() is None, reason="a C compiler is needed")


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty launcher cache, a 'shipped' helper path of our own, nothing memoised."""
    monkeypatch.setenv("S_CODE_LAUNCHER_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(launcher, "SHIPPED", tmp_path / "pkg" / "bin" / launcher.NAME)
    monkeypatch.setattr(launcher, "_chosen", {})
    return tmp_path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = launcher.find_compiler()
    if compiler is None:
        pytest.skip("a C compiler is needed")
    out = tmp_path_factory.mktemp("built") / launcher.NAME
    launcher.compile_helper(compiler, out)
    return out


def _ship(isolated: Path, content: bytes, mode: int = 0o755) -> Path:
    shipped = isolated / "pkg" / "bin" / launcher.NAME
    shipped.parent.mkdir(parents=True, exist_ok=True)
    shipped.write_bytes(content)
    shipped.chmod(mode)
    return shipped


def test_a_built_helper_names_its_source(built: Path) -> None:
    assert launcher.check(built) is None


def test_check_says_why_a_helper_cannot_be_used(built: Path, tmp_path: Path) -> None:
    data = built.read_bytes()
    foreign = tmp_path / "foreign"
    other = 183 if os.uname().machine != "aarch64" else 62
    foreign.write_bytes(data[:18] + other.to_bytes(2, "little") + data[20:])
    foreign.chmod(0o755)
    assert "is built for" in (launcher.check(foreign) or "")
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho s-code-launch 0000\n")
    script.chmod(0o755)
    assert launcher.check(script) == "is not an ELF executable"
    plain = tmp_path / "plain"
    shutil.copy(built, plain)
    plain.chmod(0o644)
    assert launcher.check(plain) == "is not executable"
    assert launcher.check(tmp_path / "absent") == "is missing"


def test_an_old_helper_is_another_version(built: Path, tmp_path: Path) -> None:
    compiler = launcher.find_compiler()
    assert compiler is not None
    source = tmp_path / "launch.c"
    source.write_bytes(launcher.SOURCE.read_bytes() + b"\n/* an older source */\n")
    old = tmp_path / "old"
    launcher.compile_helper(compiler, old, source)
    assert "is another version" in (launcher.check(old) or "")


def test_the_shipped_helper_comes_first(isolated: Path, built: Path) -> None:
    shipped = _ship(isolated, built.read_bytes())
    chosen = launcher.selection()
    assert (chosen.path, chosen.origin, chosen.notes) == (shipped, "shipped", ())
    assert launcher.helper() == shipped
    assert not (isolated / "cache").exists()  # nothing compiled


@needs_cc
def test_a_shipped_helper_that_cannot_run_falls_back_to_compiling(
    isolated: Path, built: Path
) -> None:
    _ship(isolated, b"#!/bin/sh\nexit 0\n")
    chosen = launcher.selection()
    assert chosen.origin == "compiled"
    assert chosen.path is not None and chosen.path.parent == isolated / "cache"
    assert chosen.notes == ("the shipped helper is not an ELF executable",)


def test_no_helper_and_no_compiler_is_one_line(
    isolated: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = built.read_bytes()
    other = 183 if os.uname().machine != "aarch64" else 62
    _ship(isolated, data[:18] + other.to_bytes(2, "little") + data[20:])
    monkeypatch.setattr(launcher, "find_compiler", lambda: None)
    with pytest.raises(launcher.LauncherUnavailable) as err:
        launcher.helper()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("no sandbox exec helper: the shipped helper is built for")
    assert message.endswith("no C compiler (cc or gcc) to build one from the bundled source")
    assert launcher.selection().to_wire()["origin"] == "none"

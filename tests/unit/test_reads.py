"""What a sandboxed command may read: all of / but the carved-out private places."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from s_code.sandbox.reads import carve, unreadable


def _granted(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def test_carving_grants_everything_but_the_excluded(tmp_path: Path) -> None:
    for rel in ("etc/a", "home/me/.ssh/key", "home/other/x", "usr/lib/y", "srv/state/db"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    os.symlink(tmp_path / "home" / "me", tmp_path / "link-to-home")
    excluded = (str(tmp_path / "home" / "me"), str(tmp_path / "srv" / "state"))
    roots = carve(excluded, str(tmp_path))
    assert _granted(str(tmp_path / "etc" / "a"), roots)
    assert _granted(str(tmp_path / "home" / "other" / "x"), roots)
    assert _granted(str(tmp_path / "usr" / "lib" / "y"), roots)
    assert not _granted(str(tmp_path / "home" / "me" / ".ssh" / "key"), roots)
    assert not _granted(str(tmp_path / "srv" / "state" / "db"), roots)
    assert str(tmp_path / "link-to-home") not in roots  # a link would re-grant its target


def test_the_state_directory_is_left_out_wherever_it_is(tmp_path: Path) -> None:
    state = Path("/opt") / f"s-code-state-test-{uuid.uuid4().hex[:8]}"
    try:
        state.mkdir(parents=True)
    except OSError:
        pytest.skip("needs a directory outside /tmp and $HOME (root can make one in /opt)")
    try:
        found = unreadable("/root", str(state))
        assert str(state) in found
        assert {"/tmp", "/dev", "/run"} <= set(found)
        assert all(not p.startswith(o + "/") for p in found for o in found if o != p)
        assert not _granted(str(state), carve(found))
        assert _granted("/usr/bin/env", carve(found))
    finally:
        state.rmdir()

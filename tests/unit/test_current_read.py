"""``read_regular``: the write phase's read of a file as it is now (the recheck, the final check
before each rename, undo's check). It must return the whole file however the kernel splits the
read, and never allocate for a file that turned huge."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.workspace import writes
from s_code.workspace.writes import read_regular


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield tmp_path, fd
    finally:
        os.close(fd)


class ShortReads:
    """``os`` as writes.py sees it, with every read returning at most 1,000 bytes (a FUSE or
    network file system may do that; Linux itself cuts one read at 2 GiB)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def read(fd: int, n: int) -> bytes:
        return os.read(fd, min(n, 1000))


def test_short_reads_still_return_the_whole_file(
    folder: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, fd = folder
    data = bytes(range(256)) * 40  # 10,240 bytes
    (path / "f").write_bytes(data)
    monkeypatch.setattr(writes, "os", ShortReads())
    found = read_regular(fd, "f")
    assert found is not None and found[0] == data


def test_a_huge_file_is_read_only_up_to_the_limit(folder: tuple[Path, int]) -> None:
    """A target replaced by a 64 GiB sparse file: the read stops past the limit (reading it all,
    or allocating its size at once, would exhaust memory)."""
    path, fd = folder
    with open(path / "f", "wb") as f:
        f.truncate(64 << 30)
    found = read_regular(fd, "f")
    assert found is not None and len(found[0]) == writes.COMPARE_LIMIT + 1


def test_growth_and_shrinking_after_the_stat_are_seen(
    folder: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, fd = folder
    (path / "f").write_bytes(b"x" * 100)
    real_fstat = os.fstat

    class Resized:
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def fstat(n: int) -> os.stat_result:
            st = real_fstat(n)
            (path / "f").write_bytes(b"y" * size)  # changes between the stat and the read
            return st

    monkeypatch.setattr(writes, "os", Resized())
    for size in (5000, 10, 0):
        found = read_regular(fd, "f")
        assert found is not None and found[0] == b"y" * size

"""The stdio writer: what the event loop writes in one turn goes out in one write(2), in order;
another thread's write never overtakes what waits."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator

import pytest

from s_code.lsp.transport import FdWriter


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    os.set_blocking(r, False)
    yield r, w
    os.close(r)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def test_one_turn_of_the_loop_is_one_write_sent_when_the_task_yields(
    pipe: tuple[int, int],
) -> None:
    r, w = pipe
    writer = FdWriter(w)

    async def main() -> tuple[bytes, bytes]:
        writer.write(b"one ")
        writer.write(b"two ")
        held = _read(r)  # nothing yet: the task has not yielded
        await asyncio.sleep(0)
        return held, _read(r)

    held, sent = asyncio.run(main())
    assert held == b""
    assert sent == b"one two "
    writer.close()


def test_a_write_from_another_thread_goes_after_what_waits(pipe: tuple[int, int]) -> None:
    r, w = pipe
    writer = FdWriter(w)

    async def main() -> bytes:
        writer.write(b"first ")
        thread = threading.Thread(target=writer.write, args=(b"second ",))
        thread.start()
        thread.join()  # no loop in that thread: it writes now, after what the loop left
        sent = _read(r)
        await asyncio.sleep(0)
        return sent + _read(r)

    assert asyncio.run(main()) == b"first second "
    writer.close()


def test_close_sends_what_waits(pipe: tuple[int, int]) -> None:
    r, w = pipe
    writer = FdWriter(w)

    async def main() -> None:
        writer.write(b"last words")
        writer.close()  # e.g. the loop ends right after the shutdown reply

    asyncio.run(main())
    assert _read(r) == b"last words"


def test_an_editor_that_is_gone_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    r, w = os.pipe()
    os.close(r)  # the editor closed its end: EPIPE
    writer = FdWriter(w)
    writer.write(b"nobody reads this")  # no loop: written now, the error logged
    writer.close()
    assert "could not write to the editor" in caplog.text


def test_nothing_is_written_after_close_even_when_the_fd_number_is_reused() -> None:
    r, w = os.pipe()
    writer = FdWriter(w)
    writer.close()
    r2, w2 = os.pipe()  # the lowest free number: likely w again
    try:
        writer.write(b"a late reply")  # dropped, never written to whatever w now names
        os.set_blocking(r2, False)
        assert _read(r2) == b""
    finally:
        for fd in (r, r2, w2):
            os.close(fd)

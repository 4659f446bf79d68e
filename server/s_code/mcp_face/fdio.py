"""A pipe or a socket read and written on the event loop, never blocking it, whoever else holds it.

``O_NONBLOCK`` belongs to an open file description, which whoever shares the descriptor (the
process that handed it over, a wrapper that shares our stdin) holds too and can clear again: a
read or write that relied on it would then block the event loop. So a pipe or FIFO is opened
anew through ``/proc/self/fd`` (a description of our own, non-blocking), and a unix stream
socket is read and written with ``MSG_DONTWAIT`` on every call, its flags untouched. A wake-up
that finds no data while the descriptor reports an error or a hang-up ends the stream (a socket
with a queued error reads as ready for ever).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import select
import socket
import stat

import anyio

_GONE = select.POLLERR | select.POLLHUP | select.POLLNVAL


class Stream:
    """One direction of a byte stream on the event loop (:meth:`take` makes one)."""

    def __init__(self, fd: int, sock: socket.socket | None) -> None:
        self.fd, self._sock = fd, sock

    @classmethod
    def take(cls, fd: int, *, write: bool) -> Stream | None:
        """A stream of our own over ``fd`` (a pipe, a FIFO or a connected unix stream socket,
        open for ``write`` or for reading); None for anything else. ``fd`` stays the caller's."""
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISFIFO(mode):
                access = os.O_WRONLY if write else os.O_RDONLY
                wanted = (os.O_WRONLY, os.O_RDWR) if write else (os.O_RDONLY, os.O_RDWR)
                if (fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) not in wanted:
                    return None
                own = os.open(f"/proc/self/fd/{fd}", access | os.O_NONBLOCK | os.O_CLOEXEC)
                return cls(own, None)
            if stat.S_ISSOCK(mode):
                sock = socket.socket(fileno=os.dup(fd))
                try:
                    usable = (
                        sock.family == socket.AF_UNIX
                        and sock.type == socket.SOCK_STREAM
                        and not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                    )
                    if usable:
                        sock.getpeername()  # connected (OSError when not)
                        return cls(sock.fileno(), sock)
                except OSError:
                    pass
                sock.close()
        except OSError:
            pass
        return None

    async def read(self) -> bytes:
        """The next chunk; b"" at the end."""
        while True:
            try:
                if self._sock is not None:
                    return self._sock.recv(65536, socket.MSG_DONTWAIT)
                return os.read(self.fd, 65536)
            except BlockingIOError:
                if not await self._ready(writing=False):
                    return b""
            except (ConnectionError, OSError):
                return b""

    async def write(self, data: bytes) -> None:
        """All of ``data``; OSError when the other end is gone."""
        view = memoryview(data)
        while view:
            try:
                if self._sock is not None:
                    sent = self._sock.send(view, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
                else:
                    sent = os.write(self.fd, view)
                view = view[sent:]
            except BlockingIOError:
                if not await self._ready(writing=True):
                    raise BrokenPipeError("the other end is gone") from None

    async def _ready(self, *, writing: bool) -> bool:
        """After a try that found nothing to do: wait until the descriptor is ready; False
        when it reports an error or a hang-up instead (its wake-ups would come again at once,
        for ever, with nothing to give)."""
        poll = select.poll()
        poll.register(self.fd, select.POLLOUT if writing else select.POLLIN)
        events = poll.poll(0)
        if events and events[0][1] & _GONE:
            return False
        await until_ready(self.fd, writing=writing)
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._sock is not None:
                self._sock.close()
            else:
                os.close(self.fd)


async def until_ready(fd: int, *, writing: bool = False) -> None:
    """Until the event loop sees ``fd`` ready to read (or ``writing``: to write); a pidfd reads
    as ready once its process ended."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def woken() -> None:
        if not ready.done():
            ready.set_result(None)

    (loop.add_writer if writing else loop.add_reader)(fd, woken)
    try:
        await ready
    finally:
        (loop.remove_writer if writing else loop.remove_reader)(fd)


def blocking_io(fd: int) -> Stream:
    """A stream over what :meth:`Stream.take` refuses (a file, a terminal, /dev/null): each read
    or write in a worker thread, so that it blocks no event loop."""
    return _Threaded(fd)


class _Threaded(Stream):
    def __init__(self, fd: int) -> None:
        super().__init__(os.dup(fd), None)

    async def read(self) -> bytes:
        return await anyio.to_thread.run_sync(os.read, self.fd, 65536, abandon_on_cancel=True)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[await anyio.to_thread.run_sync(os.write, self.fd, view) :]

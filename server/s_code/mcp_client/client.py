"""One MCP stdio server, kept running in the background on the official SDK.

The server starts as a supervised host process (:mod:`s_code.hostproc.spawn`), in its own task:
nothing waits for it, so a slow server never delays another tool; its tools join the registry
when it is ready (``on_tools``). Every request has a read timeout (a dead server's call never
hangs: it fails fast with ``host_process_failed``); a cancelled call is passed on to the server
by the SDK; the tool list is read page by page and read again on
``notifications/tools/list_changed``. A server that exits is restarted with a backoff (1 s,
doubling to 60 s), and given up after ``MAX_RESTARTS`` failures in ``RESTART_WINDOW_S``; its
tools leave the registry while it is down. Every start, the first and each restart, goes through
``guard``: what would run is checked against what was approved, and a server that changed is
never started again (it waits for a new approval). ``stop`` ends it and its whole process tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from s_code.hostproc.spawn import StderrLog, host_argv
from s_code.mcp_client.results import tool_result
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.redaction import Redactor

log = logging.getLogger(__name__)
State = Literal["starting", "running", "failed", "stopped"]
MAX_RESTARTS = 5
RESTART_WINDOW_S = 300.0
MAX_PAGES = 100


@dataclass
class Launch:
    """What to run, resolved (credential values in ``env``: never shown, never stored)."""

    name: str
    argv: list[str]
    cwd: str
    env: dict[str, str]
    startup_timeout_s: float
    tool_timeout_s: float


Guard = Callable[[], AbstractAsyncContextManager[str | None]]
"""Held from the check of what would run until the server is initialized; yields why it must
not start (what runs changed since it was approved), or None."""


@contextlib.asynccontextmanager
async def _unguarded() -> Any:
    yield None


@dataclass
class McpServer:
    launch: Launch
    redactor: Redactor
    on_tools: Callable[[McpServer, list[Any]], None]
    guard: Guard = _unguarded
    state: State = "starting"
    error: str | None = None
    tools: list[Any] = field(default_factory=list)
    stderr: StderrLog | None = None
    _session: ClientSession | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _failures: list[float] = field(default_factory=list)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start in the background (on the running loop); returns at once."""
        if self._task is None or self._task.done():
            self._stop = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and self.state == "starting":
            self._task.cancel()  # waiting for its guard, or to initialize: nothing to wind down
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._task), 15)
        self.state = "stopped"
        self._withdraw()

    def _withdraw(self) -> None:
        self._session = None
        if self.tools:
            self.tools = []
            self.on_tools(self, [])

    async def _run(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            self.state = "starting"
            try:
                await self._serve_once()
            except Changed as exc:  # what would run is not what was approved: never run it
                self.error = str(exc)
                self.state = "failed"
                self._withdraw()
                return
            except Exception as exc:  # the server could not start, or died
                self.error = self._describe(exc)
                log.warning("MCP server %s: %s", self.launch.name, self.error)
            self._withdraw()
            if self._stop.is_set():
                break
            now = time.monotonic()
            self._failures = [t for t in self._failures if now - t < RESTART_WINDOW_S] + [now]
            self.state = "failed"
            if len(self._failures) > MAX_RESTARTS:
                self.error = f"{self.error}; gave up after {MAX_RESTARTS} restarts"
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            delay = min(delay * 2, 60.0)
        self.state = "stopped"

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, BaseExceptionGroup):
            inner = exc.exceptions[0] if exc.exceptions else exc
            return self._describe(inner)
        tail = self.stderr.text().strip().splitlines()[-3:] if self.stderr is not None else []
        said = f" (stderr: {' | '.join(tail)})" if tail else ""
        if isinstance(exc, TimeoutError):
            return f"did not start within {self.launch.startup_timeout_s:g} s{said}"
        if isinstance(exc, ServerExited):
            return f"the server exited{said}"
        return f"{type(exc).__name__}: {exc}{said}"

    async def _serve_once(self) -> None:
        """One run of the server: checked (the guard held until it is initialized, so nothing
        it runs can change between the check and its start), served until it exits or stops."""
        guard = self.guard()
        problem = await guard.__aenter__()
        held = True

        async def release() -> None:
            nonlocal held
            if held:
                held = False
                await guard.__aexit__(None, None, None)

        try:
            if problem is not None:
                raise Changed(problem)
            await self._serve(release)
        finally:
            await release()

    async def _serve(self, ready: Callable[[], Any]) -> None:
        argv = host_argv(self.launch.argv, self.launch.cwd)
        self.stderr = StderrLog(self.redactor, f"mcp:{self.launch.name}")
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=self.launch.env, cwd=self.launch.cwd
        )
        try:
            async with stdio_client(params, errlog=self.stderr.writer) as (read, write):  # type: ignore[arg-type]
                send, receive = anyio.create_memory_object_stream[Any](0)
                exited = anyio.Event()

                async def forward() -> None:
                    async with send:
                        async for item in read:
                            await send.send(item)
                    exited.set()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(forward)
                    async with ClientSession(
                        receive,
                        write,
                        # a request without a bound of its own: the start's, or a call's
                        read_timeout_seconds=max(
                            self.launch.tool_timeout_s, self.launch.startup_timeout_s
                        ),
                        message_handler=self._on_message,
                    ) as session:
                        with anyio.fail_after(self.launch.startup_timeout_s):
                            await session.initialize()
                            tools = await self._list(session)
                        await ready()
                        self._session = session
                        self.state = "running"
                        self.error = None
                        self._failures.clear()
                        self._refresh(tools)
                        await self._until(exited)
                    tg.cancel_scope.cancel()
                if exited.is_set() and not self._stop.is_set():
                    raise ServerExited
        finally:
            self._session = None
            self.stderr.close()

    async def _until(self, exited: anyio.Event) -> None:
        stop = asyncio.ensure_future(self._stop.wait())
        died = asyncio.ensure_future(exited.wait())
        try:
            await asyncio.wait({stop, died}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            died.cancel()

    async def _list(self, session: ClientSession) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await session.list_tools(params=_page(cursor))
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _refresh(self, tools: list[Any]) -> None:
        self.tools = tools
        self.on_tools(self, tools)

    async def _on_message(self, message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed" and self._session is not None:
            session = self._session

            async def relist() -> None:
                try:
                    self._refresh(await self._list(session))
                except Exception as exc:
                    log.warning(
                        "MCP server %s: listing tools again failed: %s", self.launch.name, exc
                    )

            asyncio.get_running_loop().create_task(relist())

    # -- calls --------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call one of the server's tools; its result as s-code tool result data."""
        session = self._session
        if session is None or self.state != "running":
            why = self.error or "it is starting"
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the MCP server {self.launch.name!r} is {self.state}: {why}",
                server=self.launch.name,
                state=self.state,
            )
        try:
            result = await session.call_tool(
                tool, arguments, read_timeout_seconds=self.launch.tool_timeout_s
            )
        except MCPError as exc:
            raise self._call_error(tool, exc) from None
        return tool_result(result)

    def _call_error(self, tool: str, exc: MCPError) -> SCodeError:
        message = str(exc)
        if "timed out" in message.lower() or "timeout" in message.lower():
            return SCodeError(
                ErrorKind.TIMEOUT,
                f"the MCP server {self.launch.name!r} did not answer {tool} within "
                f"{self.launch.tool_timeout_s:g} s",
                server=self.launch.name,
            )
        if "closed" in message.lower():
            self._session = None  # dead: no call goes to it until the restart is up
            self.state = "failed"
            self.error = f"exited during {tool}"
            return SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the MCP server {self.launch.name!r} exited during {tool}; it is being restarted",
                server=self.launch.name,
            )
        return SCodeError(
            ErrorKind.HOST_PROCESS_FAILED,
            f"the MCP server {self.launch.name!r} failed {tool}: {self.redactor.redact(message)}",
            server=self.launch.name,
        )


class ServerExited(Exception):
    """The server's process ended while it was serving."""


class Changed(Exception):
    """What the server would run changed since it was approved: it is not started again."""


def _page(cursor: str | None) -> Any:
    if cursor is None:
        return None
    from mcp.types import PaginatedRequestParams

    return PaginatedRequestParams(cursor=cursor)

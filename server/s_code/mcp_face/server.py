"""``s-code mcp``'s server: the MCP SDK's low-level ``Server`` over the hardened stdio transport.

Methods: ``tools/list`` (the core profile and what this agent's ``tool_search`` loaded; the
client is told when that list changes: ``notifications/tools/list_changed`` on a 2025
connection, the ``subscriptions/listen`` stream on a 2026 one) and ``tools/call`` (through the
backend, which calls the one dispatch). A cancel (``notifications/cancelled``, or the end of
the connection) reaches a call as ``$/cancelRequest`` does on the LSP face: one cancellation,
after which its cleanup (killing a command's tree, putting the workspace back) runs to its end.
Command and terminal output streams to the agent as progress notifications when the call
carried a progress token, else as log messages. A failure that is not a tool's own is an
internal error with a fixed message; nothing of a traceback reaches the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from s_code import __version__
from s_code.approvals.caller import Caller
from s_code.approvals.cards import Card
from s_code.mcp_face import results
from s_code.mcp_face.backend import Backend
from s_code.mcp_face.elicit import REQUEST, ROUNDS, SCHEMA, approved, prompt_text
from s_code.mcp_face.rounds import Ledger, Rounds, call_digest
from s_code.mcp_face.stdio import hardened_stdio, hardened_streams
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError

log = logging.getLogger(__name__)
STREAMED = (methods.COMMAND_OUTPUT, methods.TERMINAL_OUTPUT)
LINK_LINE_BYTES = 17 * 1024 * 1024
"""The largest message an attached agent may send into the editor's sidecar: apply_patch's own
16 MiB request limit and the envelope around it (a larger one is refused before it is parsed)."""
MAX_NAME = 64
"""Characters of an agent's own name shown on a card (the agent chose it: a long one must not
bury the question)."""
MAX_STREAMED = 8192
"""Characters of output one progress notification carries at most (the rest is in the result)."""


def client_name(ctx: Any) -> str:
    """The agent's own name (``clientInfo.name``), for the cards of its calls."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    if not isinstance(name, str) or not name.strip():
        return "an MCP client"
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


class Face:
    """One agent's connection (stdio serves exactly one)."""

    def __init__(self, backend: Backend, agent_id: str | None = None) -> None:
        self.backend = backend
        self.id = agent_id or "agent-" + uuid.uuid4().hex[:12]
        self.name = ""
        """The agent's own name (``clientInfo.name``), once it called a tool."""
        self.loaded: set[str] = set()
        self.bus = InMemorySubscriptionBus()
        self.ledger = Ledger()
        self.inflight: dict[asyncio.Task[Any], str] = {}
        """The requests whose call runs in their own task (:meth:`_inline`), by request id."""
        self.stopped: set[asyncio.Task[Any]] = set()
        """Those of them this face cancelled."""
        self.server: Server[Any] = Server(
            "s-code",
            version=__version__,
            title="s-code",
            instructions=(
                "s-code's tools for this workspace: read_file gives numbered content and a "
                "revision; apply_patch edits behind the revisions you read; run_command runs in "
                "an OS sandbox; the user approves in their editor. tool_search finds more tools."
            ),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.add_notification_handler(
            "notifications/cancelled", types.CancelledNotificationParams, self.cancelled
        )
        # no OpenTelemetry span per message (the SDK's default middleware): nothing collects
        # them here, and each costs a tool call time
        self.server.middleware[:] = [_no_leak]

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        entries = await self.backend.tools(self.loaded)
        return types.ListToolsResult(
            tools=[types.Tool.model_validate(e, by_name=False) for e in entries]
        )

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name, arguments = params.name, params.arguments if params.arguments is not None else {}
        rounds: Rounds | None = None
        work: asyncio.Future[Any] | None = None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            digest = call_digest(name, arguments)
            again = None
            if params.input_responses:  # an answer counts only for the question we asked
                again = self.ledger.take(params.request_state, digest)
            if again is not None:
                if not again.answer.done():
                    answers = params.input_responses or {}
                    again.answer.set_result(approved(answers.get("approval")))
                work, rounds = again.work, again.rounds
            else:
                rounds = Rounds(digest)
        try:
            if rounds is None:  # 2025: the call runs in the request's own task
                self.name = client_name(ctx)
                token = REQUEST.set(ctx)
                try:
                    caller = Caller(self.id, self.name, _sink(ctx))
                    wire = await self._inline(ctx, self.backend.call(name, arguments, caller))
                finally:
                    REQUEST.reset(token)
                return await self._done(ctx, name, wire)
            if work is None:
                self.name = client_name(ctx)
                caller = Caller(self.id, self.name, _sink(ctx))
                tokens = (REQUEST.set(ctx), ROUNDS.set(rounds))
                try:
                    work = asyncio.ensure_future(self.backend.call(name, arguments, caller))
                finally:
                    ROUNDS.reset(tokens[1])
                    REQUEST.reset(tokens[0])
                work.add_done_callback(_retrieved)
            asked = await _settled(work, rounds)
            if asked is not None:  # a question for the user: it goes back as the result
                card, answer = asked
                state = self.ledger.park(work, rounds, answer)
                form = types.ElicitRequestFormParams(
                    message=prompt_text(card), requested_schema=SCHEMA
                )
                return types.InputRequiredResult(
                    input_requests={"approval": types.ElicitRequest(params=form)},
                    request_state=state,
                )
            wire = work.result()
        except SCodeError as err:
            return _result(results.failure(err))
        except Exception as exc:  # a bug: logged, never shown
            log.exception("tools/call %s failed", name)
            failed = SCodeError(
                ErrorKind.INTERNAL, f"s-code failed to run {name} ({type(exc).__name__})"
            )
            return _result(results.failure(failed))
        return await self._done(ctx, name, wire)

    async def _done(self, ctx: Any, name: str, wire: Any) -> types.CallToolResult:
        if name == "tool_search" and isinstance(wire, dict):
            found = {t.get("name") for t in wire.get("tools", []) if isinstance(t, dict)}
            new = {n for n in found if isinstance(n, str)} - self.loaded
            if new:
                self.loaded |= new
                await self._list_changed(ctx)
        return _result(results.success(name, wire))

    async def _inline(self, ctx: Any, call: Awaitable[Any]) -> Any:
        """``call`` awaited in the request's own task (no task of its own: a scheduling fewer
        per call), cancelled as ``$/cancelRequest`` cancels on the LSP face: once, after which
        its cleanup runs whole. The SDK cancels a request's scope again at every await until
        it ends; a shield keeps that out, and the one cancel comes from the client's
        ``notifications/cancelled`` (:meth:`cancelled`) or the end of the connection
        (:meth:`end`)."""
        task = asyncio.current_task()
        assert task is not None
        self.inflight[task] = _request_key(ctx.request_id)
        try:
            with anyio.CancelScope(shield=True):
                return await call
        except asyncio.CancelledError:
            if task not in self.stopped:
                raise
            task.uncancel()  # ours, taken: the SDK drops what a cancelled request returns
            raise SCodeError(ErrorKind.CANCELLED, "the call was cancelled") from None
        finally:
            self.inflight.pop(task, None)
            self.stopped.discard(task)

    async def cancelled(self, ctx: Any, params: types.CancelledNotificationParams) -> None:
        """The client's ``notifications/cancelled`` (after the SDK's own handling of it)."""
        key = _request_key(params.request_id)
        for task, running in list(self.inflight.items()):
            if running == key:
                self._cancel(task)

    def _cancel(self, task: asyncio.Task[Any]) -> None:
        if self.inflight.pop(task, None) is not None:  # once
            self.stopped.add(task)
            task.cancel()

    def end(self) -> None:
        """The connection ends (its input ended, or what serves it was cancelled): each call
        still running is cancelled, once."""
        for task in list(self.inflight):
            self._cancel(task)

    async def _list_changed(self, ctx: Any) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.bus.publish(ToolsListChanged())
        else:
            with contextlib.suppress(Exception):
                await ctx.session.send_tool_list_changed()

    async def serve(self) -> None:
        """Serve one agent on this process's stdin and stdout."""
        async with hardened_stdio(on_end=self.end) as streams:
            await self.run(streams)

    async def serve_stream(
        self, read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], Awaitable[None]]
    ) -> None:
        """Serve one agent on a byte stream (an attached agent's, in the editor's sidecar)."""
        async with hardened_streams(read, write, LINK_LINE_BYTES, on_end=self.end) as streams:
            await self.run(streams)

    async def run(self, streams: Any) -> None:
        options = self.server.create_initialization_options(NotificationOptions(tools_changed=True))
        options.capabilities.logging = types.LoggingCapability()
        read, write = streams
        serving = asyncio.ensure_future(self.server.run(read, write, options))
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:  # what serves it was cancelled: so are its calls, once
            self.end()
            serving.cancel()
            with contextlib.suppress(BaseException):
                await serving
            raise
        finally:
            self.ledger.close()  # questions still out: denied, their calls end


async def _settled(
    work: asyncio.Future[Any], rounds: Rounds | None
) -> tuple[Card, asyncio.Future[bool]] | None:
    """Wait until ``work`` is done (None), or asks the user a question on a 2026 connection
    (the card and where its answer goes). When the request is cancelled (the client's
    ``notifications/cancelled``, or the client going away), ``work`` is cancelled once, as
    ``$/cancelRequest`` does on the LSP face, and waited for with the cancellation held off, so
    its cleanup runs whole; then the cancellation goes on."""
    question = asyncio.ensure_future(rounds.asked.get()) if rounds is not None else None
    waiting: set[asyncio.Future[Any]] = {work} if question is None else {work, question}
    try:
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        if question is not None:
            question.cancel()
        work.cancel()
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(BaseException):
                await asyncio.wait({work})
        raise
    if question is not None:
        if question.done() and not work.done():
            return question.result()
        question.cancel()
    return None


def _request_key(rid: Any) -> str:
    """A request id as the SDK matches a cancel to its request (``1`` and ``"1"`` alike)."""
    return str(rid)


def _retrieved(work: asyncio.Future[Any]) -> None:
    """A call whose question was never answered ends unread: its outcome is not an error."""
    if not work.cancelled():
        work.exception()


def _result(data: dict[str, Any]) -> types.CallToolResult:
    """The result, built without a validation pass: its parts are ours (one text block, the
    wire result), and the SDK checks the shape once more when it sends it."""
    content: list[types.ContentBlock] = [
        types.TextContent.model_construct(type="text", text=c["text"]) for c in data["content"]
    ]
    return types.CallToolResult.model_construct(
        content=content,
        structured_content=data.get("structuredContent"),
        is_error=data.get("isError", False),
    )


def _sink(ctx: Any) -> Callable[[str, dict[str, Any]], None]:
    """Where this call's command and terminal output goes: progress notifications with the
    call's token, else log messages (which a 2026 client gets only when it asked for them)."""
    token = (ctx.meta or {}).get("progress_token")
    count = 0
    sending: list[Awaitable[Any]] = []

    def notify(method: str, params: dict[str, Any]) -> None:
        nonlocal count
        if method not in STREAMED:
            return
        text = str(params.get("text", ""))[:MAX_STREAMED]
        if not text:
            return
        count += 1
        if token is not None:
            send = ctx.session.report_progress(count, None, text)
        else:
            send = _log(ctx, text)
        task = asyncio.get_running_loop().create_task(_quietly(send))
        sending.append(task)

    return notify


async def _log(ctx: Any, text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await ctx.session.send_log_message("info", text, logger="s-code")


async def _quietly(send: Awaitable[Any]) -> None:
    with contextlib.suppress(Exception):
        await send


async def _no_leak(ctx: Any, call_next: Any) -> Any:
    """A handler's unexpected failure is a plain internal error: no text of it reaches the
    client (the SDK would send the exception's message)."""
    try:
        return await call_next(ctx)
    except (MCPError, ValidationError):
        raise
    except Exception:
        log.exception("MCP request failed")
        raise MCPError(types.INTERNAL_ERROR, "Internal error") from None

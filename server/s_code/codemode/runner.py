"""One code-mode run: the job handed to a worker, its child calls answered, its deadline kept.

The worker asks for each child call over its stdout; the call goes through the :class:`Host`
(the tool layer: the one dispatch, so validation, the gate and redaction apply) only when the
host says the tool is read-only. Each child call is notified before (``running``) and after (its
status) with its arguments redacted, and listed in the result, or in the error's ``calls`` when
the run is stopped. Everything here awaits: the server answers other requests meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from s_code.codemode.limits import Limits
from s_code.codemode.workers import Pool, Worker
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.unicode import all_encodable

log = logging.getLogger(__name__)


class Host(Protocol):
    """What a run needs from the tool layer."""

    def check(self, name: str) -> None:
        """Raise ``tool_not_read_only`` (or ``unknown_tool``...) unless code mode may call it."""

    async def call(self, name: str, arguments: Any) -> Any:
        """The tool's wire result, through the one dispatch."""

    def redact(self, value: Any) -> Any: ...

    def notify(self, method: str, params: dict[str, Any]) -> None: ...


@dataclass
class ChildCall:
    call_id: str
    name: str
    arguments: Any
    """Redacted, as notified."""
    status: str = "running"
    """``running``, then ``ok``, ``error``, ``refused`` (not read-only) or ``cancelled``."""
    duration_ms: int | None = None
    error: str | None = None
    """The error kind of a failed call."""

    def to_wire(self) -> dict[str, Any]:
        wire = {
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "duration_ms": self.duration_ms,
        }
        if self.error is not None:
            wire["error"] = self.error
        return wire


@dataclass
class Outcome:
    run_id: str
    result: Any
    truncated: bool
    logs: str
    calls: list[ChildCall]
    duration_ms: int


class _Stop(Exception):
    """The run ends with this error (the worker is killed)."""

    def __init__(self, error: SCodeError) -> None:
        self.error = error


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


def strict_loads(text: str | bytes) -> Any:
    """JSON as the wire allows it: no NaN or Infinity (which a client's parser rejects), no
    number Python will not read (ValueError), no nesting Python cannot parse (ValueError)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def head_tail(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to its head and tail when longer than ``limit``; and how much was left out."""
    if len(text) <= limit:
        return text, 0
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n[... {omitted} characters omitted ...]\n{text[-half:]}", omitted


def _clean(value: Any) -> Any:
    """JSON from JavaScript may hold lone surrogates (``"\\udc00"``): replaced, never passed on."""
    if all_encodable(value):
        return value
    text = json.dumps(value, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")
    return json.loads(text)


@dataclass
class Run:
    host: Host
    limits: Limits
    run_id: str = field(default_factory=lambda: "r-" + uuid.uuid4().hex[:12])
    calls: list[ChildCall] = field(default_factory=list)
    refused: SCodeError | None = None
    started: float = field(default_factory=time.perf_counter)

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

    def _notify(self, call: ChildCall) -> None:
        params: dict[str, Any] = {
            "runId": self.run_id,
            "callId": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
            "status": call.status,
        }
        if call.duration_ms is not None:
            params["durationMs"] = call.duration_ms
        self.host.notify(methods.CODE_MODE_TOOL_CALL, params)

    def _error(self, kind: ErrorKind, message: str, logs: str = "", **data: Any) -> SCodeError:
        if self.refused is not None and kind != ErrorKind.TOOL_NOT_READ_ONLY:
            kind, message = self.refused.kind, self.refused.message
            data = {"name": self.refused.data.get("name")}
        details: dict[str, Any] = {"run_id": self.run_id, **data}
        details["calls"] = [c.to_wire() for c in self.calls]
        if logs:
            details["logs"] = logs
        return SCodeError(kind, message, **details)

    async def child_call(self, name: str, raw_args: Any) -> tuple[str, ChildCall]:
        """One child call: checked, notified, dispatched; the answer the worker reads (a JSON
        line: ``{"ok": result}`` or ``{"error": {kind, message, ...}}``) and the call, whose
        closing notification the caller sends once the worker has its answer."""
        if len(self.calls) >= self.limits.max_calls:
            raise _Stop(
                self._error(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"more than {self.limits.max_calls} child calls in one run",
                    limit="calls",
                    max=self.limits.max_calls,
                )
            )
        args = _clean(raw_args)
        call_id = f"{self.run_id}.{len(self.calls) + 1}"
        shown_name, shown_args = self.host.redact([name, args])
        call = ChildCall(call_id, shown_name, shown_args)
        self.calls.append(call)
        self._notify(call)
        t0 = time.perf_counter()
        try:
            if self.refused is not None:
                raise self.refused
            self.host.check(name)
            result = await self.host.call(name, args)
        except SCodeError as err:
            call.duration_ms = round((time.perf_counter() - t0) * 1000)
            if err.kind == ErrorKind.TOOL_NOT_READ_ONLY:
                call.status = "refused"
                self.refused = self.refused or err
            else:
                call.status = "error"
            call.error = err.kind.value
            error = {"kind": err.kind.value, "message": err.message, **err.data}
            return json.dumps({"error": error}, ensure_ascii=False), call
        except Exception:  # a tool's own failure: the script sees an internal error
            log.exception("code mode: %s failed", name)
            call.status = "error"
            call.error = ErrorKind.INTERNAL.value
            call.duration_ms = round((time.perf_counter() - t0) * 1000)
            error = {"kind": ErrorKind.INTERNAL.value, "message": f"{name} failed unexpectedly"}
            return json.dumps({"error": error}), call
        except BaseException:  # cancelled: the deadline, or $/cancelRequest
            call.status = "cancelled"
            call.duration_ms = round((time.perf_counter() - t0) * 1000)
            self._notify(call)
            raise
        call.duration_ms = round((time.perf_counter() - t0) * 1000)
        text = json.dumps(result, ensure_ascii=False)
        text_len = len(text)
        if text_len > self.limits.max_result_chars:
            call.status = "error"
            call.error = ErrorKind.LIMIT_EXCEEDED.value
            self._notify(call)
            raise _Stop(
                self._error(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"the result of {call.name} is {text_len} characters, more than the "
                    f"{self.limits.max_result_chars} a run takes in; ask for less (a line range, "
                    "fewer results)",
                    limit="result_size",
                    max=self.limits.max_result_chars,
                    name=call.name,
                )
            )
        call.status = "ok"
        return '{"ok":' + text + "}", call

    async def converse(self, worker: Worker, code: str) -> Outcome:
        """Hand the job to the worker and answer it until it is done."""
        loop = asyncio.get_running_loop()
        proc = worker.proc
        assert proc.stdin is not None and proc.stdout is not None
        reader = asyncio.StreamReader(limit=self.limits.line_bytes, loop=loop)
        rtransport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), proc.stdout
        )
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop), proc.stdin
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        job = {
            "code": code,
            "memory": self.limits.memory_bytes,
            "stack": self.limits.stack_bytes,
            "output": self.limits.max_output_chars,
            "cpu_s": self.limits.cpu_s,
        }
        try:
            writer.write(json.dumps(job).encode() + b"\n")
            await writer.drain()
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    raise _Stop(self._too_large()) from None
                if not line:
                    status = await worker.end()
                    raise _Stop(
                        self._error(
                            ErrorKind.CODE_ERROR,
                            "the JavaScript engine stopped ("
                            + (
                                f"signal {-status}"
                                if status is not None and status < 0
                                else f"exit status {status}"
                            )
                            + "); QuickJS crashes on some structures nested very deeply, and "
                            "when a script catches its out-of-memory error and goes on",
                            line=None,
                        )
                    )
                message = self._message(line)
                if message.get("t") == "call":
                    if len(line) > self.limits.max_args_chars + 1024:
                        raise _Stop(self._too_large())
                    answer, call = await self.child_call(
                        str(message.get("name")), message.get("args")
                    )
                    writer.write(answer.encode("utf-8", "surrogatepass") + b"\n")
                    # notified once the worker has its answer: it goes on meanwhile
                    self._notify(call)
                    await writer.drain()
                    continue
                return self._finish(message)
        finally:
            transport.close()
            rtransport.close()

    def _too_large(self) -> SCodeError:
        return self._error(
            ErrorKind.LIMIT_EXCEEDED,
            f"a child call's arguments are larger than {self.limits.max_args_chars} characters",
            limit="arguments_size",
            max=self.limits.max_args_chars,
        )

    def _message(self, line: bytes) -> dict[str, Any]:
        # The worker composes every message in Python, but it runs untrusted JavaScript in its
        # own memory: what it sends is checked as if anyone had written it.
        try:
            message = strict_loads(line)
        except ValueError:  # not JSON (NaN included), or nested deeper than Python parses
            message = None
        if isinstance(message, dict) and depth(message.get("args")) > self.limits.max_depth:
            raise _Stop(
                self._error(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"a child call's arguments nest more than {self.limits.max_depth} deep",
                    limit="depth",
                    max=self.limits.max_depth,
                )
            )
        if not isinstance(message, dict):
            raise _Stop(
                self._error(
                    ErrorKind.CODE_ERROR,
                    "a child call's arguments (or the result) could not be read back: not JSON, "
                    "or nested too deeply",
                    line=None,
                )
            )
        return message

    def _finish(self, message: dict[str, Any]) -> Outcome:
        logs, logs_cut = head_tail(str(message.get("logs", "")), self.limits.max_output_chars + 100)
        kind = message.get("t")
        if self.refused is not None:
            raise _Stop(
                self._error(
                    ErrorKind.TOOL_NOT_READ_ONLY,
                    self.refused.message,
                    logs,
                    name=self.refused.data.get("name"),
                )
            )
        if kind == "limit":
            limit = message.get("limit", "memory")
            size = self.limits.memory_bytes if limit == "memory" else self.limits.stack_bytes
            raise _Stop(
                self._error(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"the script ran out of {limit} ({message.get('message', '')}; the limit is "
                    f"{size} bytes)",
                    logs,
                    limit=limit,
                    max=size,
                )
            )
        if kind == "error":
            name, text, line = message.get("name"), message.get("message"), message.get("line")
            where = f" (line {line})" if line else ""
            data: dict[str, Any] = {"line": line, "error": f"{name}: {text}"}
            if message.get("tool_kind"):
                data["tool_error"] = message["tool_kind"]
            raise _Stop(self._error(ErrorKind.CODE_ERROR, f"{name}: {text}{where}", logs, **data))
        value_kind = message.get("kind")
        text, cut = head_tail(str(message.get("value", "")), self.limits.max_output_chars + 100)
        result: Any = None
        if value_kind == "json" and not cut:
            try:
                result = _clean(strict_loads(text))
            except ValueError:
                raise _Stop(
                    self._error(
                        ErrorKind.CODE_ERROR,
                        "the returned value could not be read back as JSON",
                        logs,
                        line=None,
                    )
                ) from None
            if depth(result) > self.limits.max_depth:
                raise _Stop(
                    self._error(
                        ErrorKind.LIMIT_EXCEEDED,
                        f"the returned value nests more than {self.limits.max_depth} deep",
                        logs,
                        limit="depth",
                        max=self.limits.max_depth,
                    )
                )
        elif value_kind in ("string", "text", "json"):
            result = text
        return Outcome(
            run_id=self.run_id,
            result=result,
            truncated=bool(cut or logs_cut)
            or bool(message.get("omitted"))
            or bool(message.get("logs_omitted")),
            logs=logs,
            calls=self.calls,
            duration_ms=self.elapsed_ms(),
        )


async def run(pool: Pool, host: Host, code: str, limits: Limits | None = None) -> Outcome:
    """Run ``code`` in a fresh worker; its outcome, or an SCodeError that lists the calls."""
    chosen = limits if limits is not None else Limits()
    state = Run(host, chosen)
    deadline = asyncio.timeout(chosen.timeout_ms / 1000)
    worker: Worker | None = None
    finished = False
    try:
        async with deadline, pool.slots:
            worker = await pool.take()
            outcome = await state.converse(worker, code)
            finished = True
            return outcome
    except _Stop as stop:
        raise stop.error from None
    except TimeoutError:
        if not deadline.expired():
            raise
        raise state._error(
            ErrorKind.TIMEOUT,
            f"the script ran longer than {chosen.timeout_ms} ms and was stopped",
            timeout_ms=chosen.timeout_ms,
        ) from None
    finally:
        if worker is not None:
            worker.end_soon(finished=finished)
            pool.ended()

"""A scripted stand-in for the model API, so that a real agent CLI becomes a test client.

A stdlib HTTP server on 127.0.0.1 (a random port, one thread per connection) speaks the two wire
protocols the agent CLIs use: the Anthropic Messages API (``POST /v1/messages``, streamed as SSE;
Claude Code may probe ``HEAD /`` first) and the OpenAI Responses API (``POST /v1/responses``, SSE;
Codex CLI). It does not think: it replies from a script, a list of steps, each either
:class:`CallTool` (call an MCP tool with these arguments) or :class:`Final` (answer with this text
and end the turn). The step is picked by how many tool results the request's conversation already
holds, so a retried or repeated request gets the same answer, and the script runs in order however
many side requests the CLI makes. Past the end of the script the last step repeats if it is a
:class:`Final`; otherwise the reply is a final text saying the script ran out. A step may also be
:class:`FromResults`: made, when it is reached, from the texts of the tool results the
conversation holds (a model that edits with the revision it just read).

Every request is logged (:attr:`ScriptedModel.requests`) so a test can assert what the model was
sent, e.g. which tool results reached it (:meth:`Request.tool_results`).

MCP tools reach the two APIs under different names: Claude Code calls them ``mcp__SERVER__TOOL``;
Codex groups them in a namespace tool (``{"type": "namespace", "name": "mcp__SERVER", "tools":
[...]}``) and the model's call carries ``"namespace"`` and the bare tool name. A :class:`CallTool`
names the MCP server and tool once and each API renders it its own way (for Codex, as the
request's namespace tool names it). A call to a tool the CLI did not offer is still made: the
CLI's own error then comes back as the tool result, where a test sees it.
"""

from __future__ import annotations

import http.server
import itertools
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CallTool:
    """Call tool ``tool`` of MCP server ``server`` with ``arguments``.

    ``server=None`` calls a tool of the CLI's own by its plain name (e.g. Claude Code's ``Read``).
    """

    server: str | None
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Final:
    """Answer with ``text`` and end the turn."""

    text: str


@dataclass(frozen=True)
class FromResults:
    """The step ``make`` returns given the texts of the tool results so far, oldest first."""

    make: Callable[[list[str]], CallTool | Final]


Step = CallTool | Final | FromResults


@dataclass(frozen=True)
class Request:
    """One request the model server received."""

    method: str
    path: str
    body: Any  # the parsed JSON body, or None
    api: str  # "anthropic", "openai" or "other"
    step: int | None  # the index of the script step it was answered with

    def tool_results(self) -> list[str]:
        """The texts of the tool results the conversation holds, oldest first."""
        if self.api == "anthropic":
            return [_text_of(b.get("content")) for b in _anthropic_results(self.body)]
        if self.api == "openai":
            return [_text_of(i.get("output")) for i in _openai_results(self.body)]
        return []

    def tool_names(self) -> list[str]:
        """The names of the tools the request offered the model (Codex namespaces as
        ``NAMESPACE/TOOL``)."""
        names: list[str] = []
        for tool in (self.body or {}).get("tools") or []:
            if tool.get("type") == "namespace":
                names += [f"{tool.get('name')}/{t.get('name')}" for t in tool.get("tools") or []]
            elif "name" in tool:
                names.append(tool["name"])
        return names


def _text_of(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return "" if content is None else json.dumps(content)


def _anthropic_results(body: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in (body or {}).get("messages") or []:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            out += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


_OPENAI_OUTPUTS = {"function_call_output", "custom_tool_call_output", "mcp_tool_call_output"}


def _openai_results(body: Any) -> list[dict[str, Any]]:
    items = (body or {}).get("input") or []
    return [i for i in items if isinstance(i, dict) and i.get("type") in _OPENAI_OUTPUTS]


def _claude_name(server: str, tool: str) -> str:
    """Claude Code's name of an MCP tool (characters other than letters, digits, ``_`` and ``-``
    become ``_``)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", server), re.sub(r"[^A-Za-z0-9_-]", "_", tool)
    return f"mcp__{clean[0]}__{clean[1]}"


def _codex_name(name: str) -> str:
    """Codex's rendering of an MCP server or tool name for the model (``-`` and other characters
    the Responses API refuses become ``_``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _sse(events: Sequence[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


class ScriptedModel:
    """The scripted model server; a context manager that starts and stops it, e.g.
    ``with ScriptedModel([CallTool("probe", "echo", {"text": "hi"}), Final("done")]) as model:``.
    """

    def __init__(self, script: Sequence[Step], model_name: str = "scripted-model") -> None:
        if not script:
            raise ValueError("a script needs at least one step")
        self.script = list(script)
        self.model_name = model_name
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"model": self})
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT``, no path)."""
        assert self._httpd is not None, "the model server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- the log ---------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    def conversation(self) -> list[Request]:
        """The model requests (Messages or Responses API), in order."""
        return [r for r in self.requests if r.api in ("anthropic", "openai")]

    def tool_results(self) -> list[str]:
        """The tool results of the longest conversation the model was sent."""
        turns = self.conversation()
        return max((r.tool_results() for r in turns), key=len, default=[])

    def _log(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    # -- the script ------------------------------------------------------------------------------

    def step_for(self, results: int) -> tuple[int | None, Step]:
        if results < len(self.script):
            return results, self.script[results]
        last = self.script[-1]
        if isinstance(last, Final):
            return len(self.script) - 1, last
        return None, Final(f"[scripted model: the script ended after {len(self.script)} steps]")

    def reply_step(self, results: list[str]) -> tuple[int | None, CallTool | Final]:
        """The step that answers a conversation holding ``results`` (tool result texts)."""
        index, step = self.step_for(len(results))
        if not isinstance(step, FromResults):
            return index, step
        try:
            return index, step.make(results)
        except Exception as exc:  # a test's mistake: the turn ends now, saying why, not hangs
            return index, Final(f"[scripted model: step {index} failed: {exc!r}]")

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    # -- Anthropic Messages API ------------------------------------------------------------------

    def anthropic_reply(self, body: Any) -> tuple[int | None, bytes, str]:
        texts = [_text_of(b.get("content")) for b in _anthropic_results(body)]
        index, step = self.reply_step(texts)
        if isinstance(step, CallTool):
            name = step.tool if step.server is None else _claude_name(step.server, step.tool)
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": self.next_id("toolu"),
                "name": name,
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.arguments)}
            final_block = {**block, "input": step.arguments}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            final_block = {"type": "text", "text": step.text}
            stop = "end_turn"
        message: dict[str, Any] = {
            "id": self.next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": (body or {}).get("model") or self.model_name,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if not (body or {}).get("stream"):
            whole = {**message, "content": [final_block], "stop_reason": stop}
            return index, json.dumps(whole).encode(), "application/json"
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
            {"type": "message_stop"},
        ]
        return index, _sse(events), "text/event-stream"

    # -- OpenAI Responses API --------------------------------------------------------------------

    def openai_reply(self, body: Any) -> tuple[int | None, bytes, str]:
        index, step = self.reply_step([_text_of(i.get("output")) for i in _openai_results(body)])
        response_id = self.next_id("resp")
        if isinstance(step, CallTool):
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self.next_id("fc"),
                "call_id": self.next_id("call"),
                "name": step.tool,
                "arguments": json.dumps(step.arguments),
            }
            if step.server is not None:
                item["name"], item["namespace"] = _resolve_codex(body, step.server, step.tool)
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": self.next_id("msg"),
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        usage = {
            "input_tokens": 1,
            "input_tokens_details": None,
            "output_tokens": 1,
            "output_tokens_details": None,
            "total_tokens": 2,
        }
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ]
        return index, _sse(events), "text/event-stream"


def _resolve_codex(body: Any, server: str, tool: str) -> tuple[str, str]:
    """(tool name, namespace) of an MCP tool as the request offered it to the model; Codex's
    rendering of the names when the request did not offer it."""
    want_ns, want_tool = f"mcp__{_codex_name(server)}", _codex_name(tool)
    for entry in (body or {}).get("tools") or []:
        if entry.get("type") != "namespace":
            continue
        ns = str(entry.get("name", ""))
        if ns != want_ns:
            continue
        for t in entry.get("tools") or []:
            if str(t.get("name")) in (tool, want_tool):
                return str(t["name"]), ns
    return want_tool, want_ns


class _Handler(http.server.BaseHTTPRequestHandler):
    model: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log is the record; stderr stays quiet

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"_unparsed": raw.decode(errors="replace")}

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def do_HEAD(self) -> None:
        self.model._log(Request("HEAD", self.path, None, "other", None))
        self._send(200, b"", "text/plain")

    def do_GET(self) -> None:
        self.model._log(Request("GET", self.path, None, "other", None))
        self._send(404, b'{"error": "not scripted"}', "application/json")

    def do_POST(self) -> None:
        body = self._body()
        route = self.path.split("?", 1)[0].rstrip("/")
        if route.endswith("/v1/messages"):
            api, reply = "anthropic", self.model.anthropic_reply
        elif route.endswith("/v1/responses"):
            api, reply = "openai", self.model.openai_reply
        else:
            self.model._log(Request("POST", self.path, body, "other", None))
            self._send(404, b'{"error": "not scripted"}', "application/json")
            return
        step, payload, content_type = reply(body)
        self.model._log(Request("POST", self.path, body, api, step))
        self._send(200, payload, content_type)

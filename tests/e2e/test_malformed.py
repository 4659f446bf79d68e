"""Framing and envelope abuse: every request gets a reply, and nothing leaves the server hanging.

Where JSON-RPC allows no reply (a notification), the server must stay alive and answer the next
valid request. Every wait is bounded by :data:`TIMEOUT`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import StdioClient, frame
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind

TIMEOUT = 10.0
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class Conn:
    """A StdioClient plus raw sends whose replies are picked out of every frame received."""

    def __init__(self, tmp: Path, initialize: bool = True) -> None:
        self.workspace = tmp / "ws"
        self.workspace.mkdir(parents=True, exist_ok=True)
        (self.workspace / "a.txt").write_text("alpha\nbeta\n")
        self.log_path = tmp / "stderr.log"
        env = dict(os.environ, S_CODE_STATE_DIR=str(tmp / "state"))
        with self.log_path.open("wb") as log:
            self.client = StdioClient(
                [sys.executable, "-m", "s_code", "serve"], env=env, stderr=log
            )
        if initialize:
            self.client.initialize(str(self.workspace))

    @property
    def proc(self) -> Any:
        return self.client.proc

    def stderr(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def frames(self, start: int = 0) -> list[dict[str, Any]]:
        return [json.loads(body) for body in self.client.raw_frames[start:]]

    def send_body(self, body: bytes) -> int:
        """Send one framed body; return the index of the next frame to come."""
        mark = len(self.client.raw_frames)
        self.client.send_raw(frame(body))
        return mark

    def wait_for(self, start: int, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for message in self.frames(start):
                if "method" not in message and match(message):
                    return message
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        pytest.fail(f"no matching reply within {TIMEOUT}s; stderr:\n{self.stderr()}")

    def reply_to(self, body: bytes | dict[str, Any] | list[Any], msg_id: Any) -> dict[str, Any]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        start = self.send_body(raw)
        return self.wait_for(start, lambda m: m.get("id") == msg_id and "id" in m)

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        try:
            return self.client.request_raw(method, params, timeout=TIMEOUT)
        except TimeoutError:
            pytest.fail(f"no reply to {method} within {TIMEOUT}s; stderr:\n{self.stderr()}")

    def assert_alive(self) -> None:
        reply = self.request(methods.TOOLS_LIST, {})
        assert "result" in reply, reply
        assert reply["result"]["tools"], reply

    def exit_code(self) -> int:
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except Exception:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"the server did not exit within {TIMEOUT}s; stderr:\n{self.stderr()}")

    def close(self) -> int:
        return self.client.close(timeout=TIMEOUT)


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Conn]:
    c = Conn(tmp_path_factory.mktemp("malformed"))
    try:
        yield c
    finally:
        code = c.close()
    assert code == 0, f"exit code {code} after shutdown + exit"


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Conn]:
    """A server of its own, not initialized, for lifecycle abuse."""
    c = Conn(tmp_path, initialize=False)
    try:
        yield c
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply and "result" not in reply, f"expected an error reply: {reply}"
    error: dict[str, Any] = reply["error"]
    assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), reply
    assert "Traceback" not in json.dumps(reply), reply
    return error


# -- bodies that are not JSON-RPC request objects -----------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": ', b"\xff\xfe{}", b"", b"   "],
    ids=["garbage", "truncated", "not-utf8", "empty", "blank"],
)
def test_body_that_is_not_json_is_a_parse_error(conn: Conn, body: bytes) -> None:
    reply = conn.reply_to(body, None)
    assert error_of(reply)["code"] == PARSE_ERROR
    assert reply["id"] is None
    conn.assert_alive()


def test_deeply_nested_json_gets_a_reply(conn: Conn) -> None:
    depth = 100_000
    params = "[" * depth + "]" * depth
    body = f'{{"jsonrpc": "2.0", "id": "deep", "method": "s-code/readFile", "params": {params}}}'
    start = conn.send_body(body.encode())
    reply = conn.wait_for(start, lambda m: m.get("id") in ("deep", None))
    assert error_of(reply)["code"] in (PARSE_ERROR, INVALID_PARAMS), reply
    conn.assert_alive()


@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": "b1", "method": methods.TOOLS_LIST, "params": {}}],
        [],
        [1, 2, 3],
        "hello",
        42,
        None,
        True,
    ],
    ids=["batch", "empty-batch", "batch-of-numbers", "string", "number", "null", "bool"],
)
def test_non_object_bodies_are_invalid_requests(conn: Conn, body: Any) -> None:
    # LSP has no batches: a JSON array is refused as one invalid request, answered with id null.
    reply = conn.reply_to(json.dumps(body).encode(), None)
    assert error_of(reply)["code"] == INVALID_REQUEST
    conn.assert_alive()


# -- envelopes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"id": "e1", "method": methods.TOOLS_LIST, "params": {}},
        {"jsonrpc": "1.0", "id": "e1", "method": methods.TOOLS_LIST, "params": {}},
        {"jsonrpc": 2.0, "id": "e1", "method": methods.TOOLS_LIST, "params": {}},
        {"jsonrpc": None, "id": "e1", "method": methods.TOOLS_LIST},
    ],
    ids=["missing-jsonrpc", "version-1.0", "version-number", "version-null"],
)
def test_wrong_jsonrpc_version_is_answered_with_its_id(conn: Conn, message: Any) -> None:
    reply = conn.reply_to(message, "e1")
    assert error_of(reply)["code"] == INVALID_REQUEST
    conn.assert_alive()


@pytest.mark.parametrize(
    "bad_id",
    [1.5, {"a": 1}, True, False, [1], 1e100],
    ids=["float", "object", "true", "false", "array", "big-float"],
)
def test_id_of_wrong_type_is_an_invalid_request(conn: Conn, bad_id: Any) -> None:
    message = {"jsonrpc": "2.0", "id": bad_id, "method": methods.TOOLS_LIST, "params": {}}
    reply = conn.reply_to(message, None)
    assert error_of(reply)["code"] == INVALID_REQUEST
    conn.assert_alive()


@pytest.mark.parametrize("method", [5, None, ["s-code/tools/list"], {"a": 1}, True])
def test_method_that_is_not_a_string_is_an_invalid_request(conn: Conn, method: Any) -> None:
    reply = conn.reply_to({"jsonrpc": "2.0", "id": "m1", "method": method}, "m1")
    assert error_of(reply)["code"] == INVALID_REQUEST
    conn.assert_alive()


@pytest.mark.parametrize("method", ["s-code/noSuchMethod", "nope", "", "textDocument/nope"])
def test_unknown_method_is_method_not_found(conn: Conn, method: str) -> None:
    assert error_of(conn.request(method, {}))["code"] == METHOD_NOT_FOUND
    conn.assert_alive()


def test_unknown_and_badly_typed_notifications_get_no_reply(conn: Conn) -> None:
    start = len(conn.client.raw_frames)
    conn.client.notify("s-code/noSuchNotification", {"x": 1})
    conn.client.notify("$/noSuchNotification", {"x": 1})
    conn.client.notify("textDocument/didOpen", {"x": 1})
    conn.client.notify("textDocument/didChange", "not an object")
    conn.assert_alive()
    replies = [m for m in conn.frames(start) if "method" not in m]
    assert len(replies) == 1, f"notifications were answered: {replies}"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("textDocument/hover", {"x": 1}),
        ("textDocument/hover", "not an object"),
        ("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": "a"}}),
        ("textDocument/definition", [1, 2]),
        ("workspace/symbol", {"query": 7}),
        ("initialize", {"processId": "abc", "capabilities": 5}),
    ],
    ids=["hover-x", "hover-string", "hover-types", "definition-array", "symbol", "initialize"],
)
def test_standard_method_with_badly_typed_params_gets_an_error(
    conn: Conn, method: str, params: Any
) -> None:
    reply = conn.request(method, params)
    error = error_of(reply)
    assert error["code"] in (INVALID_PARAMS, METHOD_NOT_FOUND), reply
    if method.startswith("textDocument/hover") or method == "initialize":
        assert error["code"] == INVALID_PARAMS, reply
    conn.assert_alive()


# -- params that look like envelopes are plain data ----------------------------------------------


def test_nested_jsonrpc_key_in_params_is_plain_data(conn: Conn) -> None:
    inner = {"jsonrpc": "2.0", "id": 99, "method": "exit"}
    reply = conn.request(methods.READ_FILE, {"path": inner})
    error = error_of(reply)
    assert error["data"]["kind"] == ErrorKind.INVALID_PARAMS
    assert error["data"]["field"] == "path"
    conn.assert_alive()


def test_nested_jsonrpc_keys_are_named_as_unknown_fields(conn: Conn) -> None:
    reply = conn.request(
        methods.TOOLS_CALL,
        {"name": "read_file", "arguments": {"path": "a.txt", "jsonrpc": "2.0", "id": 1}},
    )
    error = error_of(reply)
    assert error["data"]["kind"] == ErrorKind.INVALID_PARAMS
    assert error["data"]["field"] in ("arguments.jsonrpc", "arguments.id"), reply
    plan = {"plan": [{"step": "x", "status": "pending", "jsonrpc": "2.0", "method": "exit"}]}
    error = error_of(conn.request(methods.UPDATE_PLAN, plan))
    assert error["data"]["kind"] == ErrorKind.INVALID_PARAMS
    assert error["data"]["field"] in ("plan.0.jsonrpc", "plan.0.method"), error
    # pygls' default converter silently drops a ``type_name`` key; here it reaches the handler.
    error = error_of(conn.request(methods.READ_FILE, {"path": "a.txt", "type_name": "X"}))
    assert error["data"]["kind"] == ErrorKind.INVALID_PARAMS
    assert error["data"]["field"] == "type_name", error
    conn.assert_alive()


def test_nested_envelope_inside_a_string_value_works(conn: Conn) -> None:
    step = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
    reply = conn.request(methods.UPDATE_PLAN, {"plan": [{"step": step, "status": "pending"}]})
    assert reply["result"]["plan"][0]["step"] == step, reply
    reply = conn.request(methods.READ_FILE, {"path": "a.txt"})
    assert reply["result"]["line_count"] == 2, reply


def test_nested_envelope_in_an_untyped_value_reaches_the_tool(conn: Conn) -> None:
    # tools/call's ``arguments`` is a free-form object: the message-shaped dict must arrive intact.
    arguments = {"jsonrpc": "2.0", "id": 5, "method": "s-code/readFile", "params": {}}
    call = {"name": "no_such_tool", "arguments": arguments}
    assert (
        error_of(conn.request(methods.TOOLS_CALL, call))["data"]["kind"] == ErrorKind.UNKNOWN_TOOL
    )
    error = error_of(
        conn.request(methods.TOOLS_CALL, {"name": "read_file", "arguments": arguments})
    )
    assert error["data"]["kind"] == ErrorKind.INVALID_PARAMS
    assert error["data"]["field"].startswith("arguments."), error
    conn.assert_alive()


# -- framing ------------------------------------------------------------------------------------


def test_header_without_content_length_is_skipped(conn: Conn) -> None:
    conn.client.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n")
    conn.client.send_raw(b"X-Nothing: here\r\n\r\n")
    conn.client.send_raw(b"Content-Length: twelve\r\n\r\n")
    conn.assert_alive()


def test_header_variants_are_understood(conn: Conn) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "h1", "method": methods.TOOLS_LIST}).encode()
    start = len(conn.client.raw_frames)
    conn.client.send_raw(
        b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
        % len(body)
        + body
    )
    reply = conn.wait_for(start, lambda m: m.get("id") == "h1")
    assert "result" in reply, reply


def test_two_messages_in_one_write(conn: Conn) -> None:
    one = {"jsonrpc": "2.0", "id": "w1", "method": methods.TOOLS_LIST, "params": {}}
    two = {"jsonrpc": "2.0", "id": "w2", "method": methods.READ_FILE, "params": {"path": "a.txt"}}
    start = len(conn.client.raw_frames)
    conn.client.send_raw(frame(one) + frame(two))
    assert "result" in conn.wait_for(start, lambda m: m.get("id") == "w1")
    assert "result" in conn.wait_for(start, lambda m: m.get("id") == "w2")


def test_huge_content_length_closes_without_hanging(fresh: Conn) -> None:
    fresh.client.initialize(str(fresh.workspace))
    fresh.assert_alive()
    fresh.client.send_raw(b"Content-Length: 999999999999\r\n\r\n{}")
    code = fresh.exit_code()
    assert code is not None


def test_oversized_header_closes_without_hanging(fresh: Conn) -> None:
    fresh.client.send_raw(b"X-Padding: " + b"a" * 100_000 + b"\r\n\r\n")
    fresh.exit_code()


def test_eof_without_shutdown_exits(fresh: Conn) -> None:
    fresh.client.initialize(str(fresh.workspace))
    assert fresh.proc.stdin is not None
    fresh.proc.stdin.close()
    fresh.exit_code()


def test_exit_without_shutdown_is_exit_code_1(fresh: Conn) -> None:
    fresh.client.initialize(str(fresh.workspace))
    fresh.client.notify("exit")
    assert fresh.exit_code() == 1, "LSP: exit before shutdown ends the process with code 1"


# -- lifecycle ----------------------------------------------------------------------------------


def test_request_after_shutdown_is_an_invalid_request(fresh: Conn) -> None:
    fresh.client.initialize(str(fresh.workspace))
    assert fresh.request("shutdown")["result"] is None
    for method, params in ((methods.TOOLS_LIST, {}), ("textDocument/hover", {"x": 1}), ("x", {})):
        assert error_of(fresh.request(method, params))["code"] == INVALID_REQUEST
    fresh.client.notify("textDocument/didOpen", {"x": 1})
    fresh.client.notify("exit")
    assert fresh.exit_code() == 0


@pytest.mark.parametrize(
    "params",
    [
        {"processId": "abc", "capabilities": 5},
        {"capabilities": {}, "workspaceFolders": 7},
        {"processId": None},
        "nope",
        [1],
    ],
    ids=["types", "folders", "no-capabilities", "string", "array"],
)
def test_badly_typed_initialize_gets_an_error(fresh: Conn, params: Any) -> None:
    error = error_of(fresh.request("initialize", params))
    assert error["code"] == INVALID_PARAMS
    # The connection is still usable: a proper initialize succeeds afterwards.
    uri = fresh.workspace.as_uri()
    good = {"processId": None, "rootUri": uri, "capabilities": {}}
    reply = fresh.request("initialize", good)
    assert reply["result"]["serverInfo"]["name"] == "s-code", reply
    assert fresh.close() == 0


def test_initialize_without_params_gets_an_error(fresh: Conn) -> None:
    assert error_of(fresh.request("initialize"))["code"] == INVALID_PARAMS
    fresh.client.notify("exit")
    fresh.exit_code()


def test_s_code_request_before_initialize_gets_a_kind(fresh: Conn) -> None:
    reply = fresh.request(methods.READ_FILE, {"path": "a.txt"})
    error = error_of(reply)
    assert error["data"]["kind"] in {k.value for k in ErrorKind} - {"internal"}, reply


# -- what the transport measures on a body: surrogates and size ---------------------------------


def _create(path: str, content_json: bytes, msg_id: str) -> bytes:
    """An applyPatch body creating ``path``, with ``content_json`` spliced in verbatim."""
    return (
        b'{"jsonrpc": "2.0", "id": "' + msg_id.encode() + b'", "method": "s-code/applyPatch", '
        b'"params": {"files": [{"path": "' + path.encode() + b'", "expected_revision": null, '
        b'"content": ' + content_json + b"}]}}"
    )


@pytest.fixture(scope="module")
def editing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Conn]:
    c = Conn(tmp_path_factory.mktemp("incoming"))
    c.request(methods.PERMISSION_MODE_SET, {"mode": "accept-edits"})
    try:
        yield c
    finally:
        c.close()


@pytest.mark.parametrize(
    "content",
    [b'"a\\ud800b"', b'"a\\uDFFFb"', b'"a\xed\xa0\x80b"', b'"\\\\\\ud800"'],
    ids=["escape", "upper-hex-escape", "raw-surrogate-bytes", "escape-after-escaped-backslash"],
)
@pytest.mark.parametrize("padding", [0, 100_000], ids=["small", "large-body"])
def test_lone_surrogate_in_a_body_is_refused_by_field(
    editing: Conn, content: bytes, padding: int
) -> None:
    """Large bodies go to the faster parser first, which rejects lone surrogates outright:
    json.loads then reads them, and the refusal still names the field."""
    msg_id = f"sur-{len(editing.client.raw_frames)}"
    content = content[:1] + b"x" * padding + content[1:]
    reply = editing.reply_to(_create("sur.txt", content, msg_id), msg_id)
    error = error_of(reply)
    assert error["data"]["kind"] == "invalid_params", reply
    assert error["data"]["field"] == "files.0.content", reply
    assert not (editing.workspace / "sur.txt").exists()


@pytest.mark.parametrize(
    "body",
    [
        b'"a\\ud800b"',
        b'"\\uDFFF"',
        b'"\\udc00\\ud800"',  # a trailing surrogate before a leading one: both lone
        b'"\\ud800\\u0041"',
        b'{"\\ud800": 1}',
        b'"a\xed\xa0\x80b"',  # raw surrogate bytes (json.loads reads them as one too)
    ],
)
def test_the_large_body_parser_refuses_every_lone_surrogate(body: bytes) -> None:
    """The transport skips its surrogate scan for what pydantic-core parsed (transport._decode),
    on this premise: that parser refuses lone surrogates. Positive control: json.loads reads
    each body and hands over a string holding a lone surrogate."""
    from pydantic_core import from_json

    parsed = json.loads(body)
    text = parsed if isinstance(parsed, str) else next(iter(parsed))
    assert any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    with pytest.raises(ValueError):
        from_json(body, cache_strings="keys")


def test_the_large_body_parser_reads_surrogate_pairs() -> None:
    from pydantic_core import from_json

    assert from_json(b'"\\ud83d\\ude00"', cache_strings="keys") == "\U0001f600"


def test_utf16_body_with_a_lone_surrogate_is_refused(editing: Conn) -> None:
    """json.loads reads UTF-16 bodies, and one can carry a surrogate that no byte pattern of
    UTF-8 shows: the transport makes no claim about such a body, so the full check runs."""
    text = _create("u16.txt", b'"a\\u0041b"', "u16").decode().replace("a\\u0041b", "a\ud800b")
    body = text.encode("utf-16-le", "surrogatepass")
    from s_code.protocol import incoming

    # Positive control: the byte scan alone finds nothing in this body.
    assert incoming._MAYBE_SURROGATE.search(body) is None
    assert incoming.measure(body).text_clean is False
    error = error_of(editing.reply_to(body, "u16"))
    assert error["data"]["kind"] == "invalid_params" and error["data"]["field"] == "files.0.content"
    assert not (editing.workspace / "u16.txt").exists()


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (b'"\\\\ud800 is how JSON escapes it"', "\\ud800 is how JSON escapes it"),
        (b'"smile \\ud83d\\ude00"', "smile \U0001f600"),
        ('"raw \U0001f600"'.encode(), "raw \U0001f600"),
    ],
    ids=["escaped-backslash", "surrogate-pair-escape", "raw-astral"],
)
def test_text_that_only_looks_like_a_surrogate_is_written(
    editing: Conn, content: bytes, text: str
) -> None:
    name = f"ok-{len(editing.client.raw_frames)}.txt"
    reply = editing.reply_to(_create(name, content, name), name)
    assert "result" in reply, reply
    assert (editing.workspace / name).read_text(encoding="utf-8") == text


def test_request_over_16_mib_is_refused_by_its_body_size(editing: Conn) -> None:
    content = json.dumps("x" * (16 * 1024 * 1024)).encode()  # the body is just over 16 MiB
    reply = editing.reply_to(_create("big.txt", content, "big"), "big")
    error = error_of(reply)
    assert error["data"]["kind"] == "limit_exceeded", reply
    assert error["data"]["limit"] == "request_size", reply
    assert error["data"]["actual"] > 16 * 1024 * 1024
    assert not (editing.workspace / "big.txt").exists()


def test_a_reply_with_non_ascii_text_is_framed_by_its_utf8_length(editing: Conn) -> None:
    """Tool replies are serialized by pydantic-core as raw UTF-8 (json.dumps would escape):
    Content-Length counts bytes, and the text arrives intact."""
    text = "é€ ß 日本 😀\n" * 50
    (editing.workspace / "utf8.txt").write_text(text, encoding="utf-8")
    start = len(editing.client.raw_frames)
    reply = editing.request(methods.READ_FILE, {"path": "utf8.txt"})
    assert reply["result"]["line_count"] == 50, reply
    assert reply["result"]["numbered_content"].split("\n")[0].endswith("é€ ß 日本 😀")
    raw = next(f for f in editing.client.raw_frames[start:] if b'"numbered_content"' in f)
    assert "😀".encode() in raw, "the reply carries raw UTF-8"

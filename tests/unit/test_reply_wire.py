"""How a tool reply leaves the server: pydantic-core's bytes behind pygls' own header, and a
failed write logged like pygls does it, never answered by a second reply."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core  # noqa: F401  (loaded, as it is after the first tool call)

from s_code.lsp.handlers import create_server


class Writer:
    def __init__(self, fail_first: bool = False) -> None:
        self.fail_first = fail_first
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self.fail_first:
            self.fail_first = False
            raise OSError(5, "Input/output error")
        self.frames.append(data)

    def close(self) -> None:
        pass


def _messages(frames: list[bytes]) -> list[dict[str, Any]]:
    out = []
    for frame in frames:
        header, _, body = frame.partition(b"\r\n\r\n")
        length = int(header.split(b"\r\n")[0].split(b":")[1])
        assert length == len(body), frame[:200]
        out.append(json.loads(body))
    return out


def test_a_reply_is_framed_by_its_utf8_bytes() -> None:
    server = create_server()
    writer = Writer()
    server.protocol.set_writer(writer)
    server.protocol._send_response("r1", {"text": "é😀\u2028", "n": 1})
    assert (
        writer.frames[0].startswith(b"Content-Length: ")
        and b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" in writer.frames[0]
    )
    assert _messages(writer.frames) == [
        {"jsonrpc": "2.0", "id": "r1", "result": {"text": "é😀\u2028", "n": 1}}
    ]


def test_a_failed_write_is_not_answered_by_a_second_reply() -> None:
    server = create_server()
    writer = Writer(fail_first=True)
    server.protocol.set_writer(writer)
    server.protocol._send_response("r1", {"text": "x"})  # must not raise into pygls' callback
    for message in _messages(writer.frames):
        assert message.get("id") != "r1", message  # no error reply (with a traceback) follows
        assert "traceback" not in json.dumps(message)

"""The first message of a TCP client: ``initialize`` with the token, passed on without it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from s_code.lsp.admission import admit_initialize

TOKEN = "t0ken-" + "a" * 37


def initialize(options: Any, **extra: Any) -> bytes:
    params: dict[str, Any] = {"processId": None, "rootUri": "file:///w", "capabilities": {}}
    if options is not None:
        params["initializationOptions"] = options
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params, **extra}
    ).encode()


def test_the_right_token_is_admitted_and_removed() -> None:
    admitted = admit_initialize(initialize({"token": TOKEN, "permissionMode": "workspace"}), TOKEN)
    assert admitted is not None
    message = json.loads(admitted)
    assert message["params"]["initializationOptions"] == {"permissionMode": "workspace"}
    assert TOKEN.encode() not in admitted


@pytest.mark.parametrize(
    "body",
    [
        initialize(None),
        initialize({}),
        initialize({"token": TOKEN[:-1]}),
        initialize({"token": TOKEN + "x"}),
        initialize({"token": ""}),
        initialize({"token": [TOKEN]}),
        initialize({"token": "\udc80"}),
        initialize([TOKEN]),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "initialize",
                "params": {"initializationOptions": {"token": TOKEN}},
            }
        ).encode(),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "shutdown",
                "params": {"initializationOptions": {"token": TOKEN}},
            }
        ).encode(),
        json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "initialize"}]).encode(),
        b"{not json",
        b"[" * 100_000,
    ],
    ids=[
        "no options",
        "no token",
        "short",
        "long",
        "empty",
        "not a string",
        "lone surrogate",
        "options not an object",
        "a notification",
        "another method",
        "a batch",
        "not JSON",
        "deep",
    ],
)
def test_anything_else_is_refused(body: bytes) -> None:
    assert admit_initialize(body, TOKEN) is None


def test_what_is_passed_on_is_what_was_checked() -> None:
    # Duplicate keys: whichever one a parser keeps, the session reads the re-encoding of the
    # message that was checked, which has one token-free set of options.
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"initializationOptions":'
        b' {"token": "wrong"}, "initializationOptions": {"token": "%s"}}}' % TOKEN.encode()
    )
    admitted = admit_initialize(body, TOKEN)
    assert admitted is not None
    assert admitted.count(b"initializationOptions") == 1
    assert json.loads(admitted)["params"]["initializationOptions"] == {}

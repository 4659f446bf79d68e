"""A cattrs converter that keeps custom messages' params and results as plain JSON.

pygls' default converter turns the params of every method lsprotocol does not know into namedtuples
(and silently drops a ``type_name`` key). ``s-code/*`` params are validated by pydantic from the raw
dicts instead, so this converter leaves them alone. Standard LSP messages are structured as usual.
"""

from __future__ import annotations

from typing import Any

from cattrs import Converter
from lsprotocol import converters
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage


def _request(obj: dict[str, Any], cls: type) -> Any:
    return cls(id=obj["id"], method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params"))


def _notification(obj: dict[str, Any], cls: type) -> Any:
    return cls(method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params"))


def _response(obj: dict[str, Any], cls: type) -> Any:
    return cls(id=obj["id"], jsonrpc=obj["jsonrpc"], result=obj.get("result"))


def raw_converter() -> Converter:
    converter = converters.get_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, _request)
    converter.register_structure_hook(JsonRPCNotification, _notification)
    converter.register_structure_hook(JsonRPCResponseMessage, _response)
    return converter

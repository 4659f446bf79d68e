"""An MCP ``CallToolResult`` as an s-code tool result (snake_case, plain JSON).

Text stays text; an image or audio keeps its data up to ``MAX_BINARY`` characters of base64 (a
larger one is described instead); a resource link and an embedded resource keep their URI, name
and type, and an embedded resource its text (or its blob, bounded like an image); structured
content is passed as it is. A server's own error (``isError``) is a result with
``is_error: true``, for the model to read, not a failure of the call. The dispatch then passes
all of it through the session's redactor.
"""

from __future__ import annotations

from typing import Any

MAX_BINARY = 256 * 1024


def _binary(kind: str, data: str, mime: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": kind, "mime_type": mime}
    if len(data) <= MAX_BINARY:
        item["data"] = data
    else:
        item["omitted"] = f"{len(data)} characters of base64, too large to pass on"
    return item


def content_item(block: Any) -> dict[str, Any]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return _binary(kind, block.data, getattr(block, "mime_type", None))
    if kind == "resource_link":
        return {
            "type": "resource_link",
            "uri": str(block.uri),
            "name": getattr(block, "name", None),
            "mime_type": getattr(block, "mime_type", None),
            "description": getattr(block, "description", None),
        }
    if kind == "resource":
        res = block.resource
        item: dict[str, Any] = {
            "type": "resource",
            "uri": str(res.uri),
            "mime_type": getattr(res, "mime_type", None),
        }
        if getattr(res, "text", None) is not None:
            item["text"] = res.text
        elif getattr(res, "blob", None) is not None:
            item.update(_binary("resource", res.blob, item["mime_type"]))
        return item
    return {"type": str(kind), "note": "a content type s-code does not pass on"}


def tool_result(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "content": [content_item(b) for b in (getattr(result, "content", None) or [])],
        "is_error": bool(getattr(result, "is_error", False)),
    }
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        out["structured_content"] = structured
    return {k: v for k, v in out.items() if v is not None}

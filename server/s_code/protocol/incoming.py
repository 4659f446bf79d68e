"""Facts about the request being handled, measured once on its raw body by the transport.

The transport sets :data:`INCOMING` around the handling of each message; pygls runs every handler
in a copy of that context, so a handler (and the threads it starts with ``asyncio.to_thread``)
sees the facts of its own request. In-process callers have none, and the checks that use these
facts fall back to measuring the parsed params.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass

# A lone surrogate reaches a decoded string only from a \uD800-\uDFFF escape, or from raw
# surrogate bytes (json.loads decodes UTF-8 with "surrogatepass"). Escaped backslashes can
# make this match where no surrogate is: that only costs the full check.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _maybe_surrogate(body: bytes) -> bool:
    # Substring scans first: much faster than the regex over a large body that has neither.
    if b"\\u" not in body and b"\xed" not in body:
        return False
    return _MAYBE_SURROGATE.search(body) is not None


@dataclass(frozen=True)
class Incoming:
    size: int  # bytes of the JSON-RPC message body
    text_clean: bool  # no string in the message can hold a lone surrogate


INCOMING: ContextVar[Incoming | None] = ContextVar("s_code_incoming", default=None)


def measure(body: bytes, *, unicode_checked: bool = False) -> Incoming:
    """``unicode_checked``: the parser already refused lone surrogates (pydantic-core's does),
    so the scan is skipped (a two-byte search costs about 0.2 ms over a 230 KiB batch)."""
    if unicode_checked:
        return Incoming(len(body), True)
    # json.loads reads UTF-16 and UTF-32 too (found by NULs or a BOM): then no claim is made.
    utf8 = b"\x00" not in body[:4] and not body.startswith((b"\xfe\xff", b"\xff\xfe"))
    return Incoming(len(body), utf8 and not _maybe_surrogate(body))


def current() -> Incoming | None:
    return INCOMING.get()

"""Turning domain errors into JSON-RPC errors, without tracebacks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException

from s_code.protocol.errors import ERROR_CODES, ErrorKind, SCodeError

log = logging.getLogger(__name__)


def to_jsonrpc(err: SCodeError) -> JsonRpcException:
    return JsonRpcException(message=err.message, code=err.code, data=err.to_data())


def internal_error(exc: BaseException) -> JsonRpcException:
    return JsonRpcException(
        message=f"internal error ({type(exc).__name__}); details are in the s-code log",
        code=ERROR_CODES[ErrorKind.INTERNAL],
        data={"kind": ErrorKind.INTERNAL.value},
    )


async def guarded(method: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run one request: domain errors keep their kind, anything else is logged, never echoed."""
    try:
        return await call()
    except SCodeError as err:
        raise to_jsonrpc(err) from None
    except asyncio.CancelledError:
        raise to_jsonrpc(SCodeError(ErrorKind.CANCELLED, f"{method} was cancelled")) from None
    except JsonRpcException:
        raise
    except Exception as exc:
        log.exception("unexpected failure in %s", method)
        raise internal_error(exc) from None

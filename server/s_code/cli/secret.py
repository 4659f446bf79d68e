"""``s-code secret set|list|delete <service>/<account>``: keyring values for credential handles.

``set`` reads the value from the terminal with echo off, or, when stdin is not a terminal, all of
stdin (one trailing newline dropped); never from the command line, where ``ps`` and the shell
history would see it. It stores the value in the system keyring (refusing a plaintext or failing
backend unless ``S_CODE_ALLOW_PLAINTEXT_KEYRING=1``) and records the name for ``list``, which
prints the handles (names only) on stdout. ``delete`` removes the value and the name.

Every path ends in one line on stderr and an exit status: 0 done, 1 failed (keyring refused or
unreachable, nothing stored under that name), 2 a bad name or value. No value is ever printed.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import warnings

from s_code.credentials import index, keystore
from s_code.credentials.handles import Handle, keyring_handle
from s_code.protocol.display import shown
from s_code.protocol.errors import SCodeError

MAX_VALUE_BYTES = 65536
FAILED = 1
USAGE = 2


class _Refusal(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _say(message: str) -> None:
    sys.stderr.write(f"s-code secret: {shown(message)}\n")


def _read_value(handle: Handle) -> str:
    if sys.stdin.isatty():
        with warnings.catch_warnings():
            warnings.simplefilter("error", getpass.GetPassWarning)  # never read with echo on
            try:
                value = getpass.getpass(f"Value for {handle.text} (not echoed): ")
            except getpass.GetPassWarning:
                raise _Refusal(
                    "cannot turn echo off on this terminal: pipe the value on stdin", FAILED
                ) from None
    else:
        value = sys.stdin.buffer.read(MAX_VALUE_BYTES + 1).decode("utf-8", "strict")
        value = value.removesuffix("\n").removesuffix("\r")
    if not value:
        raise _Refusal("the value is empty: nothing stored", USAGE)
    if len(value.encode()) > MAX_VALUE_BYTES:
        raise _Refusal(f"the value is longer than {MAX_VALUE_BYTES} bytes: nothing stored", USAGE)
    if "\0" in value:
        raise _Refusal("the value holds a NUL byte, which no environment can carry", USAGE)
    return value


def _set(handle: Handle) -> str:
    keystore.current()  # refuse a weak keyring before the user types anything
    value = _read_value(handle)
    service, account = handle.service_account
    backend = keystore.set_secret(service, account, value)
    del value
    index.add(handle.name)
    weak = keystore.classify(backend) != "system"
    note = f" (allowed by {keystore.ALLOW_ENV}=1: it may be kept in plain text)" if weak else ""
    return f"stored {handle.text} in {keystore.backend_name(backend)}{note}"


def _delete(handle: Handle) -> str:
    service, account = handle.service_account
    deleted = keystore.delete_secret(service, account)
    index.remove(handle.name)
    if not deleted:
        raise _Refusal(f"nothing is stored under {handle.name} in the keyring", FAILED)
    return f"deleted {handle.text}"


def _list() -> str:
    found = index.names()
    for name in found:
        sys.stdout.write(f"{shown(Handle('keyring', name).text)}\n")
    count = f"{len(found)} secret{'s' if len(found) != 1 else ''}"
    return f"{count} stored by s-code (names only; the values stay in the keyring)"


def run(args: argparse.Namespace) -> int:
    """The action of ``args``; one line on stderr, and the exit status."""
    try:
        if args.action == "list":
            message = _list()
        else:
            handle = keyring_handle(args.name, "SERVICE/ACCOUNT")
            message = _set(handle) if args.action == "set" else _delete(handle)
    except SCodeError as err:
        _say(err.message)
        return USAGE
    except _Refusal as err:
        _say(str(err))
        return err.status
    except keystore.KeyringUnavailable as err:
        _say(err.message)
        return FAILED
    except (KeyboardInterrupt, EOFError):
        _say("cancelled: nothing stored")
        return FAILED
    except UnicodeDecodeError:
        _say("the value on stdin is not UTF-8: nothing stored")
        return USAGE
    except OSError as err:
        _say(f"{type(err).__name__}: {err}")
        return FAILED
    _say(message)
    return 0

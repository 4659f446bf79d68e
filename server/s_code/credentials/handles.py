"""The syntax of credential handles, and finding them in a host-process entry's args and env.

A configuration entry (an MCP server, a hook, a terminal) names a secret, never holds it::

    ${secret:keyring:<service>/<account>}   a value in the system keyring (``s-code secret set``)
    ${secret:env:<NAME>}                    a variable of the sidecar's own environment

``service`` and ``account`` are ``[A-Za-z0-9._@+-]+`` with exactly one ``/`` between them;
``NAME`` is ``[A-Za-z_][A-Za-z0-9_]*``. A handle may stand inside a longer string
(``--token=${secret:env:TOKEN}``, ``Bearer ${secret:keyring:github/me}``), in an ``env`` value or an
``args`` item; nowhere else (not in an env name, the command or the cwd).

Anything that starts like a handle, ``${secret:`` in any case and spacing, must be a whole, valid
handle: a malformed one is ``invalid_params`` naming the field path (``env.API_KEY``,
``args.2``), never passed on as text. There is no escape for a literal ``${secret:``.

Nothing here reads a value: this module is pure, and its handle names are what previews and trust
hashes show (see :mod:`s_code.credentials.resolve` for the values).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from s_code.protocol.errors import SCodeError, invalid_params

Source = Literal["keyring", "env"]

PART = r"[A-Za-z0-9._@+-]+"
KEYRING_NAME = re.compile(rf"(?P<service>{PART})/(?P<account>{PART})")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Where a handle starts, however it is spelled: every such place must parse as a whole handle.
_START = re.compile(r"\$\{\s*secret\s*:", re.IGNORECASE)
_HANDLE = re.compile(
    rf"\$\{{secret:(?:keyring:(?P<keyring>{PART}/{PART})|env:(?P<env>{ENV_NAME.pattern}))\}}"
)


@dataclass(frozen=True, order=True)
class Handle:
    """One credential handle: where its value lives (``source``) and its ``name`` there
    (``service/account`` for the keyring, the variable name for env)."""

    source: Source
    name: str

    @property
    def text(self) -> str:
        """The canonical handle, as configuration writes it (a name, never a value)."""
        return f"${{secret:{self.source}:{self.name}}}"

    @property
    def service_account(self) -> tuple[str, str]:
        """A keyring handle's service and account."""
        service, _, account = self.name.partition("/")
        return service, account

    def __str__(self) -> str:
        return self.text


def keyring_handle(name: str, field: str = "name") -> Handle:
    """The keyring handle of ``service/account`` (or of its whole ``${secret:keyring:...}`` text),
    else ``invalid_params`` naming ``field``."""
    match = _HANDLE.fullmatch(name)
    if match and match["keyring"]:
        return Handle("keyring", match["keyring"])
    if KEYRING_NAME.fullmatch(name):
        return Handle("keyring", name)
    raise invalid_params(
        f"{field}: a keyring secret is named <service>/<account>, each of letters, digits and "
        "._@+- only",
        field,
    )


def _malformed(text: str, at: int, field: str) -> SCodeError:
    rest = text[at:]
    if not rest.startswith("${secret:"):
        why = "write it exactly ${secret:...} (lower case, no spaces)"
    elif rest.startswith("${secret:keyring:"):
        why = (
            "a keyring handle is ${secret:keyring:<service>/<account>}, with letters, digits and "
            "._@+- on each side of one /"
        )
    elif rest.startswith("${secret:env:"):
        why = "an env handle is ${secret:env:<NAME>}, NAME of letters, digits and _"
    else:
        why = "the source must be keyring or env"
    return invalid_params(
        f"{field}: malformed credential handle at character {at}: {why}", field, position=at
    )


def find_in(text: str, field: str) -> Iterator[tuple[int, int, Handle]]:
    """Each handle in ``text`` with its span; a malformed one raises ``invalid_params``."""
    for start in _START.finditer(text):
        at = start.start()
        match = _HANDLE.match(text, at)
        if match is None:
            raise _malformed(text, at, field)
        if match["keyring"]:
            yield at, match.end(), Handle("keyring", match["keyring"])
        else:
            yield at, match.end(), Handle("env", match["env"])


def refuse_handles(text: str, field: str) -> None:
    """``invalid_params`` if ``text`` (a command, a cwd, an env name) holds anything handle-like:
    handles belong in env values and args only."""
    found = _START.search(text)
    if found:
        raise invalid_params(
            f"{field}: credential handles may stand only in env values and args",
            field,
            position=found.start(),
        )


def _fields(args: Sequence[str], env: Mapping[str, str], field: str) -> Iterator[tuple[str, str]]:
    prefix = f"{field}." if field else ""
    for i, arg in enumerate(args):
        yield f"{prefix}args.{i}", arg
    for key, value in env.items():
        refuse_handles(key, f"{prefix}env")
        yield f"{prefix}env.{key}", value


def entry_handles(
    args: Sequence[str], env: Mapping[str, str], field: str = ""
) -> list[tuple[str, Handle]]:
    """Every handle of an entry with the field path it stands in (``args.1``, ``env.TOKEN``,
    under ``field.`` when given); a malformed one raises ``invalid_params``."""
    return [(path, h) for path, text in _fields(args, env, field) for *_, h in find_in(text, path)]


def handle_names(args: Sequence[str], env: Mapping[str, str], field: str = "") -> list[str]:
    """The distinct handles an entry uses, canonical and sorted: for previews and trust hashes.
    Names only; nothing is resolved."""
    return sorted({h.text for _, h in entry_handles(args, env, field)})

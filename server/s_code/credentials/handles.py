"""The syntax of credential handles, finding them in a host-process entry's env, and refusing
them everywhere else.

A configuration entry (an MCP server, a hook, a terminal) names a secret, never holds it::

    ${secret:keyring:<service>/<account>}   a value in the system keyring (``s-code secret set``)
    ${secret:env:<NAME>}                    a variable of the sidecar's own environment

``service`` and ``account`` are ``[A-Za-z0-9._@+-]+`` with exactly one ``/`` between them;
``NAME`` is ``[A-Za-z_][A-Za-z0-9_]*``. A handle may stand inside a longer string
(``Bearer ${secret:keyring:github/me}``) in an ``env`` value, and nowhere else: not in an env
name, the cwd, the command or any argument. A resolved value in an argument would be in the
process's command line, which every program of the user can read (``/proc/PID/cmdline``, a
sandboxed command at tier 2 included); a process's environment is readable only by what may
trace it, which no sandboxed command may (:func:`refuse_in_args`).

Anything that starts like a handle, ``${secret:`` in any case and spacing, must be a whole, valid
handle: a malformed one is ``invalid_params`` naming the field path (``env.API_KEY``), never
passed on as text. There is no escape for a literal ``${secret:``.

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
    """``invalid_params`` if ``text`` (a cwd, an env name) holds anything handle-like: handles
    belong in env values only."""
    found = _START.search(text)
    if found:
        raise invalid_params(
            f"{field}: credential handles may stand only in env values",
            field,
            position=found.start(),
        )


IN_ARGUMENT = (
    "a credential handle may not stand in a command line: while the process runs, every "
    "program of yours can read its arguments (/proc/PID/cmdline, a sandboxed command at tier 2 "
    'too); pass the secret in env instead ("env": {"NAME": "${secret:...}"}) and have the '
    "program read the variable NAME"
)
"""Why a handle in an argument, a command or a hook's shell line is refused."""


def refuse_in_command(text: str, field: str) -> None:
    """``invalid_params`` naming ``field`` if ``text`` (a program, an argument, a shell line)
    holds anything handle-like: a secret is never put into an argv."""
    found = _START.search(text)
    if found:
        raise invalid_params(f"{field}: {IN_ARGUMENT}", field, position=found.start())


def refuse_in_args(args: Sequence[str], field: str) -> None:
    """:func:`refuse_in_command` for each of ``args``, naming ``field.N`` (``command.2``,
    ``mcpServers.gh.args.0``): the ``env`` wrapper's ``NAME=${secret:...}`` is an argument too."""
    for i, arg in enumerate(args):
        refuse_in_command(arg, f"{field}.{i}")


def entry_handles(env: Mapping[str, str], field: str = "") -> list[tuple[str, Handle]]:
    """Every handle of an entry's ``env`` with the field path it stands in (``env.TOKEN``,
    under ``field.`` when given); a malformed one, or one in a name, raises ``invalid_params``."""
    prefix = f"{field}." if field else ""
    found = []
    for key, value in env.items():
        refuse_handles(key, f"{prefix}env")
        where = f"{prefix}env.{key}"
        found += [(where, h) for *_, h in find_in(value, where)]
    return found


def handle_names(env: Mapping[str, str], field: str = "") -> list[str]:
    """The distinct handles an entry's ``env`` uses, canonical and sorted: for previews and
    trust hashes. Names only; nothing is resolved."""
    return sorted({h.text for _, h in entry_handles(env, field)})

"""Substituting the values of credential handles, at spawn time only.

:func:`resolve` is called by the host-process code immediately before it spawns a trusted entry,
and at no other time: previews, trust hashes, ``hostProcesses/list`` and saved configuration see
handle names only (:func:`s_code.credentials.handles.handle_names`). It returns a new env
for the child and the values it substituted, which the caller registers with the session's
redactor before the child can print anything. It resolves an entry's ``env`` only: a value never
goes into an argv, where every program of the user could read it (``/proc/PID/cmdline``); a
handle anywhere else was refused when the entry was read. It never writes anything: the
configuration it was given, and the files it came from, keep their handles.

``${secret:env:NAME}`` reads the sidecar's own environment (``environ``, default ``os.environ``);
``${secret:keyring:service/account}`` reads the system keyring (:mod:`.keystore`, imported only
then: the ``keyring`` package takes a tenth of a second to load). A value that is
missing, empty, or cannot be read is ``secret_unavailable`` naming the handle (and the field it
stands in), never an empty substitution.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from s_code.credentials.handles import Handle, entry_handles, find_in, refuse_handles
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.redaction import MARK, Redactor, secret_env_values

KeyringGet = Callable[[str, str], str | None]
_PLACEHOLDER = "HANDLE0"


@dataclass(frozen=True)
class Resolved:
    """An entry's env with values substituted, and those values (for the redactor). Its
    ``repr`` shows neither, so a log line or a traceback cannot leak them."""

    env: dict[str, str] = dataclasses.field(repr=False)
    values: list[str] = dataclasses.field(repr=False)
    handles: list[str]


def _unavailable(handle: Handle, where: str, why: str) -> SCodeError:
    return SCodeError(
        ErrorKind.SECRET_UNAVAILABLE,
        f"{where}: the secret {handle.text} is unavailable: {why}",
        handle=handle.text,
        field=where,
    )


def _value(handle: Handle, where: str, environ: Mapping[str, str], keyring_get: KeyringGet) -> str:
    if handle.source == "env":
        value = environ.get(handle.name)
        if not value:
            raise _unavailable(handle, where, f"{handle.name} is not set in s-code's environment")
        return value
    from s_code.credentials.keystore import KeyringUnavailable  # keyring loads when first needed

    service, account = handle.service_account
    try:
        stored = keyring_get(service, account)
    except KeyringUnavailable as exc:
        raise _unavailable(handle, where, exc.message) from None
    if not stored:
        raise _unavailable(
            handle,
            where,
            f"nothing is stored under {handle.name}: run `s-code secret set {handle.name}`",
        )
    return stored


def _keyring_get(service: str, account: str) -> str | None:
    from s_code.credentials.keystore import get_secret

    return get_secret(service, account)


def resolve(
    env: Mapping[str, str],
    *,
    field: str = "",
    environ: Mapping[str, str] | None = None,
    keyring_get: KeyringGet | None = None,
) -> Resolved:
    """``env`` with every handle replaced by its value (blocking when a keyring handle is
    present: run in a worker thread, with a bounded wait). The input is not changed. Raises
    ``invalid_params`` for a malformed handle and ``secret_unavailable`` for a missing one, each
    naming the field path (under ``field.`` when given)."""
    source = os.environ if environ is None else environ
    get = _keyring_get if keyring_get is None else keyring_get
    values: dict[Handle, str] = {}
    for where, handle in entry_handles(env, field):  # all validated before any is read
        if handle not in values:
            values[handle] = _value(handle, where, source, get)

    def substitute(text: str, where: str) -> str:
        return _replace(text, where, lambda handle: values[handle])

    prefix = f"{field}." if field else ""
    return Resolved(
        env={k: substitute(v, f"{prefix}env.{k}") for k, v in env.items()},
        values=sorted(set(values.values()), key=len, reverse=True),
        handles=sorted(h.text for h in values),
    )


def _replace(text: str, where: str, by: Callable[[Handle], str]) -> str:
    out: list[str] = []
    last = 0
    for start, end, handle in find_in(text, where):
        out += [text[last:start], by(handle)]
        last = end
    return "".join([*out, text[last:]])


def literal_secrets(args: Sequence[str], env: Mapping[str, str], field: str = "") -> list[str]:
    """The field paths of values that look like secrets written in clear, outside any handle: a
    token the redactor's rules know (in args or env), or a value of an env variable whose name
    says it is a secret (``*_FILE``, ``*_PATH``, ``*_DIR`` excepted). Configuration s-code saves
    must hold handles instead (R4). Paths only, never the values."""
    prefix = f"{field}." if field else ""
    rules = Redactor()
    found = []
    for i, arg in enumerate(args):
        where = f"{prefix}args.{i}"
        if _token_in_clear(arg, where, rules):
            found.append(where)
    for key, value in env.items():
        refuse_handles(key, f"{prefix}env")
        where = f"{prefix}env.{key}"
        if _token_in_clear(value, where, rules) or (
            next(find_in(value, where), None) is None and _secret_name(key, value)
        ):
            found.append(where)
    return found


def _token_in_clear(text: str, where: str, rules: Redactor) -> bool:
    """Whether the redactor's rules find a secret in ``text`` other than its handles: each
    handle stands in as a placeholder, which a rule may take for a value (``Authorization:
    Bearer ${secret:...}``) without counting."""
    placed = _replace(text, where, lambda _: _PLACEHOLDER)
    return rules.redact(placed).replace(MARK, _PLACEHOLDER) != placed


def _secret_name(key: str, value: str) -> bool:
    return not key.upper().endswith(("_FILE", "_PATH", "_DIR")) and bool(
        secret_env_values({key: value})
    )


def require_handles_only(args: Sequence[str], env: Mapping[str, str], field: str = "") -> None:
    """``invalid_params`` naming the first env value that holds a secret in clear (see
    :func:`literal_secrets`): call it before saving configuration."""
    found = literal_secrets(args, env, field)
    if found:
        raise invalid_params(
            f"{found[0]}: store the value with `s-code secret set <service>/<account>` and write "
            "${secret:keyring:<service>/<account>} here instead",
            found[0],
        )

"""Host-process configuration: the user layer and the workspace layer, parsed strictly.

Layers: the user's ``$XDG_CONFIG_HOME/s-code/`` (else ``~/.config/s-code/``) and the workspace's
``<root>/.s-code/`` (a protected path: the agent can never write it). ``mcp.json`` holds
``{"mcpServers": {name: {command, args?, env?, cwd?, startupTimeoutSec?, toolTimeoutSec?,
enabledTools?, disabledTools?}}}``, the portable shape other clients read (``type: "stdio"`` is
accepted and means nothing more). An entry with an unknown key, a wrong type or another transport
is kept as a *failed* entry that names the problem: never silently dropped, never run; so is one
with a credential handle anywhere but in an ``env`` value (in an argument it would be readable
by every program of the user: :func:`s_code.credentials.handles.refuse_in_args`), or a
malformed one. Files are
read non-blocking and bounded (a FIFO or a huge file in a cloned repository cannot hold the
sidecar) and must be regular files, not links.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from s_code.credentials.handles import (
    entry_handles,
    refuse_handles,
    refuse_in_args,
    refuse_in_command,
)
from s_code.protocol.errors import SCodeError

Layer = Literal["user", "workspace"]
MAX_CONFIG_BYTES = 1 << 20
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass(frozen=True)
class McpConfig:
    """One ``mcpServers`` entry as written (handles not resolved)."""

    name: str
    layer: Layer
    file: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    startup_timeout_s: float = 30.0
    tool_timeout_s: float = 120.0
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    problem: str | None = None
    """Why this entry cannot run (it is listed as failed, with this reason)."""


@dataclass
class Loaded:
    servers: list[McpConfig] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # whole files that could not be read


def user_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "s-code")


def workspace_dir(root: str) -> str:
    return os.path.join(root, ".s-code")


def config_files(workspace_root: str | None) -> list[str]:
    """Every file a layer may hold (existing or not)."""
    dirs = [user_dir()] + ([workspace_dir(workspace_root)] if workspace_root else [])
    return [os.path.join(d, name) for d in dirs for name in ("mcp.json", "hooks.json")]


def unread_layers(roots: list[str]) -> list[str]:
    """Why a configuration file in a workspace folder after the first does nothing: the
    workspace layer is the first folder's ``.s-code/`` only (a hooks.json meant to guard
    another folder must not be silently ignored)."""
    out = []
    for root in roots[1:]:
        for path in config_files(root)[2:]:
            if os.path.lexists(path):
                out.append(
                    f"{path} is not read: the workspace layer is the first workspace folder's "
                    f"({workspace_dir(roots[0])}); move it there, or open {root} as the first "
                    "folder"
                )
    return out


def fingerprint(paths: list[str]) -> tuple[object, ...]:
    """What changes when any of ``paths`` (or PATH) moves: each one's identity, size and times."""
    found: list[object] = []
    for path in paths:
        try:
            st = os.stat(path)
            found.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        except OSError:
            found.append(None)
    return (os.environ.get("PATH", ""), *found)


MOVED_DURING_READ: tuple[object, ...] = ("moved while it was read",)


def settled(
    before: tuple[object, ...], again: tuple[object, ...], fresh: tuple[object, ...]
) -> tuple[object, ...]:
    """What a reader keeps as "seen" after reading: ``fresh`` (the fingerprint of what it just
    read) unless the files it watched moved while it read (``again`` differs from ``before``),
    when it keeps a mark that matches nothing, so its next cheap check reads again (a fingerprint
    taken after the read alone would vouch for a change the read never saw)."""
    return fresh if again == before else MOVED_DURING_READ


def read_config(path: str) -> bytes | None:
    """A config file's bytes; None when there is none; ValueError when it cannot be used."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # no such file (a layer folder that is a
        return None  # file holds none: tier 1 puts an empty one where .s-code is missing)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be opened ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
    return data


_KNOWN = {
    "command",
    "args",
    "env",
    "cwd",
    "startupTimeoutSec",
    "toolTimeoutSec",
    "enabledTools",
    "disabledTools",
    "type",
}


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be an array of strings")
    if any("\0" in v for v in value):
        raise ValueError(f"{where} holds a NUL character")
    return tuple(value)


def env_object(value: Any, entry: str) -> tuple[tuple[str, str], ...]:
    """The ``env`` object of the entry at ``entry`` (names to strings; a value may hold
    credential handles, whole and valid), sorted by name; ValueError naming the field at fault
    (``mcpServers.gh.env.TOKEN``)."""
    where = f"{entry}.env"
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{where} must map names to strings")
    for key in value:
        if not key or "=" in key or "\0" in key or "\0" in value[key]:
            raise ValueError(f"{where}.{key}: not a valid variable")
    with _refused():
        entry_handles(value, entry)
    return tuple(sorted(value.items()))


def no_handles(text: str | tuple[str, ...], where: str) -> None:
    """ValueError naming ``where`` (``where.N`` for each of several) when a command, an
    argument or a shell line holds a credential handle: a secret never goes into an argv."""
    with _refused():
        if isinstance(text, str):
            refuse_in_command(text, where)
        else:
            refuse_in_args(text, where)


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    """A handle's ``invalid_params`` as the ValueError a failed entry carries."""
    try:
        yield
    except SCodeError as err:
        raise ValueError(err.message) from None


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise ValueError(f"{where} must be a number of seconds between 0 and 3600")
    return float(value)


def _server(name: str, raw: Any, layer: Layer, file: str) -> McpConfig:
    where = f"mcpServers.{name}"
    if not name or not set(name) <= _NAME_CHARS:
        raise ValueError(f"{where}: a server name is letters, digits, '_', '-' and '.'")
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise ValueError(
            f"{where}.{unknown[0]}: unknown key (s-code does not run what it does not understand)"
        )
    if raw.get("type", "stdio") != "stdio":
        raise ValueError(f"{where}.type: only stdio servers are supported")
    command = raw.get("command")
    if not isinstance(command, str) or not command or "\0" in command:
        raise ValueError(f"{where}.command must be a non-empty string")
    no_handles(command, f"{where}.command")
    args = _strings(raw.get("args", []), f"{where}.args")
    no_handles(args, f"{where}.args")
    env = env_object(raw.get("env", {}), where)
    cwd = raw.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or "\0" in cwd):
        raise ValueError(f"{where}.cwd must be a string")
    if cwd is not None:
        with _refused():
            refuse_handles(cwd, f"{where}.cwd")
    enabled = raw.get("enabledTools")
    return McpConfig(
        name=name,
        layer=layer,
        file=file,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        startup_timeout_s=_seconds(raw.get("startupTimeoutSec", 30), f"{where}.startupTimeoutSec"),
        tool_timeout_s=_seconds(raw.get("toolTimeoutSec", 120), f"{where}.toolTimeoutSec"),
        enabled_tools=None if enabled is None else _strings(enabled, f"{where}.enabledTools"),
        disabled_tools=_strings(raw.get("disabledTools", []), f"{where}.disabledTools"),
    )


def parse_mcp(data: bytes, layer: Layer, file: str) -> list[McpConfig]:
    """The entries of one ``mcp.json``; a broken entry is kept with its ``problem``."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{file}: the top level must be an object")
    servers = doc.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError(f"{file}: mcpServers must be an object")
    found: list[McpConfig] = []
    for name, raw in servers.items():
        try:
            found.append(_server(str(name), raw, layer, file))
        except ValueError as exc:
            found.append(McpConfig(name=str(name), layer=layer, file=file, problem=str(exc)))
    return found


def load_mcp(workspace_root: str | None) -> Loaded:
    """Every MCP server entry of both layers (a workspace entry does not replace a user one of
    the same name: both are listed, each with its own trust)."""
    loaded = Loaded()
    layers: list[tuple[Layer, str]] = [("user", user_dir())]
    if workspace_root is not None:
        layers.append(("workspace", workspace_dir(workspace_root)))
    for layer, directory in layers:
        path = os.path.join(directory, "mcp.json")
        try:
            data = read_config(path)
            if data is not None:
                loaded.servers += parse_mcp(data, layer, path)
        except ValueError as exc:
            loaded.problems.append(str(exc))
    return loaded

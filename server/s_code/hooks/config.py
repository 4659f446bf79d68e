"""``hooks.json``: the user layer and the workspace layer, parsed strictly.

The Claude-compatible shape::

    {"hooks": {"PreToolUse": [{"matcher": "apply_patch|write_file",
                               "hooks": [{"type": "command", "command": "./check.sh",
                                          "timeout": 10, "onFailure": "block"}]}]}}

Events: ``PreToolUse``, ``PostToolUse`` (matched on the tool name), ``SessionStart``,
``SessionEnd``. A hook runs a shell line (``command``, through ``/bin/sh -c``) or an argv
(``argv``), with an optional ``env`` (names to strings, as in ``mcp.json``: the one place a
credential handle may stand; one in the line or the argv makes the hook *failed*, since every
program of the user can read a command line). A hook is named by its place,
``<Event>.<group>.<hook>`` (``PreToolUse.0.0``): trust is bound to that name and to the hash of
what runs. An entry with an unknown key, a wrong type or a bad regex is kept as a *failed* entry
naming the problem; a file that cannot be read at all is one failed entry that covers every tool
(fail closed: s-code cannot know what it would gate).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from s_code.hostproc.config import (
    Layer,
    env_object,
    no_handles,
    read_config,
    user_dir,
    workspace_dir,
)

EVENTS = ("PreToolUse", "PostToolUse", "SessionStart", "SessionEnd")
GATING = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0
OnFailure = Literal["block", "allow"]
_HOOK_KEYS = {"type", "command", "argv", "env", "timeout", "onFailure"}
_GROUP_KEYS = {"matcher", "hooks"}
# Matchers are regular expressions over tool names (Claude's shape), limited to what names need:
# literal characters, alternatives, wildcards and character classes, but no repeated group (the
# source of catastrophic backtracking), so matching a name takes microseconds on the event loop.
MAX_MATCHER = 512
MAX_COMMAND = 64 * 1024
"""A hook's shell line, or one argument of its argv (a config file holds at most 1 MiB)."""
SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_\-.*+?|^$()\[\]]*")
NESTED = re.compile(r"\)[*+?{]|[*+?][*+?]")
QUANTIFIERS_PER_ALTERNATIVE = 2  # ".*foo.*" is fine; six wildcards in a row backtrack for long


def simple_matcher(matcher: str) -> bool:
    if len(matcher) > MAX_MATCHER or not SIMPLE_MATCHER.fullmatch(matcher):
        return False
    if NESTED.search(matcher):
        return False
    return all(
        sum(part.count(q) for q in "*+?") <= QUANTIFIERS_PER_ALTERNATIVE
        for part in matcher.split("|")
    )


@dataclass(frozen=True)
class HookConfig:
    """One hook as written."""

    name: str
    layer: Layer
    file: str
    event: str
    matcher: str = ""
    command: str | None = None
    argv: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()  # as written: handles not resolved
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_failure: OnFailure = "block"
    problem: str | None = None

    @property
    def gating(self) -> bool:
        return self.event in GATING or self.event == "*"

    def covers(self, tool: str) -> bool:
        """Does this hook apply to a call of ``tool``? (A matcher that is not a valid regex,
        or a file that could not be read, covers every tool: fail closed.)"""
        if not self.gating:
            return False
        if self.matcher in ("", "*") or not simple_matcher(self.matcher):
            return True  # a matcher that is not a tool-name pattern is never run: every tool
        try:
            return re.fullmatch(self.matcher, tool) is not None
        except re.error:
            return True


def _hook(raw: Any, base: HookConfig, where: str) -> HookConfig:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    unknown = sorted(set(raw) - _HOOK_KEYS)
    if unknown:
        raise ValueError(
            f"{where}.{unknown[0]}: unknown key (s-code does not run what it does not understand)"
        )
    if raw.get("type", "command") != "command":
        raise ValueError(f"{where}.type: only command hooks are supported")
    command, argv = raw.get("command"), raw.get("argv")
    if (command is None) == (argv is None):
        raise ValueError(f"{where}: give exactly one of command (a shell line) or argv")
    if command is not None and (
        not isinstance(command, str)
        or not command.strip()
        or "\0" in command
        or len(command) > MAX_COMMAND
    ):
        raise ValueError(
            f"{where}.command must be a non-empty string of at most {MAX_COMMAND} characters"
        )
    if argv is not None and (
        not isinstance(argv, list)
        or not argv
        or not all(isinstance(a, str) and "\0" not in a and len(a) <= MAX_COMMAND for a in argv)
        or not argv[0]
    ):
        raise ValueError(
            f"{where}.argv must be a non-empty array of strings (each at most {MAX_COMMAND} "
            "characters)"
        )
    if isinstance(command, str):
        no_handles(command, f"{where}.command")  # its shell line: the shell's argv
    else:
        no_handles(tuple(argv or ()), f"{where}.argv")
    env = env_object(raw.get("env", {}), where)
    timeout = raw.get("timeout", DEFAULT_TIMEOUT_S)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise ValueError(
            f"{where}.timeout must be a number of seconds between 0 and {MAX_TIMEOUT_S:g}"
        )
    on_failure = raw.get("onFailure", "block")
    if on_failure not in ("block", "allow"):
        raise ValueError(f'{where}.onFailure must be "block" or "allow"')
    return replace(
        base,
        command=command,
        argv=tuple(argv) if argv is not None else None,
        env=env,
        timeout_s=float(timeout),
        on_failure=on_failure,
    )


def _group(event: str, i: int, raw: Any, layer: Layer, file: str) -> list[HookConfig]:
    where = f"hooks.{event}.{i}"
    base = HookConfig(name=f"{event}.{i}.0", layer=layer, file=file, event=event)
    if not isinstance(raw, dict):
        return [_failed(base, f"{where} must be an object")]
    matcher = raw.get("matcher", "")
    if not isinstance(matcher, str):
        return [_failed(base, f"{where}.matcher must be a string")]
    base = replace(base, matcher=matcher)
    unknown = sorted(set(raw) - _GROUP_KEYS)
    if unknown:
        return [_failed(base, f"{where}.{unknown[0]}: unknown key")]
    if event not in EVENTS:
        return [_failed(base, f"hooks.{event}: unknown event (known: {', '.join(EVENTS)})")]
    try:
        if matcher != "*":  # Claude Code's "every tool", as "" is
            re.compile(matcher)
    except re.error as exc:
        return [_failed(base, f"{where}.matcher is not a valid regular expression ({exc})")]
    if matcher != "*" and not simple_matcher(matcher):
        return [
            _failed(
                base,
                f"{where}.matcher is not a tool-name pattern: names, '|', '.*', '^', '$', "
                "character classes and groups without a repeat after them (a pattern that "
                "could backtrack for long is refused)",
            )
        ]
    hooks = raw.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        return [_failed(base, f"{where}.hooks must be a non-empty array")]
    found = []
    for j, item in enumerate(hooks):
        named = replace(base, name=f"{event}.{i}.{j}")
        try:
            found.append(_hook(item, named, f"{where}.hooks.{j}"))
        except ValueError as exc:
            found.append(_failed(named, str(exc)))
    return found


def _failed(base: HookConfig, problem: str) -> HookConfig:
    return replace(base, problem=problem)


def parse_hooks(data: bytes, layer: Layer, file: str) -> list[HookConfig]:
    """The hooks of one ``hooks.json``; raises ValueError when the file as a whole is unusable."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or set(doc) - {"hooks"}:
        raise ValueError(f'{file}: the top level must be an object with one key, "hooks"')
    events = doc.get("hooks", {})
    if not isinstance(events, dict):
        raise ValueError(f"{file}: hooks must be an object")
    found: list[HookConfig] = []
    for event, groups in events.items():
        if not isinstance(groups, list):
            found.append(
                _failed(
                    HookConfig(f"{event}.0.0", layer, file, str(event)),
                    f"hooks.{event} must be an array",
                )
            )
            continue
        for i, group in enumerate(groups):
            found += _group(str(event), i, group, layer, file)
    return found


def load_hooks(workspace_root: str | None) -> list[HookConfig]:
    """Every hook of both layers; an unreadable file is one failed entry covering every tool."""
    layers: list[tuple[Layer, str]] = [("user", user_dir())]
    if workspace_root is not None:
        layers.append(("workspace", workspace_dir(workspace_root)))
    found: list[HookConfig] = []
    for layer, directory in layers:
        path = os.path.join(directory, "hooks.json")
        try:
            data = read_config(path)
            if data is not None:
                found += parse_hooks(data, layer, path)
        except ValueError as exc:
            found.append(HookConfig("hooks.json", layer, path, "*", problem=str(exc)))
    return found

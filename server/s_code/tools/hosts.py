"""The session's host processes: MCP servers from both configuration layers, their trust, their
tools in the registry; with the session's hooks (:mod:`s_code.hooks`) and terminals
(:mod:`s_code.terminals`) in one list, one notification and one approve/revoke.

An entry runs only while the user's approval matches its hash (:mod:`s_code.hostproc.trust`);
nothing from the workspace layer starts before that (a cloned repository cannot start a server).
The configuration is read again on every ``hostProcesses/list``, approval and call: an entry
edited on disk is pending again, and a server running under the old approval is stopped. An
approved server's tools join the registry as ``mcp__<server>__<tool>`` (specialized: found with
tool_search) when it is ready; a tool that appeared or changed after the approval stays hidden
until the server is approved again. Each call passes the approval gate, decided by the tool's
own annotations (see :mod:`s_code.approvals.policy`), and its result passes the redactor.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from s_code.approvals.cards import Card, ToolCallDetails
from s_code.approvals.gate import check
from s_code.approvals.policy import Operation
from s_code.credentials.resolve import resolve
from s_code.hooks.manager import hooks_for
from s_code.hostproc.config import (
    McpConfig,
    config_files,
    fingerprint,
    load_mcp,
    settled,
    unread_layers,
)
from s_code.hostproc.entry import Canonical, agent_writable, canonical, host_path, python_env
from s_code.hostproc.preview import host_card
from s_code.hostproc.trust import TrustStore, tool_hash
from s_code.mcp_client.client import Guard, Launch, McpServer
from s_code.mcp_client.names import tool_name
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.session.host_code import Bound
from s_code.session.session import Session
from s_code.terminals.manager import terminals_for
from s_code.tools.host import end_session
from s_code.tools.registry import Registry, ToolDef

log = logging.getLogger(__name__)


@dataclass
class Entry:
    config: McpConfig
    canon: Canonical | None
    problem: str | None
    server: McpServer | None = None
    hidden: list[str] = field(default_factory=list)  # tools changed since the approval

    @property
    def key(self) -> tuple[str, str]:
        return (self.config.layer, self.config.name)


def _definition(tool: Any) -> dict[str, Any]:
    annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
    return {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.input_schema,
        "annotations": annotations,
    }


class HostProcesses:
    def __init__(self, session: Session, registry: Registry, workspace: str) -> None:
        self.session = session
        self.writable = agent_writable(r.real_path for r in session.folders.roots)
        self.registry = registry
        self.workspace = workspace
        self.trust = (
            TrustStore(session.store.store, session.store.canonical_path)
            if session.store is not None
            else None
        )
        self.entries: dict[tuple[str, str], Entry] = {}
        self.problems: list[str] = []
        self._seen: tuple[object, ...] | None = None
        # one change of the entries at a time (a refresh, an approval's outcome, a revoke): two
        # interleaved refreshes would each start a server for the same entry
        self._changing = asyncio.Lock()
        registry.explain_missing = self._missing
        self.hooks = hooks_for(session)
        self.hooks.announce = self._announce
        self.terminals = terminals_for(session)
        self.terminals.announce = self._announce

    def _missing(self, name: str) -> SCodeError | None:
        """Why ``mcp__<server>__<tool>`` is not a tool now, when its server is configured."""
        for entry in self.entries.values():
            prefix = tool_name(entry.config.name, "")
            if not name.startswith(prefix):
                continue
            if entry.server is None or entry.problem is not None:
                why = entry.problem or "it is not approved (or changed since it was)"
                return SCodeError(
                    ErrorKind.HOST_PROCESS_UNTRUSTED,
                    f"the MCP server {entry.config.name!r} is not running: {why}; approve it with "
                    "s-code/hostProcesses/approve",
                    name=entry.config.name,
                    tool=name,
                )
            if name[len(prefix) :] in entry.hidden:
                return SCodeError(
                    ErrorKind.HOST_PROCESS_UNTRUSTED,
                    f"{name} changed (or appeared) since {entry.config.name!r} was approved; "
                    "it stays hidden until the server is approved again",
                    name=entry.config.name,
                    tool=name,
                )
        return None

    # -- configuration ----------------------------------------------------------------------

    def _canon(self, cfg: McpConfig) -> Canonical:
        cwd = cfg.cwd or (self.workspace if cfg.layer == "workspace" else os.path.expanduser("~"))
        if not os.path.isabs(cwd):
            cwd = os.path.join(self.workspace, cwd)
        settings = (
            ("startupTimeoutSec", cfg.startup_timeout_s),
            ("toolTimeoutSec", cfg.tool_timeout_s),
            ("enabledTools", list(cfg.enabled_tools) if cfg.enabled_tools is not None else None),
            ("disabledTools", list(cfg.disabled_tools)),
        )
        return canonical(
            "mcp",
            cfg.name,
            cfg.layer,
            cfg.file,
            (cfg.command, *cfg.args),
            os.path.realpath(cwd),
            cfg.env,
            host_path(self.writable),
            settings,
            writable=self.writable,
        )

    def _read(self) -> list[Entry]:
        """On a worker thread: both layers parsed, every entry made canonical."""
        loaded = load_mcp(self.workspace)
        roots = [r.real_path for r in self.session.folders.roots]
        self.problems = loaded.problems + unread_layers(roots)
        found: list[Entry] = []
        seen: set[str] = set()
        for cfg in loaded.servers:
            problem = cfg.problem
            if problem is None and cfg.name in seen:
                problem = f"a server named {cfg.name!r} is already configured in another layer"
            seen.add(cfg.name)
            canon = None
            if problem is None:
                try:
                    canon = self._canon(cfg)
                except (OSError, ValueError) as exc:
                    problem = str(exc)
                except SCodeError as err:
                    problem = err.message
            found.append(Entry(cfg, canon, problem))
        return found

    def _watching(self) -> tuple[list[str], list[str]]:
        """The files the entries depend on (the config files, each program and each script) and
        the folders of their code scopes."""
        paths = list(config_files(self.workspace))
        for e in self.entries.values():
            if e.canon is not None:
                paths += [e.canon.executable.real or "", *(p for p, _ in e.canon.scripts)]
        return paths, [f for e in self.entries.values() for f in self._folders(e)]

    def _fingerprint(
        self, watching: tuple[list[str], list[str]] | None = None
    ) -> tuple[object, ...]:
        """The identities of what the entries depend on: while none moved, the configuration
        read last is still current."""
        paths, folders = self._watching() if watching is None else watching
        changes = (self.session.lock.ended_stamp(folders), self.session.host_code.changes)
        return (*fingerprint(paths), changes)

    async def refresh(self, *, if_changed: bool = False) -> None:
        """Read the configuration again; start what is trusted, stop what no longer is.
        ``if_changed``: only when a file it depends on moved (a call's cheap check)."""
        await self.hooks.refresh(if_changed=if_changed)
        if not if_changed:
            await self.hooks.session_event("SessionStart")  # once per session
        if if_changed and self._seen is not None and self._fingerprint() == self._seen:
            return
        async with self._changing:
            await self._refresh()

    async def _refresh(self) -> None:
        watched = self._watching()
        before = self._seen = self._fingerprint(watched)
        fresh = {e.key: e for e in await asyncio.to_thread(self._read)}
        for key, old in list(self.entries.items()):
            new = fresh.get(key)
            same = new is not None and new.canon is not None and old.canon is not None
            if same and new.canon.hash == old.canon.hash:  # type: ignore[union-attr]
                fresh[key] = old  # unchanged: keep its running server
                continue
            if old.server is not None:
                await old.server.stop()
        again = self._fingerprint(watched)  # nothing awaited from here to the fingerprint
        self.entries = fresh
        self._seen = settled(before, again, self._fingerprint())
        for entry in self.entries.values():
            if entry.server is None and self._trusted(entry):
                await self._start(entry)
        self._publish()
        self._announce()

    def _publish(self) -> None:
        """The code scopes of the trusted servers, for the session's edits to ask about."""
        self.session.host_code.publish(
            "mcp",
            tuple(
                Bound(
                    f"the MCP server {e.config.name!r} ({e.config.layer} layer)",
                    e.canon.scope.holds,
                )
                for e in self.entries.values()
                if e.canon is not None and e.canon.scope is not None and self._trusted(e)
            ),
        )

    def _folders(self, entry: Entry) -> tuple[str, ...]:
        """The folders of an entry's code scope a sandboxed command could write."""
        scope = entry.canon.scope if entry.canon is not None else None
        return scope.folders_in(self.writable) if scope is not None else ()

    def _guard(self, entry: Entry) -> Guard:
        """Before every start of ``entry``'s server (a restart too), with no command running
        that could change it until the server is up: its configuration and code scope read
        again and compared with the approval."""

        @contextlib.asynccontextmanager
        async def guard() -> AsyncIterator[str | None]:
            async with self.session.lock.host_code(self._folders(entry)):
                yield await asyncio.to_thread(self._still_approved, entry.key)

        return guard

    def _still_approved(self, key: tuple[str, str]) -> str | None:
        """On a worker thread: why the entry ``key`` may not start now, or None."""
        fresh = next((e for e in self._read() if e.key == key), None)
        record = self.trust.get("mcp", *key) if self.trust is not None else None
        if fresh is None or fresh.canon is None or fresh.problem is not None:
            why = fresh.problem if fresh is not None else "it is no longer configured"
            problem = f"its configuration changed and it cannot run: {why}"
        elif record is None or record.hash != fresh.canon.hash:
            problem = (
                "what it runs (its configuration, program, scripts or code scope) changed since "
                "it was approved; approve it again"
            )
        else:
            return None
        self._seen = None  # read again at the next call: the list shows it pending
        return problem

    def _trusted(self, entry: Entry) -> bool:
        if entry.canon is None or entry.problem is not None or self.trust is None:
            return False
        record = self.trust.get("mcp", entry.config.layer, entry.config.name)
        return record is not None and record.hash == entry.canon.hash

    # -- running ------------------------------------------------------------------------------

    async def _start(self, entry: Entry) -> None:
        assert entry.canon is not None
        cfg = entry.config
        try:
            resolved = await asyncio.to_thread(resolve, dict(cfg.env), field=cfg.name)
        except SCodeError as err:
            entry.problem = err.message
            return
        self.session.redactor.add_known(resolved.values)
        argv = [entry.canon.executable.path or cfg.command, *cfg.args]  # never a secret
        # the SDK adds the rest of what a server inherits; PATH comes from us, and a Python
        # server never imports from its script's folder or the working directory
        env = {"PATH": host_path(self.writable), **resolved.env, **python_env()}
        launch = Launch(
            name=cfg.name,
            argv=argv,
            cwd=entry.canon.cwd,
            env=env,
            startup_timeout_s=cfg.startup_timeout_s,
            tool_timeout_s=cfg.tool_timeout_s,
        )
        entry.server = McpServer(
            launch, self.session.redactor, self._tools_changed, self._guard(entry)
        )
        entry.server.start()

    def _tools_changed(self, server: McpServer, tools: list[Any]) -> None:
        entry = next((e for e in self.entries.values() if e.server is server), None)
        if entry is None and any(
            e.server is not None and e.config.name == server.launch.name
            for e in self.entries.values()
        ):
            return  # a server no entry holds any longer: the tools are another's now
        prefix = tool_name(server.launch.name, "")
        for t in list(self.registry):
            if t.name.startswith(prefix) and t.source == f"mcp:{server.launch.name}":
                self.registry.remove(t.name)
        if entry is None:
            return
        approved = self._approved_tools(entry, tools)
        entry.hidden = []
        for tool in tools:
            if not self._enabled(entry.config, tool.name):
                continue
            if approved.get(tool.name) != tool_hash(_definition(tool)):
                entry.hidden.append(tool.name)
                continue
            try:
                self.registry.add(self._tool_def(server, tool))
            except (ValueError, SCodeError) as exc:
                log.warning("MCP tool %s of %s not added: %s", tool.name, server.launch.name, exc)
        self._announce()

    def _approved_tools(self, entry: Entry, tools: list[Any]) -> dict[str, str]:
        """The tool definitions the approval covers; the first listing after an approval is the
        one approved (the user approved the server, and with it what it offered then)."""
        if self.trust is None or entry.canon is None:
            return {}
        record = self.trust.get("mcp", entry.config.layer, entry.config.name)
        if record is None:
            return {}
        if record.tools is None:
            if not tools:  # nothing listed yet (the server is starting, or stopped)
                return {}
            current = {t.name: tool_hash(_definition(t)) for t in tools}
            self.trust.trust("mcp", entry.config.layer, entry.config.name, record.hash, current)
            return current
        return record.tools

    @staticmethod
    def _enabled(cfg: McpConfig, name: str) -> bool:
        if cfg.enabled_tools is not None and name not in cfg.enabled_tools:
            return False
        return name not in cfg.disabled_tools

    def _tool_def(self, server: McpServer, tool: Any) -> ToolDef:
        annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        read_only = annotations.get("read_only_hint") is True
        destructive = annotations.get("destructive_hint") is True
        operation: Operation = (
            "read" if read_only else "host_tool_destructive" if destructive else "host_tool"
        )
        name = tool_name(server.launch.name, tool.name)
        hints = {k.removesuffix("_hint"): v for k, v in annotations.items() if k != "title"}

        async def handler(session: Session, args: dict[str, Any]) -> dict[str, Any]:
            await self._running(server)  # an entry edited on disk: pending, stopped
            approval = None
            if operation != "read":  # a read is allowed in every mode, like a built-in one
                card = self._call_card(server.launch.name, tool.name, name, args, hints)
                approval = await check(session, operation, card)
            entry = next((e for e in self.entries.values() if e.server is server), None)
            folders = self._folders(entry) if entry is not None else ()
            # no command that could change its code runs during the call; one that ended (while
            # the user was asked, say) made the configuration and the code scope be read again
            async with self.session.lock.host_code(folders):
                await self._running(server)
                try:
                    result = await server.call(tool.name, args)
                except SCodeError as err:
                    if approval is not None:
                        await asyncio.to_thread(approval.ran, {"error": err.kind.value})
                    raise
            if approval is not None:
                ran = {"is_error": result.get("is_error", False)}
                await asyncio.to_thread(approval.ran, ran)
            return result

        redactor = self.session.redactor  # the server's words: redacted like its results
        return ToolDef(
            name=name,
            description=redactor.redact(
                tool.description or f"{tool.name} (MCP server {server.launch.name})"
            ),
            handler=handler,
            read_only=read_only,
            schema=redactor.redact_json(tool.input_schema)
            if isinstance(tool.input_schema, dict)
            else {},
            profile="specialized",
            source=f"mcp:{server.launch.name}",
            annotations=hints,
            redact_result=True,
        )

    async def _running(self, server: McpServer) -> None:
        """Refuse a call to ``server`` unless it still runs under its approval (the
        configuration, program, scripts and code scope read again if anything moved)."""
        await self.refresh(if_changed=True)
        if not any(e.server is server for e in self.entries.values()):
            raise SCodeError(
                ErrorKind.HOST_PROCESS_UNTRUSTED,
                f"the MCP server {server.launch.name!r} changed since it was approved; "
                "approve it again (s-code/hostProcesses/approve)",
                name=server.launch.name,
            )

    def _call_card(
        self, server: str, tool: str, name: str, args: dict[str, Any], hints: dict[str, Any]
    ) -> Card:
        text = self.session.redactor.redact_shown(json.dumps(args, indent=2, ensure_ascii=False))
        details = ToolCallDetails(server, tool, text, hints)
        return Card("tool_call", f"Call {name}", name, details)

    # -- the control methods ------------------------------------------------------------------

    def _find(self, kind: str, name: str, layer: str | None) -> Entry:
        if kind != "mcp":
            raise invalid_params(f"kind must be mcp, hook or terminal, not {kind!r}", "kind")
        found = [
            e
            for e in self.entries.values()
            if e.config.name == name and (layer is None or e.config.layer == layer)
        ]
        if not found:
            raise SCodeError(ErrorKind.NOT_FOUND, f"no MCP server named {name!r} is configured")
        return found[0]

    def view(self) -> dict[str, Any]:
        entries = []
        for e in self.entries.values():
            state = "failed" if e.problem else "pending"
            if e.problem is None and self._trusted(e):
                state = "trusted" if e.server is None else e.server.state
            item: dict[str, Any] = {
                "kind": "mcp",
                "name": e.config.name,
                "layer": e.config.layer,
                "file": e.config.file,
                "state": state,
                "hash": e.canon.hash if e.canon is not None else None,
            }
            why = e.problem or (e.server.error if e.server is not None else None)
            if why:
                item["error"] = self.session.redactor.redact(why)
            if e.server is not None:
                item["tools"] = sorted(
                    tool_name(e.config.name, t.name)
                    for t in e.server.tools
                    if t.name not in e.hidden
                )
            if e.hidden:
                item["toolsPendingApproval"] = sorted(e.hidden)
            if e.canon is not None and e.canon.notes:
                item["notes"] = list(e.canon.notes)
            entries.append(item)
        entries += self.hooks.view() + self.terminals.view()
        return {"entries": entries, "problems": self.problems}

    def _announce(self) -> None:
        self.session.notify(methods.HOST_PROCESSES_UPDATED, self.view())

    async def approve(self, kind: str, name: str, layer: str | None = None) -> dict[str, Any]:
        if kind == "hook":
            return await self.hooks.approve(name, layer)
        if kind == "terminal":
            raise invalid_params("a terminal is approved when it starts (terminal_start)", "kind")
        async with self._changing:
            await self._refresh()
            entry = self._find(kind, name, layer)
            if entry.problem is not None or entry.canon is None:
                raise SCodeError(
                    ErrorKind.HOST_PROCESS_FAILED,
                    f"the MCP server {name!r} cannot run: {entry.problem}",
                    name=name,
                )
            tools: tuple[str, ...] = ()
            if entry.server is not None:
                tools = tuple(
                    self.session.redactor.redact(f"{t.name}: {(t.description or '').strip()}")[:200]
                    for t in entry.server.tools
                )
            card = host_card(entry.canon, self.session.redactor, tools)
        shown_hash = entry.canon.hash
        await check(self.session, "host_process", card)  # the user decides: nothing held
        if self.trust is None:
            raise SCodeError(
                ErrorKind.DURABILITY_UNCONFIRMED,
                "the state store is unavailable, so the approval could not be kept",
            )
        async with self._changing:
            return await self._approved(kind, name, layer, shown_hash)

    async def _approved(
        self, kind: str, name: str, layer: str | None, shown_hash: str
    ) -> dict[str, Any]:
        """Trust what the card showed, and start it; refused when the entry changed meanwhile."""
        assert self.trust is not None
        await self._refresh()  # what is there now, not what was read before the prompt
        entry = self._find(kind, name, layer)
        if entry.canon is None or entry.canon.hash != shown_hash:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_UNTRUSTED,
                f"the MCP server {name!r} changed while you were asked; approve it again",
                name=name,
            )
        current = None
        if entry.server is not None and entry.server.tools:
            current = {t.name: tool_hash(_definition(t)) for t in entry.server.tools}
        self.trust.trust("mcp", entry.config.layer, name, entry.canon.hash, current)
        if entry.server is None:
            await self._start(entry)
        else:
            self._tools_changed(entry.server, entry.server.tools)
        self._publish()
        self._announce()
        return {"kind": kind, "name": name, "layer": entry.config.layer, "hash": entry.canon.hash}

    async def revoke(self, kind: str, name: str, layer: str | None = None) -> dict[str, Any]:
        if kind == "hook":
            return await self.hooks.revoke(name, layer)
        if kind == "terminal":  # the user ends it: the whole tree
            result = await self.terminals.kill(name, every=True)
            return {"kind": kind, "name": name, "layer": "session", "revoked": result["gone"]}
        async with self._changing:
            return await self._revoke(kind, name, layer)

    async def _revoke(self, kind: str, name: str, layer: str | None) -> dict[str, Any]:
        entry = self._find(kind, name, layer)
        if self.trust is not None:
            self.trust.revoke("mcp", entry.config.layer, name)
        if entry.server is not None:
            await entry.server.stop()
            entry.server = None
        self._publish()
        self._announce()
        return {"kind": kind, "name": name, "layer": entry.config.layer, "revoked": True}

    async def close(self) -> None:
        for entry in self.entries.values():
            if entry.server is not None:
                await entry.server.stop()
        await end_session(self.session)

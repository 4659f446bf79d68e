"""The session's hooks: read from both layers, trusted by hash, fired around every tool call.

The one tool dispatch (``s_code.tools.dispatch.call``) calls :meth:`Hooks.before` and
:meth:`Hooks.after` around every call (built-in tools, MCP tools, code mode's child calls): the
LSP adapter never fires a hook. A hook runs only while the user's approval matches its hash
(:mod:`s_code.hostproc.trust`): the entry made canonical covers the shell line or argv, the
program, the content of every script the line names, the working directory, the ``env`` as
written (credential handles, resolved only when the hook fires) and the settings. A
call covered by a gating hook (``PreToolUse`` or ``PostToolUse`` whose matcher matches) that is
pending fails with ``host_process_untrusted`` naming it, and one that cannot run
(a broken entry, an unreadable ``hooks.json``) with ``host_process_failed`` — before the tool
runs, never a silent skip. The hooks of a call run concurrently; the most restrictive decision
wins (a failure, then deny, then ask, then allow). A failing or timed-out gating hook blocks
unless it says ``"onFailure": "allow"``. Every file a hook names inside a workspace folder is held
in the session's protected set, so the agent cannot write it (its edits refuse it, a sandboxed
command cannot change it); a change made anyway makes the hook pending again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from s_code.approvals.cards import Card, ToolCallDetails
from s_code.approvals.gate import check
from s_code.credentials.resolve import resolve
from s_code.hooks.config import HookConfig, load_hooks
from s_code.hooks.paths import PROJECT_VARS, beside, named_paths, unchanged
from s_code.hooks.run import RANK, Verdict, run_hook, verdict
from s_code.hostproc.config import config_files, fingerprint, settled
from s_code.hostproc.entry import (
    Canonical,
    agent_writable,
    base_env,
    canonical,
    host_path,
    python_env,
)
from s_code.hostproc.preview import host_card
from s_code.hostproc.trust import TrustStore
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.session.host_code import Bound
from s_code.session.session import Session

log = logging.getLogger(__name__)
SHELL = "/bin/sh"


@dataclass
class HookEntry:
    config: HookConfig
    canon: Canonical | None
    problem: str | None
    named: tuple[str, ...] = ()  # absolute paths the hook names (scripts, existing or not)

    @property
    def key(self) -> tuple[str, str]:
        return (self.config.layer, self.config.name)


class Hooks:
    def __init__(self, session: Session, workspace: str) -> None:
        self.session = session
        self.workspace = workspace
        self.writable = agent_writable(r.real_path for r in session.folders.roots)
        self.session_id = uuid.uuid4().hex
        self.trust = (
            TrustStore(session.store.store, session.store.canonical_path)
            if session.store is not None
            else None
        )
        self.entries: dict[tuple[str, str], HookEntry] = {}
        self._seen: tuple[object, ...] | None = None
        self._watched: list[str] | None = None
        self._lock = asyncio.Lock()
        self._started = False
        self._errors: dict[str, str] = {}  # the last failure of each hook, by its hash
        self.announce: Callable[[], None] = self._announce_alone

    # -- configuration ----------------------------------------------------------------------

    def _cwd(self, cfg: HookConfig) -> str:
        """A workspace hook runs in the workspace folder; a user hook beside its hooks.json (where
        its scripts live, outside every workspace)."""
        return self.workspace if cfg.layer == "workspace" else os.path.dirname(cfg.file)

    def _entry(self, cfg: HookConfig) -> HookEntry:
        if cfg.problem is not None:
            return HookEntry(cfg, None, cfg.problem)
        cwd = os.path.realpath(self._cwd(cfg))
        argv = cfg.argv if cfg.argv is not None else (SHELL, "-c", cfg.command or "")
        settings = (
            ("event", cfg.event),
            ("matcher", cfg.matcher),
            ("timeout", cfg.timeout_s),
            ("onFailure", cfg.on_failure),
            # trust is per workspace, the user's own hooks' too: a hook approved in one project
            # that runs `make` or reads $S_CODE_PROJECT_DIR does not run a new clone's code unasked
            ("workspace", os.path.realpath(self.workspace)),
        )
        try:
            named = named_paths(cfg, cwd, self.workspace, host_path(self.writable))
            folders, neighbours = beside(named, self.workspace)
            named = tuple(dict.fromkeys((*named, *folders, *neighbours)))
            canon = canonical(
                "hook",
                cfg.name,
                cfg.layer,
                cfg.file,
                argv,
                cwd,
                cfg.env,
                host_path(self.writable),
                settings,
                named,
                self.writable,
            )
        except (OSError, ValueError) as exc:
            return HookEntry(cfg, None, str(exc))
        except SCodeError as err:
            return HookEntry(cfg, None, err.message)
        return HookEntry(cfg, canon, None, named)

    def _read(self) -> dict[tuple[str, str], HookEntry]:
        """On a worker thread: both layers parsed, every hook made canonical, its files held."""
        found = {}
        for cfg in load_hooks(self.workspace):
            entry = self._entry(cfg)
            found[entry.key] = entry
        self._hold(found.values())
        return found

    def _hold(self, entries: Any) -> None:
        roots = [r.real_path for r in self.session.folders.roots]
        held: set[str] = set()
        for entry in entries:
            paths = list(entry.named) + [p for p, _ in (entry.canon.scripts if entry.canon else ())]
            for path in paths:
                for candidate in {path, os.path.realpath(path)}:
                    for root in roots:
                        if candidate.startswith(root.rstrip("/") + "/"):
                            rel = os.path.relpath(candidate, root)
                            held.add(rel + "/" if os.path.isdir(candidate) else rel)
        self.session.protected.hold(held)

    def _watching(self) -> list[str]:
        """The files the entries read last depend on (listed once per read)."""
        if self._watched is None:
            paths = [p for p in config_files(self.workspace) if p.endswith("hooks.json")]
            for e in self.entries.values():
                paths += list(e.named)
                if e.canon is not None:
                    paths += [e.canon.executable.real or "", *(p for p, _ in e.canon.scripts)]
            self._watched = paths
        return self._watched

    def _fingerprint(self, paths: list[str] | None = None) -> tuple[object, ...]:
        """Checked before every tool call: only the stats of the watched files."""
        return (*fingerprint(self._watching() if paths is None else paths), self._stamp())

    def _scope_folders(self) -> tuple[str, ...]:
        """The folders of the hooks' code scopes a sandboxed command could write."""
        return tuple(
            dict.fromkeys(
                f
                for e in self.entries.values()
                if e.canon is not None and e.canon.scope is not None
                for f in e.canon.scope.folders_in(self.writable)
            )
        )

    def _stamp(self) -> tuple[object, ...]:
        """What changes when something s-code knows of may have written a hook's code: a
        command that could write it ended (in any session), an edit of scoped code was written."""
        return (
            self.session.lock.ended_stamp(self._scope_folders()),
            self.session.host_code.changes,
        )

    async def refresh(self, *, if_changed: bool = False) -> None:
        """Read both layers again (``if_changed``: only when a file they depend on moved).

        Not while a command of this session runs: the workspace is mid-change then (tier 1 puts
        a placeholder where ``.s-code`` is missing; in tier 2 the command may rewrite or remove
        ``hooks.json`` and the scripts, which are put back when it ends), so what was read before
        it stands, and a hooks.json that vanished never reads as "no hooks"."""
        if self._seen is not None and self.session.lock.command_running:
            return
        if if_changed and self._seen is not None and self._fingerprint() == self._seen:
            return
        async with self._lock:
            if if_changed and self._seen is not None and self._fingerprint() == self._seen:
                return
            before = {k: self.state(e) for k, e in self.entries.items()}
            watched = self._watching()
            self._seen = self._fingerprint(watched)
            fresh = await asyncio.to_thread(self._read)
            self.entries, self._watched = fresh, None
            self._seen = settled(self._seen, self._fingerprint(watched), self._fingerprint())
            self.publish()
            if {k: self.state(e) for k, e in self.entries.items()} != before:
                self.announce()

    def publish(self) -> None:
        """The code scopes of the trusted hooks, for the session's edits to ask about."""
        self.session.host_code.publish(
            "hook",
            tuple(
                Bound(f"the {e.config.layer} hook {e.config.name!r}", e.canon.scope.holds)
                for e in self.entries.values()
                if e.canon is not None and e.canon.scope is not None and self.trusted(e)
            ),
        )

    def trusted(self, entry: HookEntry) -> bool:
        if entry.canon is None or entry.problem is not None or self.trust is None:
            return False
        record = self.trust.get("hook", entry.config.layer, entry.config.name)
        return record is not None and record.hash == entry.canon.hash

    def state(self, entry: HookEntry) -> str:
        if entry.problem is not None:
            return "failed"
        return "trusted" if self.trusted(entry) else "pending"

    # -- firing -------------------------------------------------------------------------------

    def _refuse_unready(self, covering: list[HookEntry], tool: str) -> None:
        for e in covering:
            name = e.config.name
            if e.problem is not None and e.config.on_failure != "allow":
                raise SCodeError(
                    ErrorKind.HOST_PROCESS_FAILED,
                    f"{tool} is blocked: the {e.config.layer} hook {name!r} ({e.config.file}) "
                    f"cannot run: {e.problem}",
                    process_kind="hook",
                    name=name,
                    layer=e.config.layer,
                    tool=tool,
                )
            if e.problem is None and not self.trusted(e):
                raise SCodeError(
                    ErrorKind.HOST_PROCESS_UNTRUSTED,
                    f"{tool} is blocked: the {e.config.layer} hook {name!r} ({e.config.file}) is "
                    "pending: approve it (s-code/hostProcesses/approve kind hook) or remove it",
                    process_kind="hook",
                    name=name,
                    layer=e.config.layer,
                    tool=tool,
                )

    async def _fire(self, entry: HookEntry, payload: dict[str, Any]) -> Verdict:
        canon, cfg = entry.canon, entry.config
        assert canon is not None
        given = dict(canon.env)
        if canon.handles:  # a keyring read may block: on a worker thread
            try:
                resolved = await asyncio.to_thread(resolve, given, field=cfg.name)
            except SCodeError as err:
                return Verdict("failed", err.message)
            self.session.redactor.add_known(resolved.values)
            given = resolved.env
        argv = [canon.executable.path or canon.argv[0], *canon.argv[1:]]
        env = base_env(self.writable)
        env.update(given)  # its own env: secrets go here, never into its argv
        env.update({var: self.workspace for var in PROJECT_VARS})
        env.update(python_env())  # no imports from its folder or the cwd, no workspace bytecode
        env["S_CODE_SESSION_ID"] = self.session_id
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        stamp = self._stamp()
        outcome = await run_hook(
            argv,
            canon.cwd,
            env,
            data,
            cfg.timeout_s,
            self.session.redactor,
            lambda: unchanged(canon, stamp),
        )
        found = verdict(outcome, cfg.timeout_s)
        if found.decision == "changed":
            self._seen = None  # read everything again at the next call: it is pending now
        failed = found.decision == "failed"
        if failed or canon.hash in self._errors:
            if failed:
                self._errors[canon.hash] = found.reason
            else:
                self._errors.pop(canon.hash, None)
            self.announce()
        return found

    def _payload(
        self, event: str, tool: str | None, args: Any, result: Any = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "cwd": self.workspace,
            "hook_event_name": event,
        }
        if tool is not None:
            body["tool_name"] = tool
            body["tool_input"] = args if args is not None else {}
        if result is not None:
            body["tool_response"] = result
        return body

    async def _gate(self, event: str, tool: str, args: Any, result: Any = None) -> str:
        """Fire ``event``'s hooks for ``tool``; raise when one blocks; the reasons of an ask."""
        covering = [e for e in self.entries.values() if e.config.covers(tool)]
        if not covering:
            return ""
        self._refuse_unready(covering, tool)  # PostToolUse's too: before the tool ever runs
        firing = [e for e in covering if e.config.event == event and e.problem is None]
        if not firing:
            return ""
        payload = self._payload(event, tool, args, result)
        verdicts = await asyncio.gather(*(self._fire(e, payload) for e in firing))
        worst: tuple[int, HookEntry, Verdict] | None = None
        asks: list[str] = []
        for e, v in zip(firing, verdicts, strict=True):
            rank = RANK[v.decision]
            if v.decision == "failed" and e.config.on_failure == "allow":
                log.warning("hook %s failed (onFailure: allow): %s", e.config.name, v.reason)
                continue
            if v.decision == "ask":
                asks.append(f"{e.config.name}: {v.reason}" if v.reason else e.config.name)
            if worst is None or rank > worst[0]:
                worst = (rank, e, v)
        if worst is None or worst[2].decision in ("allow", "ask"):
            return "; ".join(asks) if asks else ""
        _, e, v = worst
        if v.decision == "changed":  # never onFailure: what was approved is not what is there
            raise SCodeError(
                ErrorKind.HOST_PROCESS_UNTRUSTED,
                f"{tool} is blocked: the {e.config.layer} hook {e.config.name!r} is pending: "
                f"{v.reason}; approve it again (s-code/hostProcesses/approve kind hook)",
                process_kind="hook",
                name=e.config.name,
                layer=e.config.layer,
                tool=tool,
            )
        ran = event == "PostToolUse"
        after = " (it ran; its result is withheld)" if ran else ""
        if v.decision == "failed":
            message = (
                f"{tool} is blocked{after}: the hook {e.config.name!r} failed ({v.reason}); a "
                'gating hook that fails blocks unless it says "onFailure": "allow"'
            )
        else:
            message = f"{tool} is blocked by the hook {e.config.name!r}{after}: {v.reason}"
        raise SCodeError(
            ErrorKind.HOOK_BLOCKED,
            message,
            hook=e.config.name,
            layer=e.config.layer,
            event=event,
            tool=tool,
            reason=v.reason,
            failed=v.decision == "failed",
            ran=ran,
        )

    @contextlib.asynccontextmanager
    async def _settled(self) -> AsyncIterator[None]:
        """Hooks check what they run and run it only while no sandboxed command that could
        change it runs: none of this session's (in every tier: in tier 1 a command can still
        rename a folder on a script's path, or write a ``.venv`` a hook's program lives in), and
        none of another session's whose workspace holds a folder of their code scopes. A
        command that ended makes them read their configuration and scopes again first."""
        async with self.session.lock.host_code(self._scope_folders()):
            yield

    async def before(self, tool: str, args: Any) -> str | None:
        """PreToolUse: raises when a hook blocks (or cannot run); the reasons when one asks."""
        if self._seen is not None and not self.entries and self._fingerprint() == self._seen:
            return None  # no hooks, and no configuration came: nothing runs, nothing to settle
        async with self._settled():
            await self.refresh(if_changed=True)
            if not self.entries:
                return None
            return await self._gate("PreToolUse", tool, args) or None

    async def after(self, tool: str, args: Any, result: Any) -> str | None:
        """PostToolUse: the hooks see the result; raises when one blocks it; the reasons when
        one asks (the user then decides whether the agent gets the result)."""
        if not any(e.config.event == "PostToolUse" for e in self.entries.values()):
            return None
        async with self._settled():
            return await self._gate("PostToolUse", tool, args, result) or None

    async def session_event(self, event: str) -> None:
        """SessionStart (once) or SessionEnd: trusted hooks run; failures are only logged."""
        if event == "SessionStart":
            if self._started:
                return
            self._started = True
        firing = [e for e in self.entries.values() if e.config.event == event and self.trusted(e)]
        if firing:
            payload = self._payload(event, None, None)
            async with self._settled():
                verdicts = await asyncio.gather(*(self._fire(e, payload) for e in firing))
            for e, v in zip(firing, verdicts, strict=True):
                if v.decision == "failed":
                    log.warning("%s hook %s failed: %s", event, e.config.name, v.reason)

    def ask_card(self, tool: str, args: Any, reasons: str, *, ran: bool = False) -> Card:
        """The card of a call a hook wants the user to decide on (``ran``: the tool ran, and
        the question is whether the agent gets its result)."""
        text = json.dumps(
            args if args is not None else {}, indent=2, ensure_ascii=False, default=str
        )
        shown = self.session.redactor.redact_shown(text)
        details = ToolCallDetails(
            "hooks", tool, shown, {"asked_by": self.session.redactor.redact(reasons)}
        )
        what = f"giving the result of {tool} to the agent" if ran else tool
        return Card("tool_call", f"A hook asks before {what}: {reasons}"[:190], tool, details)

    # -- the control methods ------------------------------------------------------------------

    def view(self) -> list[dict[str, Any]]:
        out = []
        for e in self.entries.values():
            item: dict[str, Any] = {
                "kind": "hook",
                "name": e.config.name,
                "layer": e.config.layer,
                "file": e.config.file,
                "state": self.state(e),
                "hash": e.canon.hash if e.canon is not None else None,
                "event": e.config.event,
                "matcher": e.config.matcher,
                "onFailure": e.config.on_failure,
            }
            why = e.problem or (self._errors.get(e.canon.hash) if e.canon is not None else None)
            if why:
                item["error"] = self.session.redactor.redact(why)
            if e.canon is not None and e.canon.notes:
                item["notes"] = list(e.canon.notes)
            out.append(item)
        return out

    def _announce_alone(self) -> None:
        self.session.notify(
            methods.HOST_PROCESSES_UPDATED, {"entries": self.view(), "problems": []}
        )

    def find(self, name: str, layer: str | None) -> HookEntry:
        found = [
            e
            for e in self.entries.values()
            if e.config.name == name and (layer is None or e.config.layer == layer)
        ]
        if not found:
            raise SCodeError(ErrorKind.NOT_FOUND, f"no hook named {name!r} is configured")
        return found[0]

    async def approve(self, name: str, layer: str | None) -> dict[str, Any]:
        await self.refresh()
        entry = self.find(name, layer)
        if entry.problem is not None or entry.canon is None:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the hook {name!r} cannot run: {entry.problem}",
                process_kind="hook",
                name=name,
            )
        shown = entry.canon.hash
        await check(self.session, "host_process", host_card(entry.canon, self.session.redactor))
        if self.trust is None:
            raise SCodeError(
                ErrorKind.DURABILITY_UNCONFIRMED,
                "the state store is unavailable, so the approval could not be kept",
            )
        await self.refresh()
        entry = self.find(name, layer)
        if entry.canon is None or entry.canon.hash != shown:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_UNTRUSTED,
                f"the hook {name!r} changed while you were asked; approve it again",
                process_kind="hook",
                name=name,
            )
        self.trust.trust("hook", entry.config.layer, name, shown)
        self.publish()
        self.announce()
        return {"kind": "hook", "name": name, "layer": entry.config.layer, "hash": shown}

    async def revoke(self, name: str, layer: str | None) -> dict[str, Any]:
        entry = self.find(name, layer)
        if self.trust is not None:
            self.trust.revoke("hook", entry.config.layer, name)
        self.publish()
        self.announce()
        return {"kind": "hook", "name": name, "layer": entry.config.layer, "revoked": True}


_BY_SESSION: weakref.WeakKeyDictionary[Session, Hooks] = weakref.WeakKeyDictionary()


def hooks_for(session: Session) -> Hooks:
    """The session's hooks (made on first use; read on the first call)."""
    found = _BY_SESSION.get(session)
    if found is None:
        found = _BY_SESSION[session] = Hooks(session, session.folders.primary.real_path)
    return found

"""The session's background terminals: started after the user approved each one, read by
cursor, written to, waited on, killed, listed; nothing outlives the session.

Every ``terminal_start`` shows the host-process preview (card kind ``host_process``: it runs
outside the sandbox with the user's account's access; the exact argv, the program found and its
hash, the cwd, the environment names and credential handles) and asks, in every mode: one
approval per start, none remembered. Credential handles in ``env`` are resolved only then, and
their values join the session's redactor before the process can print anything; one in
``command`` is ``invalid_params`` (every program of the user can read a command line). The
helper of each terminal records its tree (:mod:`s_code.hostproc.trees`) so that a sidecar killed
outright along with it has what is left reaped when the next one starts. At most ``MAX_LIVE`` run
at once per session.
Blocking work — spawning, writing, waiting, killing — runs on worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from s_code.approvals.caller import current
from s_code.approvals.cards import Card
from s_code.approvals.gate import check
from s_code.credentials.handles import refuse_in_args
from s_code.credentials.resolve import resolve
from s_code.hostproc.entry import Canonical, agent_writable, base_env, canonical, host_path
from s_code.hostproc.preview import host_card
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.session.session import Session
from s_code.terminals.process import Terminal

MAX_LIVE = 8
SETTLE_S = 1.0
LATER_READS = (
    "its code lies in the workspace: sandboxed commands wait until it has started, but code it "
    "reads later (a shell script runs line by line, a server loads modules when first used) can "
    "still be changed by a command while it runs"
)
"""How long after a start sandboxed commands wait when the terminal's code lies where they
write: its interpreter reads its script meanwhile."""
MAX_KEPT = 32  # ended terminals still listed (their output still readable)
MAX_WRITE = 64 * 1024
# Spawning, writing and killing wait in threads of their own, never in the few threads of
# asyncio's default executor that every other tool's blocking work needs.
POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="s-code-terminal")


class Terminals:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.writable = agent_writable(r.real_path for r in session.folders.roots)
        self.terminals: dict[str, Terminal] = {}
        self._seq: dict[str, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exited: dict[str, asyncio.Event] = {}
        self._starting = 0
        self.announce: Callable[[], None] = lambda: None
        session.on_close.append(self.close_now)

    # -- helpers ------------------------------------------------------------------------------

    def get(self, terminal_id: str, every: bool = False) -> Terminal:
        """The terminal ``terminal_id`` of the agent asking (``every``: of any agent, for the
        user)."""
        found = self.terminals.get(terminal_id)
        if found is None or not (every or _mine(found)):  # another agent's is not there
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"no terminal {terminal_id!r} in this session (terminal_list lists them)",
                terminal_id=terminal_id,
            )
        return found

    def live(self) -> list[Terminal]:
        return [t for t in self.terminals.values() if t.exit is None]

    def _cwd(self, cwd: str | None) -> str:
        folders = self.session.folders
        if cwd in (None, "", "."):
            return folders.primary.real_path
        located = folders.locate(cwd, "cwd")
        path = os.path.join(located.root.real_path, *located.parts)
        if not os.path.isdir(path) or os.path.realpath(path) != path:
            raise invalid_params(
                f"cwd {cwd!r} is not a directory of the workspace (no links)", "cwd"
            )
        return path

    def _env(self, tty: bool, extra: dict[str, str]) -> dict[str, str]:
        env = base_env(self.writable)
        env.update({"PAGER": "cat", "GIT_PAGER": "cat"})
        env["TERM"] = "xterm-256color" if tty else "dumb"
        if not tty:
            env["NO_COLOR"] = "1"
        env.update(extra)
        return env

    # -- the reader thread's callbacks (moved onto the event loop) ----------------------------

    def _emit(self, term: Terminal, text: str) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        seq = self._seq[term.id] = self._seq.get(term.id, 0) + 1
        params = {"terminalId": term.id, "seq": seq, "text": text}
        term.emitted(len(text))

        def send() -> None:
            try:
                self.session.notify(methods.TERMINAL_OUTPUT, params)
                if term.owner is not None:
                    term.owner.notify(methods.TERMINAL_OUTPUT, params)
            finally:
                term.sent(len(text))

        loop.call_soon_threadsafe(send)

    def _exit(self, term: Terminal) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def done() -> None:
            event = self._exited.get(term.id)
            if event is not None:
                event.set()
            self.announce()

        loop.call_soon_threadsafe(done)

    @staticmethod
    async def _run(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(POOL, fn, *args)

    # -- the tools ----------------------------------------------------------------------------

    async def start(
        self, command: list[str], cwd: str | None, env: dict[str, str], tty: bool
    ) -> dict[str, Any]:
        if not command or not command[0]:
            raise invalid_params("command must be a non-empty array (the program first)", "command")
        refuse_in_args(command, "command")  # a secret is passed in env, never in an argv
        if len(self.live()) >= MAX_LIVE:
            raise SCodeError(
                ErrorKind.LIMIT_EXCEEDED,
                f"{MAX_LIVE} terminals are running in this session: kill one first (terminal_kill)",
                limit=MAX_LIVE,
            )
        for key in env:
            if not key or "=" in key or "\0" in key or "\0" in env[key]:
                raise invalid_params(f"env.{key}: not a valid variable", f"env.{key}")
        where = await self._run(self._cwd, cwd)
        terminal_id = "term-" + uuid.uuid4().hex[:8]

        def project() -> Canonical:
            return canonical(
                "terminal",
                terminal_id,
                "session",
                "terminal_start (asked by the agent)",
                tuple(command),
                where,
                tuple(sorted(env.items())),
                host_path(self.writable),
                (("tty", tty),),
                writable=self.writable,
            )

        canon = await asyncio.to_thread(project)
        if canon.scope is not None and canon.scope.folders_in(self.writable):
            canon = dataclasses.replace(canon, notes=(*canon.notes, LATER_READS))
        if canon.executable.path is None:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                canon.executable.problem or f"{command[0]!r} was not found",
                field="command.0",
            )
        card = host_card(canon, self.session.redactor)

        async def again() -> Card:
            # after the prompt: what runs is what was approved (a script rewritten while the
            # user read the card is asked about anew)
            nonlocal canon
            canon = await asyncio.to_thread(project)
            if canon.scope is not None and canon.scope.folders_in(self.writable):
                canon = dataclasses.replace(canon, notes=(*canon.notes, LATER_READS))
            return host_card(canon, self.session.redactor)

        approval = await check(self.session, "host_process", card, again)  # every start
        resolved = await asyncio.to_thread(resolve, env)
        self.session.redactor.add_known(resolved.values)
        if len(self.live()) + self._starting >= MAX_LIVE:  # others started meanwhile
            raise SCodeError(
                ErrorKind.LIMIT_EXCEEDED, f"{MAX_LIVE} terminals are running", limit=MAX_LIVE
            )
        # From the last check until its program has had time to read its script, no sandboxed
        # command that could change its code runs (in tier 1 too: a command can rename a folder
        # on the script's path, and a read-only bind does not stop that).
        approved = canon.hash
        folders = canon.scope.folders_in(self.writable) if canon.scope is not None else ()
        hold = contextlib.AsyncExitStack()
        await hold.enter_async_context(self.session.lock.host_code(folders))
        try:
            canon = await asyncio.to_thread(project)
            if canon.hash != approved:
                raise SCodeError(
                    ErrorKind.HOST_PROCESS_UNTRUSTED,
                    "what the terminal would run changed after you approved it; it was not "
                    "started (start it again to see the change)",
                    terminal_id=terminal_id,
                )
            started = await self._spawn(terminal_id, command, where, tty, canon, resolved)
        except BaseException:
            await hold.aclose()
            raise
        asyncio.get_running_loop().create_task(self._release_after_start(hold, started, folders))
        await asyncio.to_thread(approval.ran, {"terminal_id": terminal_id, "argv": list(command)})
        self._trim()
        self.announce()
        return {"terminal_id": terminal_id}

    async def _release_after_start(
        self, hold: contextlib.AsyncExitStack, term: Terminal, folders: tuple[str, ...]
    ) -> None:
        """Let commands run again once the terminal's program has read its script: at once when
        none of its code lies where a command writes, else when it ended or after
        ``SETTLE_S`` (a script an interpreter reads later, as a shell does line by line, is
        named on the card as code a command can still change)."""
        try:
            if folders:
                event = self._exited.get(term.id)
                if event is not None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(event.wait(), SETTLE_S)
        finally:
            await hold.aclose()

    async def _spawn(
        self,
        terminal_id: str,
        command: list[str],
        where: str,
        tty: bool,
        canon: Canonical,
        resolved: Any,
    ) -> Terminal:
        self._starting += 1  # a slot held until this one is in the table
        self._loop = asyncio.get_running_loop()
        term = Terminal(
            terminal_id,
            tuple(command),
            where,
            tty,
            self.session.redactor,
            self._emit,
            self._exit,
            owner=current(),
        )
        self._exited[terminal_id] = asyncio.Event()
        argv = [canon.executable.path, *command[1:]]
        try:
            await self._run(term.spawn, argv, self._env(tty, resolved.env))
        except OSError as exc:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the terminal could not start: {exc.strerror or exc}",
                terminal_id=terminal_id,
            ) from None
        finally:
            self._starting -= 1
        self.terminals[terminal_id] = term
        return term

    def _trim(self) -> None:
        ended = [t for t in self.terminals.values() if t.exit is not None]
        for old in ended[: max(0, len(ended) - MAX_KEPT)]:
            self.terminals.pop(old.id, None)
            self._exited.pop(old.id, None)

    def read(self, terminal_id: str, cursor: int, max_bytes: int) -> dict[str, Any]:
        term = self.get(terminal_id)
        exit_ = term.exit  # read before the buffer: an exit seen means all output is in it
        part = term.buffer.read(cursor, max_bytes, self.session.redactor.known_bytes)
        return {
            "output": part.output,
            "cursor": part.cursor,
            "truncated": part.truncated,
            "omitted_bytes": part.omitted_bytes,
            "exit": exit_.to_wire() if exit_ is not None else None,
        }

    async def write(self, terminal_id: str, text: str) -> dict[str, Any]:
        term = self.get(terminal_id)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > MAX_WRITE:
            raise invalid_params(f"text is larger than {MAX_WRITE} bytes", "text")
        if term.exit is not None:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the terminal {terminal_id!r} has ended",
                terminal_id=terminal_id,
            )
        written = await self._run(term.write, data)
        if written < len(data):
            raise SCodeError(
                ErrorKind.TIMEOUT,
                f"the terminal {terminal_id!r} took only {written} of {len(data)} bytes "
                "(it is not reading its input)",
                terminal_id=terminal_id,
                written=written,
            )
        return {"terminal_id": terminal_id, "written": written}

    async def wait(self, terminal_id: str, timeout_ms: int) -> dict[str, Any]:
        term = self.get(terminal_id)
        event = self._exited.get(terminal_id)
        if term.exit is None and event is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout_ms / 1000)
        exit_ = term.exit
        return {
            "terminal_id": terminal_id,
            "exit": exit_.to_wire() if exit_ is not None else None,
            "timed_out": exit_ is None,
            "cursor": term.buffer.total,
        }

    async def kill(self, terminal_id: str, every: bool = False) -> dict[str, Any]:
        term = self.get(terminal_id, every)
        gone = await self._run(term.kill)
        if not gone:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                f"the terminal {terminal_id!r} could not be stopped",
                terminal_id=terminal_id,
            )
        event = self._exited.get(terminal_id)
        if event is not None:
            await event.wait()  # its exit is recorded, its pid forgotten
        exit_ = term.exit
        return {
            "terminal_id": terminal_id,
            "exit": exit_.to_wire() if exit_ else None,
            "gone": True,
        }

    def entries(self, every: bool = False) -> list[dict[str, Any]]:
        """The terminals of the agent asking (``every``: all of them, for the user's list)."""
        shown = self.session.redactor.redact_shown
        return [
            {
                "terminal_id": t.id,
                "command": [shown(a) for a in t.argv],
                "cwd": t.cwd,
                "tty": t.tty,
                "state": t.state,
                "exit": t.exit.to_wire() if t.exit is not None else None,
                "bytes": t.buffer.total,
                "started_at": t.started_at,
            }
            for t in self.terminals.values()
            if every or _mine(t)
        ]

    async def end_owner(self, owner_id: str) -> None:
        """An attached agent went away: every terminal it started ends (the whole tree)."""
        mine = [t for t in self.live() if t.owner is not None and t.owner.id == owner_id]
        if mine:
            await asyncio.gather(*(self._run(t.kill) for t in mine))

    def view(self) -> list[dict[str, Any]]:
        """The terminals as ``hostProcesses/list`` entries."""
        return [
            {
                "kind": "terminal",
                "name": e["terminal_id"],
                "layer": "session",
                "state": "running" if e["state"] == "running" else "stopped",
                "hash": None,
                "command": e["command"],
                "exit": e["exit"],
            }
            for e in self.entries(every=True)
        ]

    async def close(self) -> None:
        """End every terminal (the session ends)."""
        live = self.live()
        if live:
            await asyncio.gather(*(self._run(t.kill) for t in live))

    def close_now(self) -> None:
        """The same, from a synchronous close: SIGTERM to every helper, then wait for each."""
        live = self.live()
        for t in live:
            t.killed = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(t.pid, 15)
        for t in live:
            t.kill()


def _mine(term: Terminal) -> bool:
    """Does ``term`` belong to the agent asking now?"""
    caller = current()
    return (term.owner.id if term.owner else None) == (caller.id if caller else None)


_BY_SESSION: weakref.WeakKeyDictionary[Session, Terminals] = weakref.WeakKeyDictionary()


def terminals_for(session: Session) -> Terminals:
    found = _BY_SESSION.get(session)
    if found is None:
        found = _BY_SESSION[session] = Terminals(session)
    return found


def existing(session: Session) -> Terminals | None:
    return _BY_SESSION.get(session)

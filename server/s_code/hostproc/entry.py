"""A host-process entry made canonical, and the hash its trust is bound to.

Trust is bound to exactly what runs, never to a name: the layer and file, the resolved absolute
executable and a SHA-256 of its content, the arguments, the working directory, the environment
(names and the values as written: a value such as ``NODE_OPTIONS=--require x.js`` changes what
runs; a credential stays a handle), the credential handles, the content of every script an
argument names (``python server.py``, ``node dist/index.js``, a hook's ``./check.sh``), and the
entry's other settings. Any change makes the entry pending again. A launcher that fetches what it
runs (``npx pkg@latest``, ``uvx pkg``) floats under an approval: the preview says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from s_code.credentials.handles import handle_names

MAX_HASHED = 64 << 20
_SECRET_NAME = re.compile(r"(?i)(token|secret|passw|api_?key|private|credential|auth)")
_HANDLE = re.compile(r"\$\{secret:(?:keyring|env):[^}]*\}")
_FETCHERS = {"npx", "uvx", "pipx", "bunx", "pnpx"}
_TASK_RUNNERS = {
    "make": "its Makefile",
    "gmake": "its Makefile",
    "npm": "package.json",
    "yarn": "package.json",
    "pnpm": "package.json",
    "bun": "package.json",
    "cargo": "Cargo.toml and build scripts",
    "just": "its justfile",
    "task": "its Taskfile",
    "tox": "tox.ini",
    "nox": "noxfile.py",
    "rake": "its Rakefile",
    "gradle": "its build files",
    "mvn": "pom.xml",
    "poetry": "pyproject.toml",
    "uv": "pyproject.toml",
    "cmake": "CMakeLists.txt",
    "ninja": "build.ninja",
}
_SHELLS = {"sh", "bash", "dash", "zsh"}
_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", "then", "do", "else", "exec", "env", "time", "!"}


BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TMPDIR")


def base_env() -> dict[str, str]:
    """What a host process inherits of the sidecar's environment: who and where the user is,
    and PATH without its relative entries (``.``, an empty one, ``bin``): through one of them a
    file in the working directory, which the agent can write, would stand in for a program the
    user trusted (a hook's ``jq``, a terminal's ``make``)."""
    env = {k: os.environ[k] for k in BASE_ENV if k in os.environ}
    if "PATH" in env:
        env["PATH"] = ":".join(p for p in env["PATH"].split(":") if os.path.isabs(p))
    return env


@dataclass(frozen=True)
class Resolved:
    """The executable a command names, found now."""

    path: str | None  # absolute, as found (a venv's python stays the venv's); None: not found
    sha256: str | None  # of the file it leads to (links followed)
    problem: str | None = None
    real: str | None = None  # where its links lead


@dataclass(frozen=True)
class Canonical:
    kind: str  # "mcp" | "hook" | "terminal"
    name: str
    layer: str
    file: str
    command: str
    argv: tuple[str, ...]  # as written (handles unresolved), the command first
    cwd: str
    env: tuple[tuple[str, str], ...]
    executable: Resolved
    scripts: tuple[tuple[str, str], ...]  # (path, sha256) of files the arguments name
    settings: tuple[tuple[str, Any], ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def env_names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.env)

    @property
    def handles(self) -> tuple[str, ...]:
        found = {
            h for text in (*self.argv, *(v for _, v in self.env)) for h in _HANDLE.findall(text)
        }
        return tuple(sorted(found))

    @cached_property
    def hash(self) -> str:
        body = {
            "kind": self.kind,
            "name": self.name,
            "layer": self.layer,
            "file": self.file,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": [list(e) for e in self.env],
            "executable": self.executable.path,
            "executable_real": self.executable.real,
            "executable_sha256": self.executable.sha256,
            "scripts": [list(s) for s in self.scripts],
            "handles": list(self.handles),
            "settings": [[k, v] for k, v in self.settings],
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def shown_env(self) -> tuple[str, ...]:
        """``NAME=value`` as the preview shows them: a handle as a handle, a value whose name
        says it is secret hidden (it should be a handle)."""
        out = []
        for name, value in self.env:
            if _HANDLE.fullmatch(value) or not _SECRET_NAME.search(name):
                out.append(f"{name}={value}")
            else:
                out.append(f"{name}=(a literal value, hidden: use a credential handle)")
        return tuple(out)


_hash_cache: dict[tuple[int, int, int, int, int], str] = {}


def file_sha256(path: str) -> str | None:
    """The SHA-256 of a regular file (cached by its identity; a larger file than MAX_HASHED is
    known by its identity alone), or None when it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        cached = _hash_cache.get(key)
        if cached is not None:
            return cached
        if st.st_size > MAX_HASHED:
            digest = "identity:" + ":".join(map(str, key))
        else:
            h = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                h.update(chunk)
            digest = h.hexdigest()
        _hash_cache[key] = digest
        return digest
    finally:
        os.close(fd)


def resolve_executable(command: str, cwd: str, path: str) -> Resolved:
    """The program a command names: relative to ``cwd`` when it holds a ``/``, else the first
    executable on ``path`` (absolute entries only)."""
    candidates = (
        [os.path.join(cwd, command)]
        if "/" in command
        else [os.path.join(d, command) for d in path.split(":") if os.path.isabs(d)]
    )
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            found = os.path.abspath(candidate)
            real = os.path.realpath(found)
            return Resolved(found, file_sha256(real), None, real)
    return Resolved(None, None, f"{command!r} was not found (PATH and the working directory)")


def _scripts(argv: tuple[str, ...], cwd: str) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    for arg in argv[1:]:
        if arg.startswith("-") or _HANDLE.search(arg):
            continue
        path = os.path.realpath(os.path.join(cwd, arg))
        digest = file_sha256(path) if os.path.isfile(path) else None
        if digest is not None and (path, digest) not in found:
            found.append((path, digest))
    return tuple(found)


def _named(
    paths: tuple[str, ...], seen: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    for path in paths:
        real = os.path.realpath(path)
        digest = file_sha256(real) if os.path.isfile(real) else None
        if digest is not None and (real, digest) not in seen and (real, digest) not in found:
            found.append((real, digest))
    return tuple(found)


def _floating(argv: tuple[str, ...]) -> tuple[str, ...]:
    if os.path.basename(argv[0]) not in _FETCHERS:
        return ()
    specs = [a for a in argv[1:] if not a.startswith("-")][:1]
    for spec in specs:
        version = spec.rsplit("@", 1)[1] if "@" in spec.lstrip("@") else ""
        if not version or version in ("latest", "next") or version[0] in "^~>*":
            return (
                f"{argv[0]} fetches {spec!r} when it starts, and that can change under this "
                "approval: pin an exact version (name@1.2.3) to bind the approval to it",
            )
    return ()


def _commands(argv: tuple[str, ...]) -> list[list[str]]:
    """Each command an entry runs, as words: its argv, or each command of a shell line
    (``sh -c "a && b"``), as far as splitting the line's words can tell."""
    if os.path.basename(argv[0]) in _SHELLS and len(argv) >= 3 and argv[1] == "-c":
        lexer = shlex.shlex(argv[2], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            return [list(argv)]
        found: list[list[str]] = [[]]
        for word in words:
            if word in _OPERATORS:
                found.append([])
            elif not (not found[-1] and "=" in word and not word.startswith("=")):
                found[-1].append(word)  # (a leading NAME=value is the command's environment)
        return [c for c in found if c]
    return [list(argv)]


def _indirect(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What an entry runs that its approval cannot see: a task runner runs what its files say,
    ``python -m`` the module found on its path; neither file is hashed."""
    notes = []
    for words in _commands(argv):
        name = os.path.basename(words[0])
        if name in _TASK_RUNNERS:
            notes.append(
                f"{words[0]} runs what {_TASK_RUNNERS[name]} says, which is not part of this "
                "approval: a change there does not ask again (name a script instead to bind it)"
            )
        elif re.fullmatch(r"python[0-9.]*", name) and "-m" in words[1:2]:
            module = words[2] if len(words) > 2 else "?"
            notes.append(
                f"{words[0]} -m {module} runs the module found on its path, which is not part "
                "of this approval: a change to it does not ask again (name the script instead)"
            )
    return tuple(dict.fromkeys(notes))


def canonical(
    kind: str,
    name: str,
    layer: str,
    file: str,
    argv: tuple[str, ...],
    cwd: str,
    env: tuple[tuple[str, str], ...],
    search_path: str,
    settings: tuple[tuple[str, Any], ...] = (),
    extra_scripts: tuple[str, ...] = (),
) -> Canonical:
    """``extra_scripts``: absolute paths of files the entry runs that its argv does not name
    one by one (the words of a hook's shell line); each one that is a file is hashed too."""
    handle_names(argv[1:], dict(env))  # a malformed handle: invalid_params, naming its field
    executable = resolve_executable(argv[0], cwd, search_path)
    notes = _floating(argv) + _indirect(argv)
    if any(_HANDLE.search(a) for a in argv[1:]):
        notes += (
            "a credential in an argument can be read by every program of yours while this runs "
            "(/proc/PID/cmdline; a sandboxed command at tier 2 too): pass it in env instead",
        )
    if executable.problem:
        notes = (*notes, executable.problem)
    return Canonical(
        kind=kind,
        name=name,
        layer=layer,
        file=file,
        command=argv[0],
        argv=argv,
        cwd=cwd,
        env=env,
        executable=executable,
        scripts=_scripts(argv, cwd) + _named(extra_scripts, _scripts(argv, cwd)),
        settings=settings,
        notes=notes,
    )

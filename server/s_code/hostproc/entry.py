"""A host-process entry made canonical, and the hash its trust is bound to.

Trust is bound to exactly what runs, never to a name: the layer and file, the resolved absolute
executable and a SHA-256 of its content, the arguments, the working directory, the environment
(names and the values as written: a value such as ``NODE_OPTIONS=--require x.js`` changes what
runs; a credential stays a handle), the credential handles (in ``env`` only: one in the argv is
refused, since every program of the user can read a command line), the content of every script an
argument names (``python server.py``, ``node dist/index.js``, a hook's ``./check.sh``), and the
entry's other settings. Any change makes the entry pending again. A launcher that fetches what it
runs (``npx pkg@latest``, ``uvx pkg``) floats under an approval: the preview says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from s_code.credentials.handles import handle_names, refuse_in_args
from s_code.hostproc.scope import CodeScope, ScopeTooLarge, code_scope
from s_code.protocol.errors import SCodeError
from s_code.sandbox.caches import cache_root
from s_code.state.store import state_dir

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
    "go": "the packages it builds or runs",
    "just": "its justfile",
    "task": "its Taskfile",
    "tox": "tox.ini",
    "nox": "noxfile.py",
    "pytest": "conftest.py and its configuration",
    "pre-commit": ".pre-commit-config.yaml",
    "eslint": "its configuration and the plugins it loads",
    "prettier": "its configuration and the plugins it loads",
    "jest": "its configuration",
    "vitest": "its configuration",
    "rake": "its Rakefile",
    "bundle": "the Gemfile",
    "composer": "composer.json",
    "gradle": "its build files",
    "mvn": "pom.xml",
    "poetry": "pyproject.toml",
    "uv": "pyproject.toml",
    "cmake": "CMakeLists.txt",
    "ninja": "build.ninja",
}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}
_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", "\n", ";;", "|&"}
_WRAPPERS = {
    "command", "builtin", "exec", "env", "nice", "nohup", "time", "timeout", "xargs", "sudo",
    "doas", "stdbuf", "ionice", "taskset", "chrt", "then", "do", "else", "elif", "if", "while",
    "until", "!", "{", "}",
}  # fmt: skip
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_NUMBER = re.compile(r"[0-9][0-9.]*[smhd]?")
MAX_ANALYSED = 64 * 1024
"""A shell line longer than this is not split into commands (its preview says so)."""


BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TMPDIR")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def agent_writable(roots: Iterable[str]) -> tuple[str, ...]:
    """Where the agent can put a file: the workspace folders, and the private caches sandboxed
    commands write (their tmp is inside)."""
    found = [os.path.realpath(r) for r in roots]
    if found:
        with contextlib.suppress(SCodeError, OSError):  # a bad override: sandboxing refuses it
            found.append(os.path.realpath(cache_root(Path(found[0]))))
    return tuple(found)


def host_path(writable: Iterable[str], path: str | None = None) -> str:
    """PATH for a host process, and for finding the programs it names: the sidecar's (or
    ``path``) without any entry through which a file the agent wrote could stand in for a
    program the user trusted (a hook's ``jq``, a terminal's ``make``). An entry is judged by how
    it is spelled, not only by where it leads now: it is dropped when it is relative or empty
    (the working directory), holds ``.`` or ``..``, or when any of its prefixes lives in, or
    leads into, ``writable``, ``/proc`` or ``/dev`` (``<ws>/.venv/bin`` where ``.venv`` is a link
    the agent can point elsewhere later; ``/proc/self/cwd/bin``). What is left depends only on
    names the agent cannot change. Such a program is still run when named by its path: then it
    is hashed, and a change asks again. When no entry is left, :data:`DEFAULT_PATH`."""
    value = os.environ.get("PATH", "") if path is None else path
    return _host_path(value, tuple(writable))


_SYSTEM = ("/proc/", "/dev/")


@lru_cache(maxsize=64)
def _host_path(value: str, writable: tuple[str, ...]) -> str:
    banned = (*_SYSTEM, *(w.rstrip("/") + "/" for w in writable))
    kept = [entry for entry in value.split(":") if _safe_entry(entry, banned)]
    return ":".join(dict.fromkeys(kept)) or DEFAULT_PATH


def _safe_entry(entry: str, banned: tuple[str, ...]) -> bool:
    parts = [p for p in entry.split("/") if p]
    if not entry.startswith("/") or any(p in (".", "..") for p in parts):
        return False
    holder = "/"
    for part in parts:
        spelled = os.path.join(holder, part)  # the name, in the folder that holds it
        real = os.path.realpath(spelled)
        if any(f"{place.rstrip('/')}/".startswith(banned) for place in (spelled, real)):
            return False
        holder = real
    return True


def python_env() -> dict[str, str]:
    """What a host process's Python is told: never import from the script's folder or the
    working directory (``PYTHONSAFEPATH``), and read and write bytecode only in a cache of its
    own in the user's state directory (``PYTHONPYCACHEPREFIX``), never a ``__pycache__`` of the
    workspace, where a command could plant a compiled module that shadows a source."""
    return {"PYTHONSAFEPATH": "1", "PYTHONPYCACHEPREFIX": os.path.join(state_dir(), "pycache")}


def base_env(writable: Iterable[str]) -> dict[str, str]:
    """What a host process inherits of the sidecar's environment: who and where the user is,
    and PATH as :func:`host_path` makes it."""
    env = {k: os.environ[k] for k in BASE_ENV if k in os.environ}
    env["PATH"] = host_path(writable)
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
    scope: CodeScope | None = None
    """Every file whose change changes what runs (:mod:`s_code.hostproc.scope`)."""

    @property
    def env_names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.env)

    @property
    def handles(self) -> tuple[str, ...]:
        return tuple(sorted({h for _, v in self.env for h in _HANDLE.findall(v)}))

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
            "scope": self.scope.digest if self.scope is not None else None,
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
        if arg.startswith("-"):
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


MAX_MENTIONED = 64
_PIECES = re.compile(r"[=:,\s]+")
CODE_VARS = frozenset(
    {
        "PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONHOME", "NODE_PATH",
        "NODE_OPTIONS", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYLIB", "RUBYOPT", "GEM_PATH",
        "GEM_HOME", "BASH_ENV", "ENV", "ZDOTDIR", "LD_PRELOAD", "LD_LIBRARY_PATH", "CLASSPATH",
        "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "LUA_PATH", "LUA_CPATH", "DENO_DIR", "GOFLAGS",
    }
)  # fmt: skip
"""Variables whose values name code an interpreter loads (every path in them is scope)."""
CODE_FLAGS = frozenset(
    {"-r", "--require", "--import", "--loader", "--experimental-loader", "-I", "-cp",
     "-classpath", "--classpath", "--preload", "-javaagent", "--env-file", "--rcfile"}
)  # fmt: skip
"""Options whose next argument names code to load (``node -r ./x.js``)."""


def _mentioned(
    argv: tuple[str, ...], env: tuple[tuple[str, str], ...], cwd: str, writable: tuple[str, ...]
) -> list[str]:
    """The files and folders in the agent's reach that name code beyond the scripts: every path
    in a code variable (``PYTHONPATH=a:b``, ``NODE_OPTIONS=--require ./x.js``), any other
    variable whose value is such a path, an option's value (``--require=./x.js``, ``-r
    ./x.js``). Relative to ``cwd``. Each one's scope binds it (a folder whole)."""
    texts: list[tuple[str, bool]] = []  # (text, whether it is a list of paths)
    for i, arg in enumerate(argv[1:], 1):
        if arg.startswith("-") and "=" in arg:
            texts.append((arg.split("=", 1)[1], True))
        elif arg in CODE_FLAGS and i + 1 < len(argv):
            texts.append((argv[i + 1], True))
    for name, value in env:
        texts.append((value, True) if name in CODE_VARS else (value.strip(), False))
    found: list[str] = []
    for text, listed in texts:
        if _HANDLE.search(text):
            continue
        for piece in _PIECES.split(text) if listed else [text]:
            piece = piece.strip("\"'")
            if not piece or piece.startswith("-") or len(found) >= MAX_MENTIONED:
                continue
            path = os.path.normpath(os.path.join(cwd, os.path.expanduser(piece)))
            if os.path.lexists(path):
                real = os.path.realpath(path)
                if any(real == w or real.startswith(w.rstrip("/") + "/") for w in writable):
                    found.append(real)
    return list(dict.fromkeys(found))


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


def _shell_line(argv: list[str]) -> str | None:
    """The line a shell runs (``sh -c``, ``bash -lc``, ``sh -e -c``), when ``argv`` is one."""
    if os.path.basename(argv[0]) not in _SHELLS:
        return None
    for i, flag in enumerate(argv[1:], 1):
        if not flag.startswith("-") or flag.startswith("--"):
            return None
        if "c" in flag[1:]:
            return argv[i + 1] if i + 1 < len(argv) else None
    return None


def _program(words: list[str]) -> list[str]:
    """A command's words from its program on: wrappers (``env``, ``timeout 60``, ``nice -n 5``,
    ``command``, ``xargs``...), their options and ``NAME=value`` words skipped."""
    wrapped = False
    for i, word in enumerate(words):
        if os.path.basename(word) in _WRAPPERS or _ASSIGN.fullmatch(word):
            wrapped = True
        elif not (wrapped and (word.startswith("-") or _NUMBER.fullmatch(word))):
            return words[i:]
    return []


def _commands(argv: list[str], depth: int = 0) -> list[list[str]]:
    """Each command an entry runs, as words from its program on: its argv, or each command of a
    shell line (``sh -c "a && b"``, lines, nested shells), as far as the line's words tell.
    ValueError for a line too long to analyse (:data:`MAX_ANALYSED`)."""
    line = _shell_line(argv)
    if line is None:
        program = _program(argv)
        return [program] if program else []
    if len(line) > MAX_ANALYSED:
        raise ValueError("too long")
    lexer = shlex.shlex(line, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace, lexer.whitespace_split = " \t\r", True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell refuses it too
        return [_program(list(argv))]
    found: list[list[str]] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word not in _OPERATORS and not set(word) <= set("();<>|&\n"):
            current.append(word)
            continue
        command = _program(current)
        current = []
        if command and depth < 4 and _shell_line(command) is not None:
            found += _commands(command, depth + 1)
        elif command:
            found.append(command)
    return found


def _module(words: list[str]) -> str | None:
    """The module ``python -m`` runs (options before it allowed: ``python3 -I -m pkg``)."""
    if not re.fullmatch(r"python[0-9.]*", os.path.basename(words[0])):
        return None
    for i, word in enumerate(words[1:], 1):
        if word == "-m" or (word.startswith("-m") and len(word) > 2 and word[1] == "m"):
            return word[2:] or (words[i + 1] if i + 1 < len(words) else "?")
        if not word.startswith("-"):
            return None
    return None


def _indirect(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What an entry runs that its approval cannot see: a task runner runs what its files say,
    ``python -m`` the module found on its path; neither file is hashed."""
    try:
        commands = _commands(list(argv))
    except ValueError:
        return (
            f"its shell line is longer than {MAX_ANALYSED} characters and was not read for "
            "what it runs: check it yourself",
        )
    notes = []
    for words in commands:
        name = os.path.basename(words[0])
        module = _module(words)
        if name in _TASK_RUNNERS:
            notes.append(
                f"{words[0]} runs what {_TASK_RUNNERS[name]} says, which is not part of this "
                "approval: a change there does not ask again (name a script instead to bind it)"
            )
        elif module is not None:
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
    writable: tuple[str, ...] = (),
) -> Canonical:
    """``extra_scripts``: absolute paths of files the entry runs that its argv does not name
    one by one (the words of a hook's shell line); each one that is a file is hashed too.
    ``writable``: where the agent can write (:func:`agent_writable`), for the code scope; a
    scope too large to bind is a ValueError (the entry cannot run). A credential handle in the
    argv is ``invalid_params`` (each kind of entry refuses it first, naming its own field), and
    a malformed one in ``env`` too."""
    refuse_in_args(argv, "argv")
    handle_names(dict(env))
    executable = resolve_executable(argv[0], cwd, search_path)
    notes = _floating(argv) + _indirect(argv)
    if executable.problem:
        notes = (*notes, executable.problem)
    scripts = _scripts(argv, cwd) + _named(extra_scripts, _scripts(argv, cwd))
    named_dirs = [os.path.realpath(p) for p in extra_scripts if os.path.isdir(p)]
    mentioned = _mentioned(argv, env, cwd, writable) + named_dirs
    try:
        scope = code_scope(
            executable.path, [p for p, _ in scripts], writable, dict.fromkeys(mentioned)
        )
    except ScopeTooLarge as exc:
        raise ValueError(str(exc)) from None
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
        scripts=scripts,
        settings=settings,
        notes=notes + scope.notes,
        scope=scope,
    )

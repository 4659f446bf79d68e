"""What a hook's command names: the files bound to its trust and held from the agent.

A shell line is split as the shell would split its commands (``a.sh;b.sh``, ``$(./x)``,
``bash -c "./y z"``), and ``$CLAUDE_PROJECT_DIR``, ``$S_CODE_PROJECT_DIR``, ``~`` and the
variables of the hook's environment are expanded: every word that holds a ``/`` or is a file is a
file the hook names (existing or not yet), and the program the line starts with is found on PATH.
:func:`unchanged` checks right before a run that the program and scripts are still what was
approved.
"""

from __future__ import annotations

import os
import re
import shlex

from s_code.hooks.config import HookConfig
from s_code.hostproc.entry import Canonical, base_env, file_sha256, resolve_executable

PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "S_CODE_PROJECT_DIR")
_STANDALONE = re.compile(r"(?:^|(?<=[\s;&|(]))(?:\$\([^()]*\)|`[^`]*`)(?=$|[\s;&|)])")
_COMPUTED = re.compile(r"\$\(|`|\$\{?[0-9@*]|\beval\b|(?:^|[\s;&|(/])[^\s;&|()]*[*?\[][^\s;&|()]*/")
"""What makes a shell line's paths unknowable before it runs: a command substitution glued to a
path (``$(echo hooks)/check.sh``; one standing alone, :data:`_STANDALONE`, is a command like any
other), positional parameters, ``eval``, a glob in a folder of a path."""
_SHELL_SPLIT = re.compile(r"[\s;&|<>()`]+|\$\(")


def _expand(word: str, workspace: str) -> str:
    """``$CLAUDE_PROJECT_DIR``, ``$S_CODE_PROJECT_DIR``, ``~`` and the variables of the hook's
    environment as the shell would expand them."""
    env = base_env([workspace])
    env.update({var: workspace for var in PROJECT_VARS})
    word = re.sub(
        r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word
    )
    if word == "~" or word.startswith("~/"):
        word = os.path.expanduser("~") + word[1:]
    return word


def named_paths(cfg: HookConfig, cwd: str, workspace: str, search_path: str) -> tuple[str, ...]:
    """The files a hook names: every word of its line (split as the shell splits commands:
    ``a.sh;b.sh``, ``$(./x)``, ``bash -c "./y z"``) or argument that holds a ``/`` or is a file,
    and the program its shell line starts with (found on ``search_path``, the PATH it gets)."""
    if cfg.argv is not None:
        words = list(cfg.argv)
    else:
        assert cfg.command is not None
        try:
            words = shlex.split(cfg.command, comments=True)
        except ValueError:
            words = cfg.command.split()
    if cfg.command is not None:
        computed = _COMPUTED.search(_STANDALONE.sub(" ", cfg.command))
        if computed is not None:
            raise ValueError(
                f"its shell line computes what it runs ({computed.group(0)!r}): s-code cannot "
                "tell which files that is, so it cannot bind them to the approval; name the "
                "script in argv, or in a plain shell line"
            )
    pieces = [p for w in words for p in _SHELL_SPLIT.split(w) if p]
    found: list[str] = []
    for i, raw in enumerate(pieces):
        word = _expand(raw, workspace).strip("\"'")
        if "=" in word and not word.startswith("-"):  # NAME=path: the path is named too
            word = word.split("=", 1)[1].strip("\"'")
        if not word or word.startswith("-") or "${secret:" in word:
            continue
        if re.search(r"(?<!\$)\$(?![$?!#-])", word):  # $$, $?... are numbers, not paths
            raise ValueError(
                f"its shell line names {word!r}, which expands a variable s-code does not know: "
                "it cannot bind what that names to the approval"
            )
        path = os.path.normpath(os.path.join(cwd, word))
        if "/" in word or os.path.isfile(path) or os.path.isdir(path):  # `cd hooks` too
            found.append(path)
        elif i == 0 and cfg.command is not None:
            program = resolve_executable(word, cwd, search_path)
            if program.path is not None:
                found.append(program.path)
    return tuple(dict.fromkeys(found))


MAX_BESIDE = 256
"""Files of a script's own folder bound to the hook's trust (more: the folder is refused)."""


def beside(named: tuple[str, ...], workspace: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders the hook's named files live in (and the folders it names) inside the
    workspace, below its root; and every file in them. A script reads what lies beside it (a
    Python script imports its folder first, a shell script sources its neighbours): those are
    held from the agent and bound to the hook's trust with it, new files included."""
    root = os.path.realpath(workspace)
    folders: list[str] = []
    for path in named:
        real = os.path.realpath(path)
        folder = real if os.path.isdir(real) else os.path.dirname(real)
        if folder != root and folder.startswith(root + "/") and folder not in folders:
            folders.append(folder)
    files: list[str] = []
    for folder in folders:
        for top, dirs, names in os.walk(folder):
            dirs.sort()
            files += [os.path.join(top, n) for n in sorted(names)]
            if len(files) > MAX_BESIDE:
                raise ValueError(
                    f"{folder} holds more than {MAX_BESIDE} files: a hook's scripts must live in "
                    "a small folder of their own (its files are bound to the hook's trust)"
                )
    return tuple(folders), tuple(files)


def unchanged(canon: Canonical, stamp: object = None) -> bool:
    """Right before it runs: are the program, every script and the whole code scope the hook
    was trusted with still the same? (No sandboxed command runs meanwhile: the hooks wait.)"""
    real = canon.executable.real
    if real is not None and file_sha256(real) != canon.executable.sha256:
        return False
    if not all(file_sha256(path) == digest for path, digest in canon.scripts):
        return False
    return canon.scope is None or canon.scope.unchanged(stamp)

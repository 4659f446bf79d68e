"""What a home folder holds that runs as the user or opens their accounts, found where it really is.

A login shell runs ``.profile`` and ``.bashrc``, a desktop session its autostart entries and the
user's systemd units, ``~/.local/bin`` is on the user's ``PATH``; ``.ssh``, ``.gnupg``, ``.aws``,
``.kube`` and ``.docker`` hold the keys to their accounts (and settings that run programs:
``ProxyCommand``, ``credential_process``, exec plugins, credential helpers). No workspace may hold
them, by their real path: with a dotfiles repository installed by ``stow`` or ``ln -s``
(``~/.bashrc -> dotfiles/bashrc``), the repository holds the real ``.bashrc``.

:func:`dot_places` names each one that exists in each home (or that a link there names, even
dangling: creating the file would create the startup file) with its real path, every link on the
way to it (:func:`trace`: whoever can replace one of them decides where it leads) and its kind:

- ``file``: a workspace that holds its real path is refused;
- ``folder``: so is one that is it or lies inside it (``~/.ssh`` opened as the workspace);
- ``holder`` (``~/.config``, ``~/.local``): a workspace that holds it is refused, one inside it is
  not (``~/.config/nvim`` is an ordinary project; the folders above in it are refused by name).

The ``.config`` entries are looked up in ``$XDG_CONFIG_HOME`` too, the ``.local/share`` ones in
``$XDG_DATA_HOME`` (where the programs that run them look). It also returns the folders whose
entries decide where these are, for a cache to notice a change (:mod:`.unsafe_workspace`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Kind = Literal["file", "folder", "holder"]

_SHELL = "your shell runs it"
_SESSION = "your desktop session reads it when you log in"
_KEYS = "it holds keys to your accounts, and settings that run programs as you"
_PATH = "what is there runs when you type its name"
_HOLDER = "programs read their settings there, and many run code from them"

HOME_SPOTS: tuple[tuple[str, Kind, str], ...] = (
    *(
        (n, "file", _SHELL)
        for n in (
            ".profile",
            ".bash_profile",
            ".bash_login",
            ".bashrc",
            ".bash_logout",
            ".zshenv",
            ".zprofile",
            ".zshrc",
            ".zlogin",
            ".zlogout",
        )
    ),
    *(
        (n, "file", _SESSION)
        for n in (".xprofile", ".xsessionrc", ".xinitrc", ".xsession", ".pam_environment")
    ),
    (".gitconfig", "file", "git runs the programs it names, in every repository"),
    (".npmrc", "file", "npm runs the programs it names, and it holds your registry tokens"),
    *((n, "folder", _KEYS) for n in (".ssh", ".gnupg", ".aws", ".kube", ".docker")),
    (".config", "holder", _HOLDER),
    (".local", "holder", _HOLDER),
    (".local/bin", "folder", _PATH),
    ("bin", "folder", _PATH + " (the default .profile puts it on PATH)"),
)
"""Below each home: the name, its kind, why it matters (said in the refusal)."""

CONFIG_SPOTS: tuple[tuple[str, Kind, str], ...] = (
    ("autostart", "folder", "your desktop session starts what it lists when you log in"),
    ("systemd", "folder", "systemd runs your user units from it"),
    ("environment.d", "folder", "your session's environment (LD_PRELOAD, PATH) comes from it"),
    ("fish", "folder", "fish runs config.fish and conf.d/ at every start"),
    ("git", "folder", "git runs the programs its config names, in every repository"),
)
"""Below ``~/.config`` and ``$XDG_CONFIG_HOME``."""

DATA_SPOTS: tuple[tuple[str, Kind, str], ...] = (
    ("applications", "folder", "your desktop runs what its entries name"),
    ("systemd", "folder", "systemd runs your user units from it"),
)
"""Below ``~/.local/share`` and ``$XDG_DATA_HOME``."""


@dataclass(frozen=True)
class Dot:
    """One place of :data:`HOME_SPOTS` (or the others) in one home."""

    name: str  # as the user knows it: ".bashrc", ".config/autostart" (a full path when elsewhere)
    link: str  # the path the programs open
    real: str  # where that really is
    kind: Kind
    why: str
    links: tuple[str, ...] = ()  # every link on the way from ``link`` to ``real``

    @property
    def linked(self) -> bool:
        """The path leads elsewhere (a link on the way): the refusal names it."""
        return self.real != self.link


_MAX_HOPS = 40  # as the kernel's limit on links followed


def trace(path: str, start: str = "/") -> tuple[str, list[str]]:
    """The real path of ``path`` (what :func:`os.path.realpath` gives, a missing part kept as it
    is named) and every link on the way: who can replace one of them decides where ``path``
    leads. A relative ``path`` is taken from ``start``, a real path."""
    links: list[str] = []
    pending = [p for p in reversed(path.split("/")) if p]
    done = "/" if path.startswith("/") else start
    while pending:
        name = pending.pop()
        if name == ".":
            continue
        if name == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, name)
        try:
            target = os.readlink(here)
        except OSError:  # not a link, or missing: kept as named
            done = here
            continue
        links.append(here)
        if len(links) > _MAX_HOPS:  # a loop: what follows is kept as named
            return os.path.join(here, *reversed(pending)), links
        if target.startswith("/"):
            done = "/"
        pending.extend(p for p in reversed(target.split("/")) if p)
    return done, links


def _bases(homes: list[str]) -> list[tuple[str, tuple[tuple[str, Kind, str], ...]]]:
    bases = [(home, HOME_SPOTS) for home in homes]
    bases += [(os.path.join(home, ".config"), CONFIG_SPOTS) for home in homes]
    bases += [(os.path.join(home, ".local", "share"), DATA_SPOTS) for home in homes]
    for var, spots in (("XDG_CONFIG_HOME", CONFIG_SPOTS), ("XDG_DATA_HOME", DATA_SPOTS)):
        value = os.environ.get(var, "")
        if os.path.isabs(value):  # a relative one is ignored, as the XDG specification says
            bases.append((os.path.normpath(value), spots))
    return bases


def _name(link: str, homes: list[str]) -> str:
    for home in homes:
        if link.startswith(home.rstrip("/") + "/"):
            return link[len(home.rstrip("/")) + 1 :]
    return link


def dot_places(homes: list[str]) -> tuple[list[Dot], set[str]]:
    """Every place of the tables that exists (or that a link names) in the real paths ``homes``,
    once per real path, and the folders whose entries decide where they are: the folder each
    name is in, each link on the way is in, and the real path is in."""
    found: list[Dot] = []
    seen: set[str] = set()
    watched: set[str] = set()
    for base, spots in _bases(homes):
        real_base, base_links = trace(base)
        watched.update(os.path.dirname(p) for p in (base, *base_links, real_base))
        watched.add(real_base)
        try:
            present = set(os.listdir(real_base))
        except OSError:
            continue
        for rel, kind, why in spots:
            if rel.split("/", 1)[0] not in present:  # nothing there, not even a link
                continue
            link = os.path.join(base, rel)
            real, links = trace(rel, real_base)
            links = base_links + links
            watched.update(os.path.dirname(p) for p in (link, *links, real))
            if real in seen or not (links or os.path.lexists(link)):
                continue
            seen.add(real)
            found.append(Dot(_name(link, homes), link, real, kind, why, tuple(links)))
    return found, watched

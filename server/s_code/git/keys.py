"""The configuration keys a repository may not set: they run commands or load more config.

One table, from SECURITY.md §2. Keys arrive as ``git config --list`` prints them: section and
variable name lower-cased, the subsection (between the first and last dot) as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Value = str | None
"""A config value; None is a key written without ``=`` (boolean true)."""

_FALSE = {"", "false", "no", "off", "0"}
_TRUE = {"true", "yes", "on", "1"}
_HELPER_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def _always(_value: Value) -> bool:
    return True


def _not_boolean(value: Value) -> bool:
    return value is not None and value.strip().lower() not in _FALSE | _TRUE


def _truthy(value: Value) -> bool:
    return value is None or value.strip().lower() not in _FALSE


def _shell(value: Value) -> bool:
    return value is not None and value.lstrip().startswith("!")


def _helper_url(value: Value) -> bool:
    return value is not None and bool(_HELPER_URL.match(value.strip()))


@dataclass(frozen=True)
class Rule:
    section: str
    subsection: str | None
    """``None``: the key has no subsection; ``"*"``: any (or none); else a prefix it must have."""
    names: frozenset[str]
    """Variable names (lower case); empty means any name."""
    applies: Callable[[Value], bool]
    why: str


def _rule(
    section: str,
    names: str,
    why: str,
    subsection: str | None = None,
    applies: Callable[[Value], bool] = _always,
) -> Rule:
    return Rule(section, subsection, frozenset(names.split()), applies, why)


RULES: tuple[Rule, ...] = (
    _rule("core", "fsmonitor", "runs a command on status, diff, blame", applies=_not_boolean),
    _rule("core", "hookspath", "points git at hook programs"),
    _rule("hook", "", "defines hook commands (git >= 2.54)", subsection="*"),
    _rule("diff", "external", "runs an external diff program"),
    _rule("diff", "command textconv", "runs a diff driver or text converter", subsection="*"),
    _rule("filter", "clean smudge process", "runs a filter on file contents", subsection="*"),
    _rule("merge", "driver", "runs a merge driver", subsection="*"),
    _rule("include", "path", "loads configuration from another file"),
    _rule("includeif", "path", "loads configuration from another file", subsection="*"),
    _rule("extensions", "worktreeconfig", "loads config.worktree", applies=_truthy),
    _rule("core", "pager", "runs a pager"),
    _rule("pager", "", "runs a pager for a command", applies=_not_boolean),
    _rule("gpg", "program", "runs a signature program", subsection="*"),
    _rule("remote", "uploadpack receivepack vcs", "runs a transport program", subsection="*"),
    _rule("remote", "url pushurl", "runs a remote helper", subsection="*", applies=_helper_url),
    _rule("protocol", "allow", "allows transport protocols", subsection="*"),
    _rule("core", "sshcommand gitproxy askpass editor", "runs a command"),
    _rule("core", "alternaterefscommand", "runs a command"),
    _rule("core", "attributesfile", "loads attributes (filters, diff drivers) from elsewhere"),
    _rule("credential", "helper", "runs a credential helper", subsection="*"),
    _rule("sequence", "editor", "runs an editor"),
    _rule("alias", "", "runs a shell command", subsection="*", applies=_shell),
    _rule("submodule", "update", "runs a shell command", subsection="*", applies=_shell),
    _rule("uploadpack", "packobjectshook", "runs a command"),
    _rule("interactive", "difffilter", "runs a command"),
    _rule("difftool", "cmd", "runs a diff tool", subsection="*"),
    _rule("mergetool", "cmd", "runs a merge tool", subsection="*"),
    _rule("trailer", "command cmd", "runs a trailer command", subsection="*"),
    _rule("guitool", "cmd", "runs a command", subsection="*"),
    _rule("attr", "tree", "loads attributes from a tree"),
    _rule("lfs", "", "runs a git-lfs transfer agent", subsection="customtransfer."),
    _rule("lfs", "", "runs a git-lfs extension", subsection="extension."),
)


def split_key(key: str) -> tuple[str, str | None, str]:
    """``section.sub.section.name`` → (section, subsection or None, name), lower-cased ends."""
    first, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return first.lower(), (sub if dot else None), (name if dot else rest).lower()


def _gpg_program(name: str) -> bool:
    return name.endswith("program") or name.endswith("command")


def dangerous(key: str, value: Value) -> str | None:
    """Why ``key = value`` may not come from the repository, or None when it may."""
    section, sub, name = split_key(key)
    if section == "url" and sub is not None and name in ("insteadof", "pushinsteadof"):
        # url.<base>.insteadOf rewrites URLs to <base>: ext:: and other helpers run commands.
        return "rewrites URLs to a remote helper" if _HELPER_URL.match(sub) else None
    for rule in RULES:
        if rule.section != section:
            continue
        if rule.subsection is None and sub is not None:
            continue
        if rule.subsection not in (None, "*") and not (sub or "").lower().startswith(
            rule.subsection
        ):
            continue
        if section == "gpg":
            if not _gpg_program(name):
                continue
        elif rule.names and name not in rule.names:
            continue
        if rule.applies(value):
            return rule.why
    return None

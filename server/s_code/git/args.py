"""Validation of everything an agent may put on a git command line.

Revisions follow a strict syntax: a ref name (git's check-ref-format rules, never starting with
``-``) or an object name, with ``~N`` / ``^N`` suffixes; ranges are ``A..B`` or ``A...B``.
Options come from a per-tool allow-list. Some options are refused by name even before the
allow-list is consulted, so the error says exactly why (SECURITY.md §2): they load config, move
git elsewhere, run programs, write files, reach the network, or show file contents encoded where
the known-value redactor cannot read them (``--binary``). Every refusal is
``git_argument_rejected`` naming the argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from s_code.protocol.errors import ErrorKind, SCodeError

REFUSED: dict[str, str] = {
    "-c": "sets configuration",
    "--config-env": "sets configuration",
    "--exec-path": "moves git's helper programs",
    "-C": "changes git's directory",
    "--git-dir": "points git at another repository",
    "--work-tree": "points git at another work tree",
    "--namespace": "points git at other refs",
    "--super-prefix": "points git at another repository",
    "-O": "runs a program (open files in pager)",
    "--open-files-in-pager": "runs a program",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs text converters",
    "--show-signature": "runs gpg",
    "--output": "writes a file",
    "--no-index": "compares files outside the repository",
    "--upload-pack": "runs a transport program",
    "--receive-pack": "runs a transport program",
    "--exec": "runs a program",
    "--contents": "reads a file outside the repository",
    "--ignore-revs-file": "reads a file outside the repository",
    "-S": "reads a file outside the repository (blame)",
    "--paginate": "runs a pager",
    "-p": "runs a pager",
    "--binary": "encodes file contents (a zlib and base85 binary patch) past the redactor; "
    "binary files show as 'Binary files differ', or as text with --text",
}
"""Option names refused with a reason; matched on the part before ``=`` (and as a prefix of a
bundled short option, ``-Cfoo``)."""

_REF_COMPONENT = r"(?!\.)(?:[A-Za-z0-9_+,=-]|\.(?!\.))+(?<!\.lock)(?<!\.)"
_REF = rf"(?!-){_REF_COMPONENT}(?:/{_REF_COMPONENT})*"
_SUFFIX = r"(?:~\d{0,6}|\^\d{0,2})*"
_REV = rf"{_REF}{_SUFFIX}"
REVISION = re.compile(rf"{_REV}")
RANGE = re.compile(rf"(?:{_REV})?\.\.\.?(?:{_REV})?")
MAX_REVISION = 256
FORMAT_SIGNATURE = re.compile(r"%G")


def _refused(arg: str, field: str) -> None:
    """Refuse a deny-listed option or a ``%G`` signature placeholder anywhere in ``arg``."""
    name = arg.split("=", 1)[0]
    reason = REFUSED.get(name)
    if reason is None and len(arg) > 2 and arg[0] == "-" and arg[1] != "-":
        reason = REFUSED.get(arg[:2])  # -Cdir, -Ofile, -cfoo=bar
    if reason is None and name.startswith("--") and len(name) > 3:
        # git accepts unambiguous prefixes of long options: --output-d..., --ext, --no-ind
        for refused, why in REFUSED.items():
            if refused.startswith("--") and refused.startswith(name):
                reason = why
                break
    if reason is None and FORMAT_SIGNATURE.search(arg):
        reason = "%G placeholders run gpg"
    if reason is not None:
        raise SCodeError(
            ErrorKind.GIT_ARGUMENT_REJECTED,
            f"the argument {arg!r} is refused: it {reason}",
            argument=arg,
            field=field,
        )


def revision(value: str, field: str, *, allow_range: bool = False) -> str:
    """A revision (``allow_range``: or a range) in the strict syntax, else refused."""
    _refused(value, field)
    ok = len(value) <= MAX_REVISION and (
        REVISION.fullmatch(value) is not None
        or (allow_range and RANGE.fullmatch(value) is not None and value not in ("..", "..."))
    )
    if not ok or "@{" in value or "//" in value:
        what = "a revision or range" if allow_range else "a revision"
        raise SCodeError(
            ErrorKind.GIT_ARGUMENT_REJECTED,
            f"{value!r} is not {what} s-code accepts: a branch, tag or commit name "
            "with optional ~N / ^N"
            + (", or A..B / A...B" if allow_range else "")
            + "; it may not start with '-' or contain spaces, ':', '@{' or '//'",
            argument=value,
            field=field,
        )
    return value


_INT = r"\d{1,4}"
ALLOWED: dict[str, tuple[str, ...]] = {
    "diff": (
        "-w",
        "--ignore-all-space",
        "-b",
        "--ignore-space-change",
        "--ignore-space-at-eol",
        "--ignore-blank-lines",
        "--ignore-cr-at-eol",
        "--minimal",
        "--patience",
        "--histogram",
        "--no-renames",
        "-M",
        "--find-renames",
        rf"--find-renames={_INT}%?",
        rf"-M{_INT}%?",
        "--find-copies",
        "-W",
        "--function-context",
        "--word-diff",
        "--word-diff=(plain|porcelain|none)",
        r"--diff-filter=[ACDMRTUXBacdmrtuxb]{1,10}",
        "-R",
        "--full-index",
        "--text",
        "-a",
    ),
    "log": (
        "--first-parent",
        "--no-merges",
        "--merges",
        "--reverse",
        "--topo-order",
        "--date-order",
        "--author-date-order",
        "--all-match",
        "-i",
        "--regexp-ignore-case",
        "--fixed-strings",
        "-F",
        "--follow",
        "--full-history",
        "--simplify-merges",
        "--ancestry-path",
        "--no-renames",
        "--find-renames",
    ),
    "blame": ("-w", "-M", rf"-M{_INT}", "--first-parent", "--minimal"),
}
ALLOWED["show"] = tuple(o for o in ALLOWED["diff"] if o != "-R")
_ALLOWED_RE = {
    tool: re.compile("|".join(f"(?:{p})" for p in pats)) for tool, pats in ALLOWED.items()
}


def options(values: Iterable[str], tool: str, field: str = "options") -> list[str]:
    """Agent-supplied options for ``tool``: each one refused, or allowed by the allow-list."""
    out = []
    for i, value in enumerate(values):
        f = f"{field}.{i}"
        if _ALLOWED_RE[tool].fullmatch(value) is None:
            _refused(value, f)
            raise SCodeError(
                ErrorKind.GIT_ARGUMENT_REJECTED,
                f"the option {value!r} is not allowed for {tool}; allowed: "
                + ", ".join(ALLOWED[tool]),
                argument=value,
                field=f,
            )
        out.append(value)
    return out


_TEXT_REFUSED = re.compile(r"[\x00-\x1f\x7f]")


def text_value(value: str, field: str, *, max_length: int = 200) -> str:
    """A free-text value passed as ``--opt=value`` (one argv element): no controls, bounded."""
    _refused(value, field)
    if not value or len(value) > max_length or _TEXT_REFUSED.search(value):
        raise SCodeError(
            ErrorKind.GIT_ARGUMENT_REJECTED,
            f"{field} must be 1-{max_length} printable characters",
            argument=value[:80],
            field=field,
        )
    return value


DATE = re.compile(r"(?!-)[0-9A-Za-z:.,+ -]{1,64}")


def date_value(value: str, field: str) -> str:
    if DATE.fullmatch(value) is None:
        raise SCodeError(
            ErrorKind.GIT_ARGUMENT_REJECTED,
            f"{field} must be a date like '2024-01-31' or '2 weeks ago'",
            argument=value[:80],
            field=field,
        )
    return value

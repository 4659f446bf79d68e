"""The fixed ``--format`` for commits, and its parser.

Fields are separated by NUL and, with ``-z``, commits too: git stops a message at a NUL byte and
no name can hold one, so no commit text can forge a field or a commit (a separator made of
printable or control characters could be). No signature (``%G``) or notes placeholder is used:
the format runs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%s", "%b")
FORMAT = "--format=" + "%x00".join(FIELDS)
"""Use with ``-z``: every commit is exactly ``len(FIELDS)`` NUL-terminated fields."""


@dataclass(frozen=True)
class Commit:
    commit: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_email: str
    committer_date: str
    subject: str
    body: str


def _commit(f: list[str]) -> Commit:
    return Commit(
        commit=f[0],
        parents=tuple(f[1].split()),
        author_name=f[2],
        author_email=f[3],
        author_date=f[4],
        committer_name=f[5],
        committer_email=f[6],
        committer_date=f[7],
        subject=f[8],
        body=f[9].rstrip("\n"),
    )


def parse_log(raw: bytes) -> list[Commit]:
    """``git log -z FORMAT`` output → the commits whose every field arrived (cut output loses
    only its last, partial commit)."""
    fields = raw.decode("utf-8", "replace").split("\0")
    n = len(FIELDS)
    return [_commit(fields[i * n : (i + 1) * n]) for i in range((len(fields) - 1) // n)]


def split_show(raw: bytes) -> tuple[Commit, bytes]:
    """``git show -z FORMAT`` output → the commit and the patch that follows it."""
    fields = raw.split(b"\0", len(FIELDS))
    if len(fields) <= len(FIELDS):
        raise ValueError("unexpected git show output")
    commit = _commit([f.decode("utf-8", "replace") for f in fields[: len(FIELDS)]])
    return commit, fields[len(FIELDS)].lstrip(b"\n")

"""One batch of the patch differential: s-code, the reference and Codex on the same cases.

s-code's side is the request layer and the pure engine (``plans_of`` then each plan's
``compute``, as the write phase calls them); the reference is tests/oracle/reference.py; Codex
runs in a directory per case: the cases inside the strict grammar chained in few invocations
(see run_codex), the others alone, in a pool of processes.

Each case gets a label (its outcome) or a problem (an unexplained difference):
- s-code must give the reference's outcome: the same bytes, or a refusal for the same reason;
- when the reference applies, Codex must write exactly those bytes and nothing else;
- when it refuses, Codex may apply (it matches fuzzily, picks the first of several matches,
  reads more syntax) or refuse: either is counted, neither is a problem.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from s_code.edits.request import ApplyPatchArgs, plans_of
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import parse_params
from tests.oracle import codex_oracle as codex
from tests.oracle.cases import Case
from tests.oracle.reference import Applied, Outcome, Refused, reference

HEADER = re.compile(r"^\*\*\* (Add|Update) File: (.*)$", re.MULTILINE)
SYNTAX_OPS = {"delete", "move", "end_of_file"}


def revisions(case: Case) -> dict[str, str | None]:
    """The revisions map a client would send: null for added paths, the file's for the others."""
    out: dict[str, str | None] = {}
    for op, path in HEADER.findall(case.patch):
        text = case.files.get(path)
        out[path] = None if op == "Add" or text is None else rev(text)
    return out


def rev(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def refusal(err: SCodeError) -> Refused:
    """s-code's error as the reference states a refusal."""
    kind = err.kind
    if kind is ErrorKind.UNSUPPORTED_PATCH_OP:
        return Refused("syntax" if err.data.get("op") in SYNTAX_OPS else "target")
    if kind is ErrorKind.MATCH_AMBIGUOUS:
        return Refused("ambiguous", tuple(err.data["lines"]))
    reason = {
        ErrorKind.PATCH_SYNTAX: "syntax",
        ErrorKind.MATCH_NOT_FOUND: "not_found",
    }.get(kind, f"other: {kind.value}: {err.message}")
    return Refused(reason)


def scode(case: Case) -> Outcome:
    """s-code's outcome through the request layer and the pure engine."""
    try:
        args = parse_params(ApplyPatchArgs, {"patch": case.patch, "revisions": revisions(case)})
        return Applied({p.path: p.compute(case.files.get(p.path)) for p in plans_of(args)})
    except SCodeError as err:
        return refusal(err)


def after(case: Case, outcome: Outcome) -> dict[str, bytes]:
    """The workspace after the outcome: the files as they were, overwritten by those written."""
    written = outcome.files if isinstance(outcome, Applied) else {}
    return {path: text.encode() for path, text in {**case.files, **written}.items()}


def files_below(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def write_files(root: Path, files: dict[str, str]) -> None:
    """Make ``root`` (kept, if it exists) hold exactly ``files``."""
    root.mkdir(parents=True, exist_ok=True)
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())


@dataclass(frozen=True)
class CodexResult:
    applied: bool
    files: dict[str, bytes]  # the case's directory afterwards
    output: str


def combined(patches: Iterable[tuple[str, str]]) -> str:
    """One patch doing each (directory, patch) in its directory; each is inside the subset."""
    body: list[str] = []
    for folder, patch in patches:
        rows = patch.split("\n")
        rows = rows[1 : -2 if rows[-1] == "" else -1]
        body += [HEADER.sub(lambda m, f=folder: f"*** {m[1]} File: {f}/{m[2]}", r) for r in rows]
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def run_codex(
    exe: Path, root: Path, batch: list[Case], chain: list[int], pool: ThreadPoolExecutor
) -> list[CodexResult]:
    """Codex on every case of the batch, each in ``root/c<index>``.

    The ``chain`` cases (inside the strict grammar, which Codex parses alike alone or together)
    run one after another in one invocation: Codex applies sections in order and stops at the
    first that fails, naming its file; the cases before it are applied, the one named is not,
    and the chain goes on after it. The other cases run alone, in parallel."""
    for i, case in enumerate(batch):
        write_files(root / f"c{i}", case.files)
    results: dict[int, CodexResult] = {}
    named = re.compile(re.escape(str(root.resolve())) + r"/c(\d+)/")
    rest = list(chain)
    while rest:
        run = codex.apply(exe, root, combined((f"c{i}", batch[i].patch) for i in rest))
        found = named.search(run.output)
        failed = int(found[1]) if found and not run.applied else None
        done = rest if run.applied else rest[: rest.index(failed)] if failed in rest else []
        for i in done:
            results[i] = CodexResult(True, files_below(root / f"c{i}"), "(chained)")
        if run.applied or failed not in rest:
            break
        results[failed] = CodexResult(False, files_below(root / f"c{failed}"), run.output)
        rest = rest[rest.index(failed) + 1 :]
    alone = [i for i in range(len(batch)) if i not in results]
    for i in alone:  # their files as they were, should an unexplained failure have run them
        write_files(root / f"c{i}", batch[i].files)

    def one(i: int) -> CodexResult:
        run = codex.apply(exe, root / f"c{i}", batch[i].patch)
        return CodexResult(run.applied, files_below(root / f"c{i}"), run.output)

    for i, result in zip(alone, pool.map(one, alone), strict=True):
        results[i] = result
    shutil.rmtree(root)
    return [results[i] for i in range(len(batch))]


@dataclass(frozen=True)
class Verdict:
    label: str  # the outcome, for the counts
    problem: str | None  # an unexplained difference, described


def verdict(case: Case, mine: Outcome, ref: Outcome, theirs: CodexResult) -> Verdict:
    def problem(what: str) -> Verdict:
        text = (
            f"{what}\n  files:     {case.files!r}\n  patch:     {case.patch!r}\n"
            f"  s-code:    {mine!r}\n  reference: {ref!r}\n"
            f"  Codex:     applied={theirs.applied} {theirs.files!r}\n"
            f"             {theirs.output.strip()[:300]!r}"
        )
        return Verdict("unexplained", text)

    if mine != ref:
        return problem("s-code differs from the reference")
    if isinstance(ref, Applied):
        if not theirs.applied:
            return problem("Codex refused a patch inside the subset")
        if theirs.files != after(case, ref):
            return problem("Codex wrote other bytes")
        return Verdict("identical success", None)
    assert isinstance(ref, Refused)
    if theirs.applied:
        return Verdict(f"s-code refused ({ref.reason}), reference agrees, Codex applied", None)
    return Verdict(f"both refused ({ref.reason})", None)


def judge(
    exe: Path,
    root: Path,
    batch: list[Case],
    pool: ThreadPoolExecutor,
    mine: Callable[[Case], Outcome] = scode,
) -> list[Verdict]:
    ours = [mine(case) for case in batch]
    refs = [reference(case.files, case.patch) for case in batch]
    chain = [
        i for i, ref in enumerate(refs) if not (isinstance(ref, Refused) and ref.reason == "syntax")
    ]
    theirs = run_codex(exe, root, batch, chain, pool)
    return [verdict(*four) for four in zip(batch, ours, refs, theirs, strict=True)]

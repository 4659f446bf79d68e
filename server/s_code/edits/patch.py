"""The strict ``*** Begin Patch`` subset: Add File and Update File with bare ``@@`` hunks.

Grammar (one line each; ``LF`` line breaks)::

    *** Begin Patch
    ( *** Add File: <path>        then  ( "+" <text> )*
    | *** Update File: <path>     then  ( "@@"  then  ( " " | "-" | "+" ) <text> )+ )+
    *** End Patch

Each hunk's old lines (context and ``-`` lines) must occur exactly once, as complete lines, in the
part of the file after the previous hunk; hunks apply in order. Inside this subset the result is
what OpenAI Codex's ``apply_patch`` produces. Everything else is refused: ``patch_syntax`` with the
patch line number and the rule broken, or ``unsupported_patch_op`` (delete, move, end-of-file
markers, and target files the subset cannot express: no trailing newline, CRLF endings, a CR
that is not part of a CR LF). docs/patch-format.md states the rule and how it is tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s_code.protocol.errors import ErrorKind, SCodeError

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, UPDATE = "*** Add File: ", "*** Update File: "
UNSUPPORTED = {
    "*** Delete File:": "delete",
    "*** Move to:": "move",
    "*** End of File": "end_of_file",
}


@dataclass
class Hunk:
    line: int  # patch line number of the hunk's @@
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    anchored: bool = False  # has at least one context or removed line


@dataclass
class PatchFile:
    path: str
    op: str  # "add" or "update"
    line: int  # patch line number of the file header
    added: list[str] = field(default_factory=list)  # add: the file's lines
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def content(self) -> str:
        return "".join(line + "\n" for line in self.added)


def syntax(line: int, rule: str, message: str) -> SCodeError:
    return SCodeError(
        ErrorKind.PATCH_SYNTAX,
        f"patch line {line}: {message}",
        line=line,
        rule=rule,
        field="patch",
    )


def _unsupported(line: int, op: str, text: str) -> SCodeError:
    hint = {
        "delete": "s-code does not delete or move files",
        "move": "s-code does not delete or move files",
        "end_of_file": "hunks match complete lines anywhere; drop the marker",
    }[op]
    return SCodeError(
        ErrorKind.UNSUPPORTED_PATCH_OP,
        f"patch line {line}: {text!r} is outside the supported subset (Add File, and Update "
        f"File with bare @@ hunks): {hint}",
        line=line,
        op=op,
        field="patch",
    )


def _check_marker(text: str, line: int) -> None:
    for prefix, op in UNSUPPORTED.items():
        if text.startswith(prefix):
            raise _unsupported(line, op, text)


def parse(patch: str) -> list[PatchFile]:
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # one final newline after *** End Patch is allowed
    for i, text in enumerate(lines, start=1):
        if text.endswith("\r"):
            raise syntax(i, "line_endings", "CR LF line breaks; the patch text uses LF only")
    if not lines or lines[0] != BEGIN:
        raise syntax(1, "begin", f"the first line must be {BEGIN!r}")
    if len(lines) < 2 or lines[-1] != END:
        raise syntax(len(lines), "end", f"the last line must be {END!r}")
    body = lines[1:-1]
    files: list[PatchFile] = []
    seen: dict[str, int] = {}
    current: PatchFile | None = None
    hunk: Hunk | None = None
    for offset, text in enumerate(body):
        n = offset + 2
        if text.startswith("***"):
            _check_marker(text, n)
            if text.startswith(ADD) or text.startswith(UPDATE):
                _close(current, hunk)
                op = "add" if text.startswith(ADD) else "update"
                path = text[len(ADD if op == "add" else UPDATE) :]
                if not path.strip() or path != path.strip():
                    raise syntax(n, "path", "the file path is empty or padded with spaces")
                if path in seen:
                    raise syntax(
                        n, "duplicate_path", f"{path!r} already has a section at line {seen[path]}"
                    )
                seen[path] = n
                current, hunk = PatchFile(path, op, n), None
                files.append(current)
                continue
            raise syntax(n, "header", f"unknown header {text!r}")
        if current is None:
            raise syntax(n, "header", "expected '*** Add File: ' or '*** Update File: '")
        if current.op == "add":
            if not text.startswith("+"):
                raise syntax(n, "add_line", "every line of an added file starts with '+'")
            current.added.append(text[1:])
            continue
        if text.startswith("@@"):
            if text != "@@":
                raise syntax(
                    n,
                    "hunk_header",
                    f"{text!r}: only a bare '@@' starts a hunk (no line numbers or names)",
                )
            _finish_hunk(hunk)
            hunk = Hunk(n)
            current.hunks.append(hunk)
            continue
        if hunk is None:
            raise syntax(n, "missing_hunk_header", "an update section starts with a bare '@@'")
        prefix, rest = text[:1], text[1:]
        if prefix == " ":
            hunk.old.append(rest)
            hunk.new.append(rest)
            hunk.anchored = True
        elif prefix == "-":
            hunk.old.append(rest)
            hunk.anchored = True
        elif prefix == "+":
            hunk.new.append(rest)
        else:
            raise syntax(
                n,
                "line_prefix",
                "every hunk line starts with ' ', '-' or '+' (a blank context line is a "
                "single space)",
            )
    _close(current, hunk)
    if not files:
        raise syntax(1, "empty", "the patch changes no file")
    return files


def _finish_hunk(hunk: Hunk | None) -> None:
    if hunk is None:
        return
    if not (hunk.old or hunk.new):
        raise syntax(hunk.line, "empty_hunk", "the hunk has no lines")
    if not hunk.anchored:
        raise syntax(
            hunk.line, "unanchored_hunk", "the hunk has no context or removed line to place it"
        )


def _close(current: PatchFile | None, hunk: Hunk | None) -> None:
    """Finish the section being parsed: its last hunk is valid and it has at least one."""
    if current is None or current.op != "update":
        return
    _finish_hunk(hunk)
    if not current.hunks:
        raise syntax(
            current.line, "missing_hunk_header", f"the update of {current.path!r} has no hunk"
        )


def _find_all(lines: list[str], old: list[str], start: int) -> list[int]:
    hits = []
    first, size = old[0], len(old)
    for i in range(start, len(lines) - size + 1):
        if lines[i] == first and lines[i : i + size] == old:
            hits.append(i)
    return hits


def _unexpressible(original: str, path: str) -> SCodeError | None:
    """Why the subset cannot express an update of ``original``, if it cannot: CR LF endings, a
    lone CR (Codex's apply_patch ends a line there, but not a patch line, and writes CR endings
    after one), or no newline at the end."""
    if "\r\n" in original:
        op, what = "crlf_target", "has CR LF line endings"
    elif "\r" in original:
        op, what = "lone_cr_target", "has a CR that is not part of a CR LF line break"
    elif original and not original.endswith("\n"):
        op, what = "no_trailing_newline", "does not end with a newline"
    else:
        return None
    return SCodeError(
        ErrorKind.UNSUPPORTED_PATCH_OP,
        f"{path!r} {what}, which the patch form cannot express; send the whole new text with "
        "the files form's 'content' instead",
        path=path,
        op=op,
        field="patch",
    )


def apply_update(original: str, pf: PatchFile) -> str:
    """Apply an update section to the original text (LF, ending with a newline)."""
    refusal = _unexpressible(original, pf.path)
    if refusal is not None:
        raise refusal
    lines = original.split("\n")[:-1] if original else []
    pos = 0
    delta = 0  # how many lines earlier hunks added (for line numbers of the original file)
    for hunk in pf.hunks:
        hits = _find_all(lines, hunk.old, pos)
        if not hits:
            raise SCodeError(
                ErrorKind.MATCH_NOT_FOUND,
                f"patch line {hunk.line}: the hunk's context and removed lines do not occur "
                f"exactly in {pf.path!r}" + (" after the previous hunk" if pos else ""),
                path=pf.path,
                line=hunk.line,
                field="patch",
            )
        if len(hits) > 1:
            numbers = [h - delta + 1 for h in hits[:50]]
            raise SCodeError(
                ErrorKind.MATCH_AMBIGUOUS,
                f"patch line {hunk.line}: the hunk matches {pf.path!r} at lines "
                f"{', '.join(map(str, numbers))}; add context lines to make it unique",
                path=pf.path,
                line=hunk.line,
                lines=numbers,
                field="patch",
            )
        at = hits[0]
        lines[at : at + len(hunk.old)] = hunk.new
        pos = at + len(hunk.new)
        delta += len(hunk.new) - len(hunk.old)
    # Every line ends with a newline, the hunks' new lines as the lines they did not touch:
    # nothing outside the hunks changes (blank lines at the end included), as Codex writes it.
    return "".join(line + "\n" for line in lines)

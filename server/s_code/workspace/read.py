"""read_file: numbered content, SHA-256 and revision of a workspace file or its open buffer."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.workspace.documents import Overlay, revision_of, sha256_hex
from s_code.workspace.folders import Folders

MAX_FILE_BYTES = 16 * 1024 * 1024
NUMBER_WIDTH = 6  # as ``cat -n``


@dataclass(frozen=True)
class FileText:
    path: str
    text: str
    sha256: str
    source: str  # "buffer" or "disk"

    @property
    def revision(self) -> str:
        return revision_of(self.sha256)


def decode_text(data: bytes, path: str) -> str:
    if b"\x00" in data:
        raise SCodeError(
            ErrorKind.UNSUPPORTED_ENCODING, f"{path!r} contains NUL bytes (binary file?)", path=path
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SCodeError(
            ErrorKind.UNSUPPORTED_ENCODING,
            f"{path!r} is not valid UTF-8 (byte {exc.start})",
            path=path,
            offset=exc.start,
        ) from None


@dataclass(frozen=True)
class Raw:
    """A file's bytes as found (decoding and hashing come after, maybe in a worker thread)."""

    path: str
    data: bytes
    buffer: str | None  # the editor buffer's text when the document is open

    def text(self) -> FileText:
        if self.buffer is not None:
            decode_text(self.data, self.path)
            return FileText(self.path, self.buffer, sha256_hex(self.data), "buffer")
        return FileText(self.path, decode_text(self.data, self.path), sha256_hex(self.data), "disk")


def load_text(folders: Folders, overlay: Overlay, path: str, field: str = "path") -> FileText:
    """The current text of ``path``: the open editor buffer if there is one, else the disk bytes.

    The path is always resolved through its WorkspaceRoot first, so a buffer open on a path that
    goes through a symlink is refused like the disk file would be.
    """
    return load_raw(folders, overlay, path, field).text()


def load_raw(folders: Folders, overlay: Overlay, path: str, field: str = "path") -> Raw:
    loc = folders.locate(path, field)
    disk: bytes | None = None
    try:
        disk = loc.root.read_parts(loc.parts, MAX_FILE_BYTES, field=field)
    except SCodeError as exc:
        if exc.kind is not ErrorKind.NOT_FOUND:
            raise
        missing = exc
    buffer = overlay(loc.abs_paths())
    if buffer is not None:
        data = buffer.encode("utf-8", "surrogatepass")
        if len(data) > MAX_FILE_BYTES:
            raise SCodeError(
                ErrorKind.LIMIT_EXCEEDED,
                f"{loc.display!r} buffer is too large",
                limit="file_size",
                max=MAX_FILE_BYTES,
                path=loc.display,
            )
        return Raw(loc.display, data, buffer)
    if disk is None:
        raise missing
    return Raw(loc.display, disk, None)


def split_lines(text: str) -> list[str]:
    """Lines as editors count them: split on LF only; a final newline does not open a new line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def number_lines(lines: list[str], first: int, strip_cr: bool = True) -> str:
    if not lines:
        return ""
    last = first + len(lines) - 1
    width = max(NUMBER_WIDTH, len(str(last)))
    if strip_cr:
        lines = [line.removesuffix("\r") for line in lines]
    return "\n".join(map(operator.add, _prefixes(width, first, last), lines)) + "\n"


_PREFIXES: list[str] = []


def _prefixes(width: int, first: int, last: int) -> list[str]:
    """``"     1\t"``-style prefixes, cached for the common width."""
    if width != NUMBER_WIDTH:
        return [f"{i:>{width}}\t" for i in range(first, last + 1)]
    if len(_PREFIXES) < last:
        _PREFIXES.extend(f"{i:>{width}}\t" for i in range(len(_PREFIXES) + 1, last + 1))
    return _PREFIXES[first - 1 : last]


@dataclass(frozen=True)
class ReadResult:
    file: FileText
    numbered_content: str
    line_count: int
    start_line: int
    end_line: int


def read_file(
    folders: Folders,
    overlay: Overlay,
    path: str,
    start_line: int | None,
    end_line: int | None,
    raw: Raw | None = None,
) -> ReadResult:
    if start_line is not None and start_line < 1:
        raise invalid_params("start_line must be 1 or more", "start_line")
    if end_line is not None and end_line < 1:
        raise invalid_params("end_line must be 1 or more", "end_line")
    if start_line is not None and end_line is not None and end_line < start_line:
        raise invalid_params("end_line is before start_line", "end_line")
    ft = (raw or load_raw(folders, overlay, path)).text()
    lines = split_lines(ft.text)
    count = len(lines)
    first = start_line or 1
    if count and first > count:
        raise invalid_params(f"start_line {first} is past the end ({count} lines)", "start_line")
    last = min(end_line or count, count)
    shown = lines[first - 1 : last] if count else []
    return ReadResult(
        ft, number_lines(shown, first, "\r" in ft.text), count, first if count else 0, last
    )

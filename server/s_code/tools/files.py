"""The read-only workspace tools: read_file, list_files, search_text."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef
from s_code.workspace.listing import list_files
from s_code.workspace.read import load_raw, read_file
from s_code.workspace.search import search_text

# -- read_file -------------------------------------------------------------------------------------


class ReadFileArgs(Args):
    path: str = Field(description="Workspace-relative POSIX path of the file.")
    start_line: int | None = Field(None, description="First line to show (1-based, inclusive).")
    end_line: int | None = Field(None, description="Last line to show (1-based, inclusive).")


class ReadFileResult(Result):
    path: str
    numbered_content: str = Field(description="`cat -n` style: right-aligned number, tab, text.")
    sha256: str = Field(description="SHA-256 of the exact bytes of the whole file (or buffer).")
    revision: str = Field(description="First 16 hex characters of sha256; edits quote it back.")
    line_count: int = Field(description="Lines in the whole file.")
    start_line: int
    end_line: int
    source: Literal["buffer", "disk"] = Field(
        description="`buffer`: the editor's open, possibly unsaved text; `disk`: the file."
    )

    def to_wire(self) -> dict[str, Any]:
        # no aliases and no optional fields: the plain field values are the wire form
        return dict(self.__dict__)


SMALL_FILE = 256 * 1024


async def _read_file(session: Session, args: ReadFileArgs) -> ReadFileResult:
    raw = load_raw(session.folders, session.overlay, args.path)
    read = (session.folders, session.overlay, args.path, args.start_line, args.end_line, raw)
    # Decoding, hashing and numbering a small file cost less than a thread hop; a big one is
    # done in a worker thread so the event loop stays free.
    if len(raw.data) <= SMALL_FILE:
        r = read_file(*read)
    else:
        r = await asyncio.to_thread(read_file, *read)
    # Every value comes from our own read: constructed without re-validation, on the hot path.
    return ReadFileResult.model_construct(
        path=r.file.path,
        numbered_content=r.numbered_content,
        sha256=r.file.sha256,
        revision=r.file.revision,
        line_count=r.line_count,
        start_line=r.start_line,
        end_line=r.end_line,
        source=r.file.source,  # type: ignore[arg-type]
    )


# -- list_files ------------------------------------------------------------------------------------


class ListFilesArgs(Args):
    path: str = Field(".", description="Directory to list, workspace-relative.")
    recursive: bool = Field(True, description="Descend into subdirectories.")
    include_ignored: bool = Field(False, description="Also list what .gitignore excludes.")
    max_results: int = Field(500, ge=1, le=10_000, description="Entries per page.")
    cursor: str | None = Field(None, description="next_cursor of the previous page.")


class ListedEntry(Result):
    path: str
    type: Literal["file", "dir", "symlink", "other"]
    size: int | None = None


class ListFilesResult(Result):
    entries: list[ListedEntry]
    truncated: bool = Field(description="More entries follow; pass next_cursor to continue.")
    next_cursor: str | None = None


async def _list_files(session: Session, args: ListFilesArgs) -> ListFilesResult:
    listing = await asyncio.to_thread(
        list_files,
        session.folders,
        args.path,
        recursive=args.recursive,
        include_ignored=args.include_ignored,
        max_results=args.max_results,
        cursor=args.cursor,
    )
    return ListFilesResult(
        entries=[ListedEntry(path=e.path, type=e.kind, size=e.size) for e in listing.entries],
        truncated=listing.truncated,
        next_cursor=listing.next_cursor,
    )


# -- search_text -----------------------------------------------------------------------------------


class SearchTextArgs(Args):
    pattern: str = Field(min_length=1, description="Regular expression (Rust regex syntax).")
    path: str = Field(".", description="Directory to search, workspace-relative.")
    globs: list[str] = Field(
        default_factory=list,
        max_length=32,
        description="ripgrep globs to include (`*.py`) or exclude (`!tests/**`).",
    )
    fixed_strings: bool = Field(False, description="Treat pattern as a literal string.")
    ignore_case: bool = False
    include_ignored: bool = Field(False, description="Also search what .gitignore excludes.")
    max_results: int = Field(100, ge=1, le=2_000)


class TextMatch(Result):
    path: str
    line_number: int
    text: str


class SearchTextResult(Result):
    matches: list[TextMatch]
    truncated: bool = Field(description="The bound was reached; narrow the search for more.")


async def _search_text(session: Session, args: SearchTextArgs) -> SearchTextResult:
    found = await search_text(
        session.folders,
        args.pattern,
        args.path,
        fixed_strings=args.fixed_strings,
        ignore_case=args.ignore_case,
        globs=list(args.globs),
        include_ignored=args.include_ignored,
        max_results=args.max_results,
        redact=session.redactor.redact_known,
    )
    return SearchTextResult(
        matches=[
            TextMatch(path=m.path, line_number=m.line_number, text=m.text) for m in found.matches
        ],
        truncated=found.truncated,
    )


TOOLS = (
    ToolDef(
        name="read_file",
        title="Read a file",
        idempotent=True,
        args=ReadFileArgs,
        result=ReadFileResult,
        handler=_read_file,
        read_only=True,
        description=(
            "Read a workspace file as numbered lines, with its sha256 and revision. Returns the "
            "editor's unsaved text when the file is open. Quote the revision when editing."
        ),
    ),
    ToolDef(
        name="list_files",
        title="List workspace files",
        idempotent=True,
        args=ListFilesArgs,
        result=ListFilesResult,
        handler=_list_files,
        read_only=True,
        description=(
            "List files and directories under a workspace directory, honouring .gitignore and "
            "never following symlinks. Paged: pass next_cursor back to continue."
        ),
    ),
    ToolDef(
        name="search_text",
        title="Search the workspace",
        idempotent=True,
        args=SearchTextArgs,
        result=SearchTextResult,
        handler=_search_text,
        read_only=True,
        description=(
            "Search workspace files for a regular expression (ripgrep), honouring .gitignore. "
            "Returns matching lines with paths and line numbers, bounded by max_results."
        ),
    ),
)

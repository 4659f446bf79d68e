"""apply_patch arguments, and their normalization into one plan per file.

The three forms (files envelope, strict patch, legacy single file) share one flat pydantic model,
so unknown fields anywhere are refused with their field path; :func:`plans_of` then checks which
form was used and turns it into :class:`FilePlan` objects, before anything touches the disk.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from s_code.edits import patch as patch_form
from s_code.edits.text import (
    LineColumns,
    LineEdit,
    TextEdit,
    apply_line_edits,
    apply_plain_line_edits,
    apply_text_edits,
    line_edits_of,
)
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.incoming import current
from s_code.protocol.models import Args, parse_params

MAX_PATHS = 32
MAX_EDITS_PER_FILE = 100
MAX_BYTES = 16 * 1024 * 1024
_REVISION = re.compile(r"^[0-9a-f]{16}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class LineEditArgs(Args):
    start_line: int = Field(description="First line replaced (1-based, on the original).")
    end_line: int = Field(description="Last line replaced, inclusive; start_line - 1 inserts.")
    new_text: str = Field(description="Replacement lines; '' deletes the range.")


class TextEditArgs(Args):
    old_text: str = Field(min_length=1, description="Exact text that occurs once in the file.")
    new_text: str


# Edits are checked by plans_of (mostly all at once), not one by one by pydantic, which would
# copy every one of up to 3,200 dicts (0.4 ms a batch); the schema still describes them.
EditItem = Annotated[Any, WithJsonSchema({"type": "object", "additionalProperties": True})]
_EDIT_SCHEMA = {
    "type": "array",
    "maxItems": MAX_EDITS_PER_FILE,
    "items": {"anyOf": [LineEditArgs.model_json_schema(), TextEditArgs.model_json_schema()]},
}


class FileEntry(Args):
    path: str = Field(description="Workspace-relative path.")
    expected_revision: str | None = Field(
        description="The revision read_file returned; null for a file that must not exist yet."
    )
    edits: list[EditItem] | None = Field(
        None,
        json_schema_extra=_EDIT_SCHEMA,  # type: ignore[arg-type]
        description="Line edits or exact text edits (not both).",
    )
    content: str | None = Field(None, description="The whole new text (creates or replaces).")


class ApplyPatchArgs(Args):
    files: list[FileEntry] | None = Field(
        None, description=f"Form 1: one entry per file (at most {MAX_PATHS})."
    )
    patch: str | None = Field(
        None, description="Form 2: '*** Begin Patch' … '*** End Patch' (Add/Update, bare @@)."
    )
    revisions: dict[str, str | None] | None = Field(
        None, description="Form 2: path → revision (null for files the patch adds)."
    )
    path: str | None = Field(None, description="Form 3 (legacy, one file): the path.")
    expected_revision: str | None = Field(None, description="Form 3: the file's revision.")
    expected_sha256: str | None = Field(None, description="Form 3: or its full SHA-256.")
    edits: list[EditItem] | None = Field(
        None,
        json_schema_extra=_EDIT_SCHEMA,  # type: ignore[arg-type]
        description="Form 3: line or text edits.",
    )
    content: str | None = Field(None, description="Form 3: or the whole new text.")
    turn_id: str | None = Field(None, description="Attach to this begun turn (default: current).")


@dataclass
class FilePlan:
    """What to do to one file; ``compute`` turns its current text into the new text."""

    path: str
    field: str  # where in the request this file came from: "files.2", "patch", "path"
    expected: str | None  # a 16-hex revision or a 64-hex sha256; None: must not exist
    kind: str  # "lines" | "texts" | "content" | "patch_add" | "patch_update"
    line_columns: LineColumns = ((), (), ())
    text_edits: list[TextEdit] = dc_field(default_factory=list)
    content: str | None = None
    patch_file: patch_form.PatchFile | None = None

    @property
    def line_edits(self) -> list[LineEdit]:
        return line_edits_of(self.line_columns)

    @property
    def edit_count(self) -> int:
        if self.patch_file is not None:
            return len(self.patch_file.hunks)
        return len(self.line_columns[0]) + len(self.text_edits)

    def compute(self, original: str | None) -> str:
        if self.kind in ("content", "patch_add"):
            assert self.content is not None
            return self.content
        if original is None:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"{self.path!r} does not exist; create it with content",
                path=self.path,
            )
        prefix = f"{self.field}." if self.field not in ("", "path") else ""
        if self.kind == "lines":
            plain = apply_plain_line_edits(original, self.line_columns)
            if plain is not None:
                return plain
            return apply_line_edits(original, self.line_edits, prefix)
        if self.kind == "texts":
            return apply_text_edits(original, self.text_edits, prefix)
        assert self.patch_file is not None
        return patch_form.apply_update(original, self.patch_file)


def _expected(value: str | None, field_path: str) -> str | None:
    if value is not None and not (_REVISION.match(value) or _SHA256.match(value)):
        raise invalid_params(
            "a revision is 16 lowercase hex characters (a sha256 is 64)", field_path
        )
    return value


def _edits(raw: list[Any], base: str) -> tuple[str, LineColumns, list[TextEdit]]:
    pre = f"{base}." if base else ""
    if len(raw) > MAX_EDITS_PER_FILE:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            f"{base or 'edits'}: more than {MAX_EDITS_PER_FILE} edits",
            limit="edits_per_file",
            max=MAX_EDITS_PER_FILE,
            field=f"{pre}edits",
        )
    plain = _plain_line_columns(raw)
    if plain is not None:
        return "lines", plain, []
    lines: list[tuple[int, int, str]] = []
    texts: list[TextEdit] = []
    for i, item in enumerate(raw):
        where = f"{pre}edits.{i}"
        if not isinstance(item, dict):
            raise invalid_params(
                f"an edit is an object, not {type(item).__name__}: "
                "{start_line, end_line, new_text} or {old_text, new_text}",
                where,
            )
        if _plain(item, _TEXT_KEYS) and item["old_text"]:
            texts.append(TextEdit(item["old_text"], item["new_text"], i))
        elif "old_text" in item:
            t = _prefixed(TextEditArgs, item, where)
            texts.append(TextEdit(t.old_text, t.new_text, i))
        elif "start_line" in item or "end_line" in item:
            e = _prefixed(LineEditArgs, item, where)
            lines.append((e.start_line, e.end_line, e.new_text))
        else:
            raise invalid_params(
                "an edit is {start_line, end_line, new_text} or {old_text, new_text}", where
            )
    if lines and texts:
        raise SCodeError(
            ErrorKind.MIXED_EDIT_KINDS,
            f"{base or 'edits'}: line edits and text edits cannot be mixed in one file",
            field=f"{pre}edits",
        )
    if not raw:
        raise invalid_params("edits is empty", f"{pre}edits")
    if texts:
        return "texts", ((), (), ()), texts
    starts, ends, news = zip(*lines, strict=True)  # non-empty: raw is
    return "lines", (starts, ends, news), []


_TEXT_KEYS = {"old_text": str, "new_text": str}
_LINE_FIELDS = operator.itemgetter("start_line", "end_line", "new_text")


def _plain_line_columns(raw: list[Any]) -> LineColumns | None:
    """The edits as columns when each is a dict of exactly {start_line: int, end_line: int,
    new_text: str} (bool is not an int here), else None: then the item-by-item path finds and
    names what is wrong. The common case of a batch, checked with C-level passes (a batch can
    hold 3,200 edits)."""
    if not raw or set(map(type, raw)) != {dict} or set(map(len, raw)) != {3}:
        return None
    try:
        starts, ends, texts = zip(*map(_LINE_FIELDS, raw), strict=True)
    except KeyError:
        return None
    if set(map(type, starts)) | set(map(type, ends)) != {int} or set(map(type, texts)) != {str}:
        return None
    return starts, ends, texts


def _plain(item: dict[str, Any], keys: Mapping[str, type]) -> bool:
    """Exactly these keys with exactly these types (bool is not an int here)."""
    return len(item) == len(keys) and all(type(item.get(k)) is kind for k, kind in keys.items())


def _prefixed(model: type[Any], raw: Any, where: str) -> Any:
    try:
        return parse_params(model, raw, check_text=False)  # the whole request was checked
    except SCodeError as err:
        inner = err.data.get("field")
        err.data["field"] = where if inner in (None, "<params>") else f"{where}.{inner}"
        for detail in err.data.get("errors", []):
            detail["field"] = f"{where}.{detail['field']}"
        err.message = f"{where}: {err.message}"
        raise


def _one_file(
    path: str,
    base: str,
    expected: str | None,
    edits: list[Any] | None,
    content: str | None,
) -> FilePlan:
    if (edits is None) == (content is None):
        raise invalid_params("give either edits or content", base or "<params>")
    if content is not None:
        return FilePlan(path, base, expected, "content", content=content)
    assert edits is not None
    pre = f"{base}." if base else ""
    kind, lines, texts = _edits(edits, base)
    if expected is None:
        raise invalid_params("a new file is created with content, not edits", f"{pre}edits")
    return FilePlan(path, base, expected, kind, line_columns=lines, text_edits=texts)


def plans_of(args: ApplyPatchArgs, raw: Any = None) -> list[FilePlan]:
    """Normalize the request into one plan per file, refusing mixed or incomplete forms."""
    incoming = current()
    if raw is not None:
        size = len(json.dumps(raw, ensure_ascii=False).encode())
    elif incoming is not None:  # the request as it came: its body, as the transport read it
        size = incoming.size
    else:
        size = len(args.__pydantic_serializer__.to_json(args, exclude_unset=True))
    if size > MAX_BYTES:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            f"the request is {size} bytes",
            limit="request_size",
            max=MAX_BYTES,
            actual=size,
        )
    given = args.model_fields_set - {"turn_id"}
    forms = [
        f
        for f, keys in (
            ("files", {"files"}),
            ("patch", {"patch", "revisions"}),
            ("path", {"path", "expected_revision", "expected_sha256", "edits", "content"}),
        )
        if given & keys
    ]
    if len(forms) != 1:
        raise invalid_params(
            "send exactly one form: 'files', 'patch' with 'revisions', or the legacy 'path'"
            + (f" (got fields of {', '.join(forms)})" if forms else ""),
            "<params>",
        )
    if forms[0] == "files":
        plans = [
            _one_file(
                f.path,
                f"files.{i}",
                _expected(f.expected_revision, f"files.{i}.expected_revision"),
                f.edits,
                f.content,
            )
            for i, f in enumerate(args.files or [])
        ]
        if not plans:
            raise invalid_params("files is empty", "files")
    elif forms[0] == "patch":
        plans = _patch_plans(args)
    else:
        plans = [_legacy_plan(args)]
    _check_unique(plans)
    return plans


def _legacy_plan(args: ApplyPatchArgs) -> FilePlan:
    if args.path is None:
        raise invalid_params("the legacy form needs 'path'", "path")
    has_rev = "expected_revision" in args.model_fields_set
    if has_rev == (args.expected_sha256 is not None):
        raise invalid_params(
            "give expected_revision or expected_sha256 (exactly one)", "expected_revision"
        )
    if args.expected_sha256 is not None and not _SHA256.match(args.expected_sha256):
        raise invalid_params("expected_sha256 is 64 lowercase hex characters", "expected_sha256")
    expected = (
        args.expected_sha256
        if not has_rev
        else _expected(args.expected_revision, "expected_revision")
    )
    plan = _one_file(args.path, "", expected, args.edits, args.content)
    plan.field = "path"
    return plan


def _patch_plans(args: ApplyPatchArgs) -> list[FilePlan]:
    if args.patch is None:
        raise invalid_params("the patch form needs 'patch'", "patch")
    if args.revisions is None:
        raise invalid_params(
            "the patch form needs 'revisions' (path → revision or null)", "revisions"
        )
    sections = patch_form.parse(args.patch)
    plans = []
    for section in sections:
        if section.path not in args.revisions:
            raise invalid_params(
                f"revisions has no entry for {section.path!r}", f"revisions.{section.path}"
            )
        expected = _expected(args.revisions[section.path], f"revisions.{section.path}")
        if section.op == "add":
            if expected is not None:
                raise invalid_params(
                    f"{section.path!r} is added: its revision must be null",
                    f"revisions.{section.path}",
                )
            plans.append(
                FilePlan(
                    section.path,
                    "patch",
                    None,
                    "patch_add",
                    content=section.content,
                    patch_file=section,
                )
            )
        else:
            if expected is None:
                raise invalid_params(
                    f"{section.path!r} is updated: give its revision", f"revisions.{section.path}"
                )
            if len(section.hunks) > MAX_EDITS_PER_FILE:
                raise SCodeError(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"{section.path!r}: more than {MAX_EDITS_PER_FILE} hunks",
                    limit="edits_per_file",
                    max=MAX_EDITS_PER_FILE,
                    field="patch",
                )
            plans.append(
                FilePlan(section.path, "patch", expected, "patch_update", patch_file=section)
            )
    extra = set(args.revisions) - {s.path for s in sections}
    if extra:
        name = sorted(extra)[0]
        raise invalid_params(
            f"revisions names {name!r}, which the patch does not touch", f"revisions.{name}"
        )
    return plans


def _check_unique(plans: list[FilePlan]) -> None:
    if len(plans) > MAX_PATHS:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            f"{len(plans)} paths in one call",
            limit="paths",
            max=MAX_PATHS,
            actual=len(plans),
        )
    seen: dict[str, str] = {}
    for p in plans:
        if p.path in seen:
            raise SCodeError(
                ErrorKind.ALIAS_CONFLICT,
                f"{p.path!r} appears twice ({seen[p.path]} and {p.field})",
                paths=[p.path, p.path],
                field=p.field,
            )
        seen[p.path] = p.field

"""s_code.edits.request (and the engine around it): forms, required fields, revisions, limits.

The module also holds :class:`EngineWorkspace`, the in-process engine harness the other edit
test modules import: a real workspace folder, a real state store outside it, the real engine.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.edits.engine import apply_patch
from s_code.edits.request import MAX_BYTES, ApplyPatchArgs, plans_of
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import parse_params
from s_code.session.session import Session
from s_code.state.store import Store
from s_code.tools.builtin import default_registry
from s_code.workspace.folders import Folders

BEGIN, END = "*** Begin Patch\n", "*** End Patch\n"
MIB = 1024 * 1024


def rev(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:16]


def sha(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry below ``root``: files with their bytes, directories as None."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for d in dirnames:
            out[(base / d).relative_to(root).as_posix()] = None
        for f in filenames:
            p = base / f
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


class EngineWorkspace:
    """One workspace folder driven through the in-process engine, in accept-edits mode."""

    def __init__(self, base: Path) -> None:
        self.root = base / "ws"
        self.root.mkdir(parents=True)
        self.store = Store(str(base / "state" / "s.sqlite3"))
        self.folders = Folders.open([(str(self.root), None)])
        self.session = Session(
            folders=self.folders,
            registry=default_registry(),
            store=self.store.workspace(os.path.realpath(self.root)),
            mode="accept-edits",
        )

    def put(self, rel: str, data: bytes | str) -> str:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        return rev(p.read_bytes())

    def read(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def rev(self, rel: str) -> str:
        return rev(self.read(rel))

    def tree(self) -> dict[str, bytes | None]:
        return snapshot(self.root)

    async def apply(self, raw: Any) -> dict[str, Any]:
        return await apply_patch(self.session, parse_params(ApplyPatchArgs, raw))

    async def fail(self, raw: Any) -> SCodeError:
        with pytest.raises(SCodeError) as info:
            await self.apply(raw)
        return info.value

    def run(self, raw: Any) -> dict[str, Any]:
        return asyncio.run(self.apply(raw))

    def run_error(self, raw: Any) -> SCodeError:
        try:
            self.run(raw)
        except SCodeError as err:
            return err
        raise AssertionError(f"the request was accepted: {raw!r}")

    def close(self) -> None:
        self.folders.close()
        self.store.close()


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[EngineWorkspace]:
    w = EngineWorkspace(tmp_path)
    yield w
    w.close()


def plans_error(raw: Any) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        args = parse_params(ApplyPatchArgs, raw)
        plans_of(args, args.model_dump(exclude_unset=True))
    return info.value


def plan_kinds(raw: Any) -> list[tuple[str, str, str | None, str]]:
    args = parse_params(ApplyPatchArgs, raw)
    return [(p.path, p.field, p.expected, p.kind) for p in plans_of(args, raw)]


R1, R2 = "0123456789abcdef", "fedcba9876543210"
LINE = {"start_line": 1, "end_line": 1, "new_text": "x"}
TEXT = {"old_text": "a", "new_text": "b"}


# --- form detection -------------------------------------------------------------------------


def test_files_form_plans() -> None:
    raw = {
        "files": [
            {"path": "a.txt", "expected_revision": R1, "edits": [LINE]},
            {"path": "b.txt", "expected_revision": R2, "edits": [TEXT]},
            {"path": "c.txt", "expected_revision": None, "content": "new\n"},
        ]
    }
    assert plan_kinds(raw) == [
        ("a.txt", "files.0", R1, "lines"),
        ("b.txt", "files.1", R2, "texts"),
        ("c.txt", "files.2", None, "content"),
    ]


def test_patch_form_plans() -> None:
    patch = BEGIN + "*** Add File: n.txt\n+x\n*** Update File: o.txt\n@@\n-a\n+b\n" + END
    raw = {"patch": patch, "revisions": {"n.txt": None, "o.txt": R1}}
    assert plan_kinds(raw) == [
        ("n.txt", "patch", None, "patch_add"),
        ("o.txt", "patch", R1, "patch_update"),
    ]


def test_legacy_form_plans() -> None:
    assert plan_kinds({"path": "a.txt", "expected_revision": R1, "edits": [LINE]}) == [
        ("a.txt", "path", R1, "lines")
    ]
    full = "ab" * 32
    assert plan_kinds({"path": "a.txt", "expected_sha256": full, "content": "x"}) == [
        ("a.txt", "path", full, "content")
    ]
    assert plan_kinds({"path": "a.txt", "expected_revision": None, "content": "x"}) == [
        ("a.txt", "path", None, "content")
    ]


def test_turn_id_does_not_count_as_a_form() -> None:
    raw = {"files": [{"path": "a", "expected_revision": None, "content": ""}], "turn_id": "t-1"}
    assert plan_kinds(raw) == [("a", "files.0", None, "content")]


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"turn_id": "t-1"},
        {
            "files": [{"path": "a", "expected_revision": None, "content": ""}],
            "patch": BEGIN + "*** Add File: b\n+x\n" + END,
            "revisions": {"b": None},
        },
        {
            "files": [{"path": "a", "expected_revision": None, "content": ""}],
            "path": "b",
            "expected_revision": None,
            "content": "",
        },
        {"patch": BEGIN + "*** Add File: b\n+x\n" + END, "revisions": {"b": None}, "content": ""},
        {"revisions": {"b": None}, "edits": [LINE]},
        {"files": [{"path": "a", "expected_revision": None, "content": ""}], "content": "x"},
    ],
)
def test_exactly_one_form(raw: dict[str, Any]) -> None:
    err = plans_error(raw)
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "<params>"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"patch": BEGIN + "*** Add File: b\n+x\n" + END}, "revisions"),
        ({"revisions": {"b": None}}, "patch"),
        ({"expected_revision": R1, "content": "x"}, "path"),
        ({"files": []}, "files"),
        ({"files": [{"path": "a", "expected_revision": R1}]}, "files.0"),
        (
            {"files": [{"path": "a", "expected_revision": R1, "edits": [LINE], "content": "x"}]},
            "files.0",
        ),
        ({"files": [{"path": "a", "expected_revision": R1, "edits": []}]}, "files.0.edits"),
        ({"files": [{"path": "a", "expected_revision": R1, "edits": [{}]}]}, "files.0.edits.0"),
        (
            {"files": [{"path": "a", "expected_revision": R1, "edits": [{"new_text": "x"}]}]},
            "files.0.edits.0",
        ),
        (
            {
                "files": [
                    {
                        "path": "a",
                        "expected_revision": R1,
                        "edits": [{"start_line": 1, "new_text": ""}],
                    }
                ]
            },
            "files.0.edits.0.end_line",
        ),
        (
            {
                "files": [
                    {
                        "path": "a",
                        "expected_revision": R1,
                        "edits": [{"start_line": "1", "end_line": 1, "new_text": ""}],
                    }
                ]
            },
            "files.0.edits.0.start_line",
        ),
        (
            {"files": [{"path": "a", "expected_revision": R1, "edits": [{"old_text": "a"}]}]},
            "files.0.edits.0.new_text",
        ),
        ({"files": [{"path": "a", "expected_revision": R1, "edits": ["x"]}]}, "files.0.edits.0"),
        # Items that are not objects, some looking like one's keys (pydantic leaves edit items
        # to plans_of): each is named, none reaches a dict operation.
        *(
            ({"files": [{"path": "a", "expected_revision": R1, "edits": [LINE, bad]}]}, field)
            for bad, field in (
                ("old_text", "files.0.edits.1"),
                ("abc", "files.0.edits.1"),
                (5, "files.0.edits.1"),
                (None, "files.0.edits.1"),
                ([1, 1, "x"], "files.0.edits.1"),
                (True, "files.0.edits.1"),
            )
        ),
        ({"path": "a", "expected_revision": R1, "edits": ["start_line"]}, "edits.0"),
    ],
)
def test_incomplete_requests(raw: dict[str, Any], field: str) -> None:
    err = plans_error(raw)
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == field


def test_mixing_line_and_text_edits_in_one_file() -> None:
    err = plans_error({"files": [{"path": "a", "expected_revision": R1, "edits": [LINE, TEXT]}]})
    assert err.kind is ErrorKind.MIXED_EDIT_KINDS
    assert err.data["field"] == "files.0.edits"


def test_line_and_text_edits_in_different_files_are_fine() -> None:
    raw = {
        "files": [
            {"path": "a", "expected_revision": R1, "edits": [LINE]},
            {"path": "b", "expected_revision": R2, "edits": [TEXT]},
        ]
    }
    assert [k for *_, k in plan_kinds(raw)] == ["lines", "texts"]


def test_a_path_twice_is_an_alias_conflict() -> None:
    err = plans_error(
        {
            "files": [
                {"path": "a", "expected_revision": None, "content": ""},
                {"path": "a", "expected_revision": None, "content": "x"},
            ]
        }
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == ["a", "a"]


# --- expected_revision: required but nullable -----------------------------------------------


def test_files_expected_revision_is_required() -> None:
    err = plans_error({"files": [{"path": "a", "content": "x"}]})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.expected_revision"


def test_legacy_expected_revision_is_required() -> None:
    err = plans_error({"path": "a", "content": "x"})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "expected_revision"


def test_null_revision_with_edits_is_refused() -> None:
    err = plans_error({"files": [{"path": "a", "expected_revision": None, "edits": [LINE]}]})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.edits"


@pytest.mark.parametrize("value", ["XYZ", "0123456789ABCDEF", "0123456789abcde", "0" * 17, ""])
def test_malformed_revision(value: str) -> None:
    err = plans_error({"files": [{"path": "a", "expected_revision": value, "content": ""}]})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.expected_revision"


def test_legacy_revision_and_sha256_are_exclusive() -> None:
    err = plans_error(
        {"path": "a", "expected_revision": R1, "expected_sha256": "0" * 64, "content": ""}
    )
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "expected_revision"


@pytest.mark.parametrize("value", [R1, "0" * 63, "G" * 64, "0" * 65])
def test_legacy_sha256_must_be_64_hex(value: str) -> None:
    err = plans_error({"path": "a", "expected_sha256": value, "content": ""})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "expected_sha256"


# --- the patch form's revisions map ---------------------------------------------------------

UPDATE_A = BEGIN + "*** Update File: a.txt\n@@\n-a\n+b\n" + END
ADD_B = BEGIN + "*** Add File: b.txt\n+b\n" + END


@pytest.mark.parametrize(
    ("patch", "revisions", "field"),
    [
        (UPDATE_A, {}, "revisions.a.txt"),  # missing
        (UPDATE_A, {"a.txt": R1, "other.txt": R2}, "revisions.other.txt"),  # extra
        (UPDATE_A, {"a.txt": None}, "revisions.a.txt"),  # an update needs a revision
        (ADD_B, {"b.txt": R1}, "revisions.b.txt"),  # an add needs null
        (ADD_B, {"b.txt": None, "a.txt": None}, "revisions.a.txt"),
        (UPDATE_A, {"a.txt": "nothex"}, "revisions.a.txt"),
    ],
)
def test_revisions_cover_exactly_the_patch_paths(
    patch: str, revisions: dict[str, str | None], field: str
) -> None:
    err = plans_error({"patch": patch, "revisions": revisions})
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == field


# --- unknown fields anywhere ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"files": [{"path": "a", "expected_revision": None, "content": ""}], "zz": 1}, "zz"),
        (
            {"files": [{"path": "a", "expected_revision": None, "content": "", "zz": 1}]},
            "files.0.zz",
        ),
        (
            {
                "files": [
                    {"path": "a", "expected_revision": None, "content": ""},
                    {"path": "b", "expected_revision": R1, "edits": [LINE, {**LINE, "zz": 1}]},
                ]
            },
            "files.1.edits.1.zz",
        ),
        (
            {"files": [{"path": "a", "expected_revision": R1, "edits": [{**TEXT, "zz": 1}]}]},
            "files.0.edits.0.zz",
        ),
        (
            {"files": [{"path": "a", "expected_revision": R1, "edits": [{**TEXT, **LINE}]}]},
            "files.0.edits.0.start_line",
        ),
        ({"patch": ADD_B, "revisions": {"b.txt": None}, "zz": True}, "zz"),
        ({"path": "a", "expected_revision": None, "content": "", "expected": 1}, "expected"),
        ({"path": "a", "expected_revision": R1, "edits": [{**LINE, "zz": 1}]}, "edits.0.zz"),
    ],
)
def test_unknown_fields_are_refused_with_their_path(raw: dict[str, Any], field: str) -> None:
    err = plans_error(raw)
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == field


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"start_line": True, "end_line": 1, "new_text": "x"}, "files.0.edits.2.start_line"),
        ({"start_line": 1, "end_line": 1.0, "new_text": "x"}, "files.0.edits.2.end_line"),
        ({"start_line": 1, "end_line": 1, "new_text": 7}, "files.0.edits.2.new_text"),
        ({"start_line": 1, "end_line": 1, "text": "x"}, "files.0.edits.2.text"),
        ({"start_line": 1, "new_text": "x", "zz": 1}, "files.0.edits.2.zz"),
        ({"start_line": 1, "end_line": 1}, "files.0.edits.2.new_text"),
    ],
    ids=["bool-start", "float-end", "int-text", "renamed-key", "extra-key", "missing-key"],
)
def test_one_bad_line_edit_among_good_ones_is_named(bad: dict[str, Any], field: str) -> None:
    """Well-formed line edits take a fast path checked all at once; one bad item among them
    falls back to the item-by-item checks, which name it."""
    edits = [LINE, {**LINE, "start_line": 2, "end_line": 2}, bad, {**LINE, "start_line": 4}]
    err = plans_error({"files": [{"path": "a", "expected_revision": R1, "edits": edits}]})
    assert err.kind is ErrorKind.INVALID_PARAMS, err
    assert err.data["field"] == field, err.data


def test_well_formed_line_edits_keep_their_positions() -> None:
    edits = [{**LINE, "start_line": n, "end_line": n} for n in (3, 1, 2)]
    args = parse_params(
        ApplyPatchArgs, {"files": [{"path": "a", "expected_revision": R1, "edits": edits}]}
    )
    (plan,) = plans_of(args)
    assert [(e.start_line, e.position) for e in plan.line_edits] == [(3, 0), (1, 1), (2, 2)]


def test_legacy_edit_errors_name_the_top_level_edits_field() -> None:
    err = plans_error({"path": "a", "expected_revision": R1, "edits": [LINE, TEXT]})
    assert err.kind is ErrorKind.MIXED_EDIT_KINDS
    assert err.data["field"] == "edits"


# --- limits (pure) --------------------------------------------------------------------------


def _content(i: int) -> dict[str, Any]:
    return {"path": f"f{i}.txt", "expected_revision": None, "content": ""}


def test_32_paths_are_fine_33_are_not() -> None:
    assert len(plan_kinds({"files": [_content(i) for i in range(32)]})) == 32
    err = plans_error({"files": [_content(i) for i in range(33)]})
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "paths"


def test_33_added_files_in_a_patch() -> None:
    body = "".join(f"*** Add File: f{i}.txt\n+x\n" for i in range(33))
    err = plans_error(
        {"patch": BEGIN + body + END, "revisions": {f"f{i}.txt": None for i in range(33)}}
    )
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "paths"


def test_100_edits_are_fine_101_are_not() -> None:
    edits = [{"start_line": i, "end_line": i, "new_text": "x"} for i in range(1, 102)]
    ok = {"files": [{"path": "a", "expected_revision": R1, "edits": edits[:100]}]}
    assert plan_kinds(ok) == [("a", "files.0", R1, "lines")]
    err = plans_error({"files": [{"path": "a", "expected_revision": R1, "edits": edits}]})
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "edits_per_file"


def test_101_hunks_in_one_update() -> None:
    body = "*** Update File: a\n" + "".join(f"@@\n-l{i}\n+L{i}\n" for i in range(101))
    err = plans_error({"patch": BEGIN + body + END, "revisions": {"a": R1}})
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "edits_per_file"


# --- through the engine ---------------------------------------------------------------------


async def test_files_form_writes_and_reports(ws: EngineWorkspace) -> None:
    ra = ws.put("a.txt", "one\ntwo\n")
    result = await ws.apply(
        {
            "files": [
                {"path": "a.txt", "expected_revision": ra, "edits": [LINE]},
                {"path": "new/b.txt", "expected_revision": None, "content": "b\n"},
            ]
        }
    )
    assert ws.read("a.txt") == b"x\ntwo\n"
    assert ws.read("new/b.txt") == b"b\n"
    applied = [(a["path"], a["revision"], a["sha256"], a["created"]) for a in result["applied"]]
    assert applied == [
        ("a.txt", rev("x\ntwo\n"), sha("x\ntwo\n"), False),
        ("new/b.txt", rev("b\n"), sha("b\n"), True),
    ]
    assert isinstance(result["turn_id"], str)


async def test_legacy_form_with_full_sha256(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "hello\n")
    await ws.apply(
        {
            "path": "a.txt",
            "expected_sha256": sha("hello\n"),
            "edits": [TEXT | {"old_text": "hello"}],
        }
    )
    assert ws.read("a.txt") == b"b\n"


async def test_legacy_form_with_a_wrong_sha256(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "hello\n")
    before = ws.tree()
    err = await ws.fail({"path": "a.txt", "expected_sha256": sha("other\n"), "content": "x"})
    assert err.kind is ErrorKind.STALE_REVISION
    assert err.data["path"] == "a.txt"
    assert err.data["expected"] == sha("other\n")
    assert err.data["actual"] == rev("hello\n")
    assert ws.tree() == before


async def test_stale_revision_carries_expected_and_actual(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "now\n")
    before = ws.tree()
    err = await ws.fail({"files": [{"path": "a.txt", "expected_revision": R1, "edits": [LINE]}]})
    assert err.kind is ErrorKind.STALE_REVISION
    assert (err.data["path"], err.data["expected"], err.data["actual"]) == (
        "a.txt",
        R1,
        rev("now\n"),
    )
    assert ws.tree() == before


async def test_existing_file_with_null_revision(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "now\n")
    err = await ws.fail({"files": [{"path": "a.txt", "expected_revision": None, "content": "x"}]})
    assert err.kind is ErrorKind.STALE_REVISION
    assert (err.data["expected"], err.data["actual"]) == (None, rev("now\n"))
    assert ws.read("a.txt") == b"now\n"


async def test_missing_file_with_a_revision(ws: EngineWorkspace) -> None:
    err = await ws.fail({"files": [{"path": "gone.txt", "expected_revision": R1, "content": "x"}]})
    assert err.kind is ErrorKind.STALE_REVISION
    assert (err.data["path"], err.data["expected"], err.data["actual"]) == ("gone.txt", R1, None)
    assert ws.tree() == {}


@pytest.mark.parametrize("data", [b"caf\xe9\n", b"\xff\xfeh\x00i\x00", b"a\x00b\n"])
async def test_non_utf8_file_is_unsupported_encoding(ws: EngineWorkspace, data: bytes) -> None:
    r = ws.put("bin.dat", data)
    before = ws.tree()
    err = await ws.fail({"files": [{"path": "bin.dat", "expected_revision": r, "edits": [LINE]}]})
    assert err.kind is ErrorKind.UNSUPPORTED_ENCODING
    assert err.data["path"] == "bin.dat"
    assert ws.tree() == before


async def test_protected_path(ws: EngineWorkspace) -> None:
    err = await ws.fail(
        {"files": [{"path": ".vscode/settings.json", "expected_revision": None, "content": "{}"}]}
    )
    assert err.kind is ErrorKind.PROTECTED_PATH
    assert ws.tree() == {}


async def test_a_bad_file_later_in_the_batch_writes_nothing(ws: EngineWorkspace) -> None:
    ra = ws.put("a.txt", "a\n")
    rb = ws.put("b.txt", "b\n")
    before = ws.tree()
    err = await ws.fail(
        {
            "files": [
                {"path": "a.txt", "expected_revision": ra, "edits": [TEXT]},
                {"path": "c.txt", "expected_revision": None, "content": "c\n"},
                {
                    "path": "b.txt",
                    "expected_revision": rb,
                    "edits": [{"old_text": "zz", "new_text": ""}],
                },
            ]
        }
    )
    assert err.kind is ErrorKind.MATCH_NOT_FOUND
    assert err.data["field"] == "files.2.edits.0.old_text"
    assert ws.tree() == before


# --- limits through the engine --------------------------------------------------------------


async def test_request_size_limit(ws: EngineWorkspace) -> None:
    big = "x" * (MAX_BYTES + 1)
    err = await ws.fail({"files": [{"path": "big.txt", "expected_revision": None, "content": big}]})
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "request_size"
    assert ws.tree() == {}


async def test_request_just_under_the_size_limit(ws: EngineWorkspace) -> None:
    content = "x" * (MAX_BYTES - 1000)
    await ws.apply({"files": [{"path": "big.txt", "expected_revision": None, "content": content}]})
    assert ws.read("big.txt") == content.encode()


async def test_snapshot_size_limit(ws: EngineWorkspace) -> None:
    chunk = ("y" * 1023 + "\n") * (6 * 1024)  # 6 MiB each, 18 MiB together
    revs = [ws.put(f"f{i}.txt", chunk) for i in range(3)]
    before = ws.tree()
    err = await ws.fail(
        {
            "files": [
                {"path": f"f{i}.txt", "expected_revision": r, "edits": [LINE]}
                for i, r in enumerate(revs)
            ]
        }
    )
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "snapshot_size"
    assert ws.tree() == before


async def test_result_size_limit(ws: EngineWorkspace) -> None:
    r = ws.put("f.txt", "z" * (9 * MIB) + "\n")
    before = ws.tree()
    grow = "w" * (8 * MIB)
    err = await ws.fail(
        {
            "files": [
                {
                    "path": "f.txt",
                    "expected_revision": r,
                    "edits": [{"start_line": 2, "end_line": 1, "new_text": grow}],
                }
            ]
        }
    )
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "result_size"
    assert ws.tree() == before


async def test_too_many_paths_through_the_engine_writes_nothing(ws: EngineWorkspace) -> None:
    err = await ws.fail({"files": [_content(i) for i in range(33)]})
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "paths"
    assert ws.tree() == {}

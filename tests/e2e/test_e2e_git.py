"""The git tools through the real server (``s-code serve`` over stdio) on ordinary repositories:
every tool answers concretely, and ``s-code/tools/call`` gives the identical result."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import RpcError, StdioClient
from s_code.protocol import methods

ENV = {
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**env, **ENV}, capture_output=True, text=True
    )
    assert done.returncode == 0 or args[0] == "merge", done.stderr
    return done.stdout.strip()


def build(root: Path) -> Path:
    """main: app.py, notes.txt, old.txt; a conflicting merge; staged, unstaged and new files."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "notes.txt").write_text("alpha\n")
    (root / "old.txt").write_text("rename me, a line long enough to be similar\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "app.py").write_text("def main():\n    return 2\n")
    git(root, "commit", "-qam", "second: return 2")
    git(root, "checkout", "-qb", "other")
    (root / "notes.txt").write_text("other\n")
    git(root, "commit", "-qam", "other notes")
    git(root, "checkout", "-q", "main")
    (root / "notes.txt").write_text("main\n")
    git(root, "commit", "-qam", "main notes")
    git(root, "merge", "-q", "other")  # conflicts in notes.txt
    git(root, "mv", "old.txt", "new.txt")
    (root / "app.py").write_text("def main():\n    return 3\n")
    (root / "untracked.txt").write_text("u\n")
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("git") / "repo")


@pytest.fixture(scope="module")
def client(repo: Path) -> Iterator[StdioClient]:
    c = StdioClient([sys.executable, "-m", "s_code", "serve"])
    c.initialize(str(repo))
    yield c
    assert c.close() == 0


def both(client: StdioClient, method: str, name: str, arguments: dict[str, Any]) -> Any:
    typed = client.request(method, arguments)
    generic = client.request(methods.TOOLS_CALL, {"name": name, "arguments": arguments})
    assert typed == generic
    return typed


def test_status_renames_untracked_and_conflicts(client: StdioClient, repo: Path) -> None:
    s = both(client, methods.GIT_STATUS, "git_status", {})
    assert s["branch"] == "main" and s["head"] == git(repo, "rev-parse", "HEAD")
    got = {
        e["path"]: (e["kind"], e["index"], e["worktree"], e.get("orig_path")) for e in s["entries"]
    }
    assert got == {
        "app.py": ("changed", ".", "M", None),
        "new.txt": ("renamed", "R", ".", "old.txt"),
        "notes.txt": ("unmerged", "U", "U", None),
        "untracked.txt": ("untracked", "?", "?", None),
    }
    only = both(client, methods.GIT_STATUS, "git_status", {"path": "app.py", "untracked": "no"})
    assert [e["path"] for e in only["entries"]] == ["app.py"]


def test_diff_unstaged_staged_and_between_revisions(client: StdioClient) -> None:
    unstaged = both(client, methods.GIT_DIFF, "git_diff", {"paths": ["app.py"]})
    assert [(f["path"], f["additions"], f["deletions"]) for f in unstaged["files"]] == [
        ("app.py", 1, 1)
    ]
    assert "-    return 2\n+    return 3\n" in unstaged["files"][0]["patch"]
    staged = both(
        client, methods.GIT_DIFF, "git_diff", {"staged": True, "paths": ["new.txt", "old.txt"]}
    )
    assert [(f["path"], f["change"], f.get("old_path")) for f in staged["files"]] == [
        ("new.txt", "renamed", "old.txt")
    ]
    between = both(
        client,
        methods.GIT_DIFF,
        "git_diff",
        {"base": "HEAD~2", "target": "HEAD~1", "context_lines": 0},
    )
    assert [f["path"] for f in between["files"]] == ["app.py"]
    ranged = both(client, methods.GIT_DIFF, "git_diff", {"base": "HEAD~2..HEAD~1"})
    assert [f["path"] for f in ranged["files"]] == ["app.py"]
    assert not between["truncated"]


def test_log_with_paths_limits_and_filters(client: StdioClient) -> None:
    log = both(client, methods.GIT_LOG, "git_log", {})
    assert [c["subject"] for c in log["commits"]] == ["main notes", "second: return 2", "first"]
    assert not log["truncated"]
    app = both(client, methods.GIT_LOG, "git_log", {"paths": ["app.py"]})
    assert [c["subject"] for c in app["commits"]] == ["second: return 2", "first"]
    first = app["commits"][1]
    assert first["author_name"] == "Ann" and first["author_date"] == "2024-01-02T03:04:05+00:00"
    assert first["parents"] == [] and app["commits"][0]["parents"] == [first["commit"]]
    page = both(client, methods.GIT_LOG, "git_log", {"max_count": 1, "paths": ["app.py"]})
    assert page["truncated"] and len(page["commits"]) == 1
    grep = both(client, methods.GIT_LOG, "git_log", {"grep": "return", "revision": "other"})
    assert [c["subject"] for c in grep["commits"]] == ["second: return 2"]


def test_show_a_commit(client: StdioClient) -> None:
    shown = both(client, methods.GIT_SHOW, "git_show", {"revision": "HEAD~1"})
    assert shown["commit"]["subject"] == "second: return 2"
    assert [(f["path"], f["change"]) for f in shown["files"]] == [("app.py", "modified")]
    assert "+    return 2" in shown["files"][0]["patch"]


def test_blame_a_file(client: StdioClient) -> None:
    blame = both(client, methods.GIT_BLAME, "git_blame", {"path": "app.py", "revision": "HEAD"})
    assert [ln["text"] for ln in blame["lines"]] == ["def main():", "    return 2"]
    first, second = (blame["commits"][ln["commit"]]["summary"] for ln in blame["lines"])
    assert (first, second) == ("first", "second: return 2")
    part = both(
        client, methods.GIT_BLAME, "git_blame", {"path": "app.py", "start_line": 2, "end_line": 2}
    )
    assert [(ln["line_number"], ln["text"]) for ln in part["lines"]] == [(2, "    return 3")]
    assert blame["commits"][blame["lines"][0]["commit"]]["author_name"] == "Ann"


def test_errors_have_their_kinds(client: StdioClient) -> None:
    cases = [
        (methods.GIT_LOG, {"revision": "nope"}, "not_found"),
        (methods.GIT_LOG, {"revision": "--all"}, "git_argument_rejected"),
        (methods.GIT_DIFF, {"paths": ["../x"]}, "path_escape"),
        (methods.GIT_BLAME, {"path": "missing.py"}, "not_found"),
        (methods.GIT_STATUS, {"colour": True}, "invalid_params"),
    ]
    for method, params, kind in cases:
        with pytest.raises(RpcError) as info:
            client.request(method, params)
        assert info.value.kind == kind, (method, params, info.value.data)


def test_tool_profiles(client: StdioClient) -> None:
    listed = {t["name"] for t in client.request(methods.TOOLS_LIST, {})["tools"]}
    assert {"git_status", "git_diff", "git_log"} <= listed
    assert not {"git_show", "git_blame"} & listed
    found = client.request(methods.TOOLS_SEARCH, {"query": "git blame"})["tools"]
    assert found[0]["name"] == "git_blame"


def test_multi_root_uses_the_folder_of_the_path(tmp_path: Path) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    for root, name in ((a, "alpha.txt"), (b, "beta.txt")):
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        (root / name).write_text("x\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"add {name}")
        (root / name).write_text("y\n")
    c = StdioClient([sys.executable, "-m", "s_code", "serve"])
    try:
        c.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "workspaceFolders": [
                    {"uri": a.as_uri(), "name": "a"},
                    {"uri": b.as_uri(), "name": "b"},
                ],
            },
        )
        c.notify("initialized", {})
        sb = c.request(methods.GIT_STATUS, {"path": "b"})
        assert [e["path"] for e in sb["entries"]] == ["b/beta.txt"]
        primary = c.request(methods.GIT_LOG, {})
        assert [x["subject"] for x in primary["commits"]] == ["add alpha.txt"]
        diff = c.request(methods.GIT_DIFF, {"paths": ["b/beta.txt"]})
        assert [f["path"] for f in diff["files"]] == ["b/beta.txt"]
        with pytest.raises(RpcError) as info:
            c.request(methods.GIT_DIFF, {"paths": ["a/alpha.txt", "b/beta.txt"]})
        assert info.value.kind == "invalid_params"
    finally:
        c.close()

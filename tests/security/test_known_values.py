"""SECURITY.md H13: a known secret value never leaves the sidecar in any tool result (files,
searches, diffs, code mode, tool descriptions) or stream.

A host process (a background terminal, given the value through a credential handle) writes the
value into a workspace file; the file is then read, searched, diffed, committed and shown, read
from code mode (whose JavaScript must never hold the value: it returns the text reversed, which no
redactor would recognise), and edited from what read_file showed. Positive controls: the file on
disk holds the value, a token-shaped fixture beside it is still shown (built-in results pass the
known values only, not the token rules), and an MCP server run directly does put the value in its
tool's description. The value is learned two ways: from a handle resolved for the terminal (the
variable's name says nothing) and from the sidecar's own secret-named variable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.host_support import HostLab, host_lab

from s_code.client import RpcError
from s_code.edits.hidden import compute_guarded
from s_code.edits.request import ApplyPatchArgs, plans_of
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import parse_params
from s_code.redaction import MARK, Redactor, variants

PY = sys.executable
VALUE = "h13-kv-9c41e7d2b5a86f03e7"
FIXTURE = "AKIAIOSFODNN7EXAMPLE"  # shaped like an AWS key: a test fixture the agent must see
FILE = "config/app.env"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}
# What the host process writes: the value raw, in base64 (two alignments) and hex.
WRITER = (
    "import base64, os, sys\n"
    "v = os.environ['V']\n"
    "lines = open(sys.argv[1]).read().replace('API_TOKEN=placeholder', 'API_TOKEN=' + v)\n"
    "lines += 'B64=' + base64.b64encode(v.encode()).decode() + '\\n'\n"
    "lines += 'B64X=' + base64.b64encode(b'x' + v.encode()).decode() + '\\n'\n"
    "lines += 'HEX=' + v.encode().hex() + '\\n'\n"
    "open(sys.argv[1], 'w').write(lines)\n"
    "print('written', flush=True)\n"
)


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**env, **GIT_ENV}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def forms() -> list[str]:
    """The value in every encoding the redactor hides, and every 12-character piece of it."""
    pieces = [VALUE[i : i + 12] for i in range(len(VALUE) - 11)]
    return sorted(variants(VALUE)) + pieces


def assert_hidden(shown: Any) -> None:
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    for form in forms():
        assert form not in text, form


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path)


def plant(lab: HostLab, variable: str) -> None:
    """A committed workspace, then a terminal (a host process) that writes the value into it."""
    lab.env[variable] = VALUE
    (lab.ws / "config").mkdir()
    (lab.ws / FILE).write_text(f"# service settings\nAPI_TOKEN=placeholder\nAWS_KEY={FIXTURE}\n")
    git(lab.ws, "init", "-q", "-b", "main")
    git(lab.ws, "add", "-A")
    git(lab.ws, "commit", "-qm", "first")
    lab.start()
    tid = lab.tool(
        "terminal_start",
        {
            "command": [PY, "-c", WRITER, str(lab.ws / FILE)],
            "env": {"V": "${secret:env:" + variable + "}"},
        },
    )["terminal_id"]
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 30000}, timeout=40)
    assert VALUE in (lab.ws / FILE).read_text()  # positive control: the plant fired


# PLAIN_VALUE: known only once the handle is resolved; DEPLOY_TOKEN: the sidecar's own secret
@pytest.mark.parametrize("variable", ["PLAIN_VALUE", "DEPLOY_TOKEN"])
def test_h13_a_secret_a_host_process_wrote_never_comes_back(lab: HostLab, variable: str) -> None:
    plant(lab, variable)
    seen: list[Any] = []

    def tool(name: str, arguments: dict[str, Any]) -> Any:
        result = lab.tool(name, arguments)
        seen.append(result)
        return result

    read = tool("read_file", {"path": FILE})
    shown = read["numbered_content"]
    assert f"API_TOKEN={MARK}" in shown and shown.count(MARK) == 4  # raw, 2 x base64, hex
    assert FIXTURE in shown  # the token rules are not applied to what the sidecar read
    disk = (lab.ws / FILE).read_bytes()
    assert read["sha256"] == hashlib.sha256(disk).hexdigest()  # the revision of the real bytes
    found = tool("search_text", {"pattern": "API_TOKEN|B64|HEX"})["matches"]
    assert len(found) == 4 and all(MARK in m["text"] for m in found)
    diff = tool("git_diff", {})
    assert MARK in json.dumps(diff)
    git(lab.ws, "commit", "-qam", f"set the token to {VALUE}")
    assert VALUE in git(lab.ws, "show", "HEAD")  # positive control: git itself shows it
    tool("git_show", {"revision": "HEAD"})
    tool("git_log", {})
    blame = tool("git_blame", {"path": FILE})
    assert MARK in json.dumps(blame)
    code = (
        "const r = tools.read_file({path: 'config/app.env'}).numbered_content;\n"
        "const s = tools.search_text({pattern: 'API_TOKEN'}).matches[0].text;\n"
        "const g = JSON.stringify(tools.git_show({revision: 'HEAD'}));\n"
        "const all = r + s + g;\n"
        "console.log(all);\n"
        "const rev = (t) => t.split('').reverse().join('');\n"
        "return {reversed: rev(all), codes: Array.from(all).map((c) => c.charCodeAt(0)).join(',')};"
    )
    run = tool("code_mode", {"code": code})
    assert MARK in run["logs"] and MARK[::-1] in run["result"]["reversed"]
    assert VALUE[::-1] not in run["result"]["reversed"]  # the JavaScript never held the value
    codes = ",".join(str(ord(c)) for c in VALUE[:12])
    assert codes not in run["result"]["codes"]
    with pytest.raises(RpcError) as err:  # an error's logs too
        lab.tool("code_mode", {"code": code.split("const rev")[0] + "throw new Error(s);"})
    assert MARK in json.dumps(err.value.data)  # the logs, and the error's own text
    assert_hidden(err.value.data)
    assert_hidden(str(err.value))
    assert_hidden(seen)
    assert_hidden([n for n in lab.client.notifications])  # type: ignore[union-attr]


def test_h13_an_edit_against_a_redacted_line_fails_and_writes_nothing(lab: HostLab) -> None:
    plant(lab, "PLAIN_VALUE")
    read = lab.tool("read_file", {"path": FILE})
    rev = read["revision"]
    before = (lab.ws / FILE).read_bytes()
    shown_line = f"API_TOKEN={MARK}"
    attempts: list[tuple[dict[str, Any], str, str]] = [
        (  # exact text naming the shown line
            {
                "files": [
                    {
                        "path": FILE,
                        "expected_revision": rev,
                        "edits": [{"old_text": shown_line + "\n", "new_text": "API_TOKEN=other\n"}],
                    }
                ]
            },
            "match_not_found",
            "files.0.edits.0.old_text",
        ),
        (  # a patch whose context is the shown line
            {
                "patch": "*** Begin Patch\n*** Update File: config/app.env\n@@\n "
                + shown_line
                + f"\n-AWS_KEY={FIXTURE}\n+AWS_KEY=changed\n*** End Patch\n",
                "revisions": {FILE: rev},
            },
            "match_not_found",
            "patch",
        ),
        (  # a line edit that writes the shown line back
            {
                "files": [
                    {
                        "path": FILE,
                        "expected_revision": rev,
                        "edits": [
                            {
                                "start_line": 2,
                                "end_line": 3,
                                "new_text": f"{shown_line}\nAWS_KEY=x\n",
                            }
                        ],
                    }
                ]
            },
            "invalid_params",
            "files.0.edits.0.new_text",
        ),
        (  # the whole file as read_file showed it, one line changed
            {
                "files": [
                    {
                        "path": FILE,
                        "expected_revision": rev,
                        "content": "".join(
                            line.split("\t", 1)[1] + "\n"
                            for line in read["numbered_content"]
                            .replace("# service", "# the")
                            .splitlines()
                        ),
                    }
                ]
            },
            "invalid_params",
            "files.0.content",
        ),
    ]
    for args, kind, field in attempts:
        with pytest.raises(RpcError) as err:
            lab.call(methods.APPLY_PATCH, args)
        assert err.value.kind == kind, err.value
        assert err.value.data["field"] == field and err.value.data["redacted"] is True
        assert "hides from the agent" in str(err.value)
        assert (lab.ws / FILE).read_bytes() == before  # nothing written
    # other lines are edited as usual, the secret kept; the secret's line replaced whole is fine
    done = lab.call(
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": FILE,
                    "expected_revision": rev,
                    "edits": [{"old_text": f"AWS_KEY={FIXTURE}", "new_text": "AWS_KEY=rotated"}],
                }
            ]
        },
    )
    text = (lab.ws / FILE).read_text()
    assert f"API_TOKEN={VALUE}\n" in text and "AWS_KEY=rotated" in text and MARK not in text
    rev = done["applied"][0]["revision"]
    lab.call(
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": FILE,
                    "expected_revision": rev,
                    "edits": [
                        {"start_line": 2, "end_line": 2, "new_text": "API_TOKEN=${secret:env:API}"}
                    ],
                }
            ]
        },
    )
    assert "API_TOKEN=${secret:env:API}\n" in (lab.ws / FILE).read_text()


LEAKY = """
import os
from typing import Annotated
from pydantic import Field
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

KEY = os.environ["LEAKY_KEY"]
server = MCPServer("leaky")


@server.tool(
    annotations=ToolAnnotations(readOnlyHint=True),
    description=f"Probe the inventory service (signed in with key {KEY}).",
)
def probe(item: Annotated[str, Field(description=f"An item; sent with {KEY}")]) -> str:
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
"""


def test_h13_an_mcp_tool_s_description_and_schema_never_show_the_value(lab: HostLab) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    script = lab.ws / "tools" / "leaky.py"
    script.parent.mkdir()
    script.write_text(LEAKY)

    async def direct() -> str:
        params = StdioServerParameters(command=PY, args=[str(script)], env={"LEAKY_KEY": VALUE})
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            listed = await s.list_tools()
            return json.dumps([t.model_dump() for t in listed.tools])

    assert asyncio.run(direct()).count(VALUE) == 2  # positive control: description and schema
    lab.env["PLAIN_VALUE"] = VALUE
    entry = {
        "command": PY,
        "args": ["tools/leaky.py"],
        "env": {"LEAKY_KEY": "${secret:env:PLAIN_VALUE}"},
    }
    (lab.ws / ".s-code" / "mcp.json").write_text(json.dumps({"mcpServers": {"leaky": entry}}))
    lab.start()
    lab.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "leaky"})

    def ready() -> Any:
        (found,) = lab.entries("mcp")
        return found.get("tools")

    lab.wait(ready)
    found = lab.call(methods.TOOLS_SEARCH, {"query": "probe inventory service"})["tools"]
    (probe,) = [t for t in found if t["name"] == "mcp__leaky__probe"]
    assert MARK in probe["description"] and MARK in json.dumps(probe["inputSchema"])
    listed = lab.call(methods.TOOLS_LIST)
    assert "mcp__leaky__probe" in [t["name"] for t in listed["tools"]]
    run = lab.tool("code_mode", {"code": "return tools.tool_search({query: 'probe inventory'});"})
    assert_hidden([found, listed, run])
    lab.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "leaky"})  # with its tools
    assert_hidden(lab.editor.messages + lab.editor.documents)
    assert_hidden([n for n in lab.client.notifications])  # type: ignore[union-attr]


# -- the known-values pass and the edit guard, in process ----------------------------------------


def test_the_known_pass_hides_every_encoding_and_no_token_shape() -> None:
    redactor = Redactor([VALUE])
    fixtures = f"AWS_KEY={FIXTURE} ghp_{'a1B2' * 9} password=hunter2hunter2 "
    for form in sorted(variants(VALUE)):
        shown = redactor.redact_known(f"{fixtures}x{form}y")
        assert form not in shown and MARK in shown
        assert shown.startswith(fixtures)  # the token and context rules are not applied
    data = {"a": [fixtures, {VALUE: f"k {VALUE}"}], "n": 3}
    assert redactor.redact_known_json(data) == {"a": [fixtures, {MARK: f"k {MARK}"}], "n": 3}
    clean = {"a": [fixtures]}
    assert redactor.redact_known_json(clean) is clean  # nothing found: nothing copied
    nothing = Redactor()
    assert not nothing.knows_values and nothing.redact_known_json(data) is data


def test_a_value_of_several_lines_is_hidden_line_by_line() -> None:
    body = ["MIIEowIBAAKCAQEAx3k9Zq", "c2VjcmV0LWtleS1ib2R5LWxpbmUtdHdv", "tail4=="]
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
    redactor = Redactor([key])
    numbered = "".join(f"{n:6d}\t{line}\n" for n, line in enumerate(key.split("\n"), 1))
    diff = "".join(f"+  {line}\n" for line in key.split("\n"))  # a diff of an indented block
    for shown in (redactor.redact_known(numbered), redactor.redact_known(diff)):
        assert body[0] not in shown and body[1] not in shown
        assert "BEGIN RSA PRIVATE KEY" in shown  # the armour is no secret
        assert "tail4==" in shown  # a line under 8 characters is not looked for on its own
    assert key not in redactor.redact_known(f"x{key}y")


def _plan(raw: dict[str, Any]) -> Any:
    (plan,) = plans_of(parse_params(ApplyPatchArgs, raw))
    return plan


ORIGINAL = f"a = 1\nAPI_TOKEN={VALUE}\nb = 2\n"
SHOWN = f"API_TOKEN={MARK}"
REV = "0" * 16


@pytest.mark.parametrize(
    ("raw", "kind", "field"),
    [
        (
            {
                "path": "f",
                "expected_revision": REV,
                "edits": [{"old_text": SHOWN, "new_text": "x"}],
            },
            ErrorKind.MATCH_NOT_FOUND,
            "edits.0.old_text",
        ),
        (
            {
                "files": [
                    {
                        "path": "f",
                        "expected_revision": REV,
                        "edits": [
                            {"old_text": "a = 1", "new_text": "a = 3"},
                            {"old_text": f"{SHOWN}\nb = 2", "new_text": "b = 3"},
                        ],
                    }
                ]
            },
            ErrorKind.MATCH_NOT_FOUND,
            "files.0.edits.1.old_text",
        ),
        (
            {"patch": f"*** Begin Patch\n*** Update File: f\n@@\n-{SHOWN}\n+x\n*** End Patch"},
            ErrorKind.MATCH_NOT_FOUND,
            "patch",
        ),
        (
            {"patch": f"*** Begin Patch\n*** Update File: f\n@@\n a = 1\n+{SHOWN}\n*** End Patch"},
            ErrorKind.INVALID_PARAMS,
            "patch",
        ),
        (
            {"path": "f", "expected_revision": REV, "content": f"a = 1\n{SHOWN}\nb = 3\n"},
            ErrorKind.INVALID_PARAMS,
            "content",
        ),
        (
            {
                "files": [
                    {
                        "path": "f",
                        "expected_revision": REV,
                        "edits": [
                            {"start_line": 1, "end_line": 1, "new_text": "a = 3"},
                            {"start_line": 2, "end_line": 2, "new_text": SHOWN + " # new"},
                        ],
                    }
                ]
            },
            ErrorKind.INVALID_PARAMS,
            "files.0.edits.1.new_text",
        ),
        (  # the shown line copied elsewhere: the mark would stand where the agent meant the value
            {
                "path": "f",
                "expected_revision": REV,
                "edits": [{"old_text": "b = 2", "new_text": SHOWN}],
            },
            ErrorKind.INVALID_PARAMS,
            "edits.0.new_text",
        ),
    ],
)
def test_an_edit_made_from_the_redacted_view_is_refused(
    raw: dict[str, Any], kind: ErrorKind, field: str
) -> None:
    if "patch" in raw:
        raw["revisions"] = {"f": REV}
    plan = _plan(raw)
    with pytest.raises(SCodeError) as err:
        compute_guarded(plan, ORIGINAL, Redactor([VALUE]), "f")
    assert err.value.kind is kind and err.value.data["field"] == field
    assert err.value.data["redacted"] is True and "hides from the agent" in err.value.message
    # positive control: without the value known, the same edit is an ordinary one
    try:
        compute_guarded(plan, ORIGINAL, Redactor(), "f")
    except SCodeError as plain:
        assert plain.kind is ErrorKind.MATCH_NOT_FOUND and "redacted" not in plain.data


@pytest.mark.parametrize(
    ("raw", "original"),
    [
        # the secret's line replaced whole, without the mark
        (
            {"edits": [{"start_line": 2, "end_line": 2, "new_text": "API_TOKEN=${secret:env:T}"}]},
            ORIGINAL,
        ),
        # another line of a file holding a secret
        ({"edits": [{"old_text": "b = 2", "new_text": "b = 3"}]}, ORIGINAL),
        # a file that holds no known value may be given the mark (docs about redaction)
        ({"edits": [{"old_text": "b = 2", "new_text": f"shown as {MARK}"}]}, "a = 1\nb = 2\n"),
        # a mark already in the file, moved: no more marks than before
        (
            {
                "edits": [
                    {"old_text": f"c = {MARK}\n", "new_text": ""},
                    {"old_text": "a = 1", "new_text": f"c = {MARK}"},
                ]
            },
            ORIGINAL + f"c = {MARK}\n",
        ),
    ],
)
def test_edits_around_a_hidden_secret_go_through(raw: dict[str, Any], original: str) -> None:
    plan = _plan({"path": "f", "expected_revision": REV, **raw})
    new = compute_guarded(plan, original, Redactor([VALUE]), "f")
    assert new != original


async def test_the_dispatch_hides_known_values_in_results_and_errors(tmp_path: Path) -> None:
    from s_code.session.session import Session
    from s_code.tools.dispatch import call
    from s_code.tools.registry import Registry, ToolDef
    from s_code.workspace.folders import Folders

    async def leaks(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        return {"text": f"{VALUE} {FIXTURE}", VALUE.encode().hex(): 1}

    async def fails(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        raise SCodeError(ErrorKind.NOT_FOUND, f"no {VALUE} here", seen=[VALUE])

    schema: dict[str, Any] = {"type": "object"}
    host = ToolDef("mcp__s__leaks", "", leaks, True, schema=schema, redact_result=True)
    other = ToolDef("leaks", "", leaks, True, schema=schema)  # not a host process's
    broken = ToolDef("fails", "", fails, True, schema=schema)
    session = Session(
        folders=Folders.open([(str(tmp_path), None)]),
        registry=Registry().extend([host, other, broken]),
        redactor=Redactor([VALUE]),
    )
    try:
        assert await call(session, "mcp__s__leaks", {}) == {"text": f"{MARK} {MARK}", MARK: 1}
        assert await call(session, "leaks", {}) == {"text": f"{MARK} {FIXTURE}", MARK: 1}
        with pytest.raises(SCodeError) as err:
            await call(session, "fails", {})
        assert err.value.message == f"no {MARK} here" and err.value.data == {"seen": [MARK]}
        session.redactor = Redactor()  # positive control: nothing known, nothing hidden
        assert VALUE in str(await call(session, "leaks", {}))
    finally:
        session.close()

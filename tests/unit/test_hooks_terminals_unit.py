"""The pure parts of hooks and terminals: hooks.json parsing (the docs' sample included), what a
hook's outcome means, the head-and-tail buffer's cursors, the idle flush of the stream redactor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from s_code.hooks.config import MAX_COMMAND, HookConfig, parse_hooks
from s_code.hooks.run import Outcome, verdict
from s_code.hostproc.entry import DEFAULT_PATH, canonical, host_path
from s_code.redaction import Redactor, StreamRedactor
from s_code.terminals.buffer import HeadTail

DOC = Path(__file__).resolve().parents[2] / "docs" / "host-processes.md"


def _hooks_sample() -> str:
    text = DOC.read_text()
    start = text.index('```json\n{\n  "hooks"') + len("```json\n")
    return text[start : text.index("```", start)]


def test_the_docs_hooks_sample_parses() -> None:
    hooks = parse_hooks(_hooks_sample().encode(), "workspace", "hooks.json")
    assert [h.name for h in hooks] == [
        "PreToolUse.0.0",
        "PreToolUse.0.1",
        "PostToolUse.0.0",
        "SessionStart.0.0",
    ]
    assert all(h.problem is None for h in hooks)
    assert hooks[1].argv == ("python3", "scripts/audit.py") and hooks[1].on_failure == "allow"
    assert hooks[1].env == (("AUDIT_TOKEN", "${secret:keyring:audit/bot}"),)
    assert hooks[0].covers("apply_patch") and not hooks[0].covers("apply_patch_x")
    assert hooks[2].covers("mcp__notes__read") and not hooks[2].covers("read_file")
    assert not hooks[3].covers("read_file")  # not a gating event


@pytest.mark.parametrize(
    ("hook", "problem"),
    [
        ({"command": "x", "extra": 1}, "unknown key"),
        ({"type": "prompt", "command": "x"}, "only command hooks"),
        ({"command": "x", "argv": ["x"]}, "exactly one"),
        ({"argv": []}, "non-empty array"),
        ({"command": "x", "timeout": 0}, "timeout"),
        ({"command": "x", "onFailure": "maybe"}, "onFailure"),
        ({"command": "x", "env": ["T=1"]}, "hooks.PreToolUse.0.hooks.0.env must map names"),
        ({"command": "x", "env": {"A=B": "1"}}, "env.A=B: not a valid variable"),
        ({"command": "x", "env": {"T": "${secret:env:}"}}, "env.T: malformed credential handle"),
        ({"command": "x", "env": {"${secret:env:T}": "1"}}, "may stand only in env values"),
        ({"command": "./x.sh ${secret:env:T}"}, "hooks.0.command: a credential handle may not"),
        ({"argv": ["./x.py", "--t", "${secret:env:T}"]}, "hooks.0.argv.2: a credential handle"),
        ({"argv": ["/usr/bin/env", "T=${secret:env:T}", "./x.py"]}, "argv.1: a credential"),
    ],
)
def test_a_broken_hook_is_kept_failed_with_its_reason(
    hook: dict[str, object], problem: str
) -> None:
    data = json.dumps({"hooks": {"PreToolUse": [{"matcher": "x", "hooks": [hook]}]}}).encode()
    (found,) = parse_hooks(data, "user", "hooks.json")
    assert found.problem is not None and problem in found.problem
    assert found.covers("x") and not found.covers("y")  # it still blocks what it covers


def test_a_bad_matcher_covers_every_tool() -> None:
    data = json.dumps({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]}})
    (found,) = parse_hooks(data.encode(), "user", "hooks.json")
    assert found.problem and found.covers("anything")
    assert HookConfig("h", "user", "f", "*", problem="unreadable").covers("read_file")


@pytest.mark.parametrize(
    ("outcome", "decision"),
    [
        (Outcome(0, "", ""), "allow"),
        (Outcome(0, "some text", ""), "allow"),
        (Outcome(2, "", "no"), "deny"),
        (Outcome(1, "", "boom"), "failed"),
        (Outcome(127, "", "not found"), "failed"),
        (Outcome(None, "", "", timed_out=True), "failed"),
        (Outcome(None, "", "", error="could not start"), "failed"),
        (Outcome(0, '{"decision": "ask", "reason": "r"}', ""), "ask"),
        (Outcome(0, '{"decision": "block"}', ""), "deny"),
        (Outcome(0, '{"hookSpecificOutput": {"permissionDecision": "deny"}}', ""), "deny"),
        (Outcome(0, '{"decision": "maybe"}', ""), "failed"),
        (Outcome(0, "{not json", ""), "failed"),
        # the second review: decisions a hook meant that once read as "allow"
        (Outcome(0, '\ufeff{"decision": "deny"}', ""), "deny"),
        (Outcome(0, 'checking...\n{"decision": "deny"}', ""), "deny"),
        (
            Outcome(
                0, '{"decision": "deny", "hookSpecificOutput": {"permissionDecision": null}}', ""
            ),
            "deny",
        ),
        (
            Outcome(
                0, '{"decision": "deny", "hookSpecificOutput": {"permissionDecision": "allow"}}', ""
            ),
            "deny",
        ),
        (Outcome(0, '{"continue": false, "stopReason": "no"}', ""), "deny"),
        (Outcome(0, 'log "decision": "deny" broken', ""), "failed"),
    ],
)
def test_what_an_outcome_decides(outcome: Outcome, decision: str) -> None:
    assert verdict(outcome, 5).decision == decision


DENY = '{"decision": "deny", "reason": "no"}'


@pytest.mark.parametrize(
    ("outcome", "decision"),
    [
        # stdout cut at the limit on exit 0: the decision may be in what was dropped
        (Outcome(0, "log line […]", "", stdout_cut=True), "failed"),
        (Outcome(0, '{"decision": "allow"} […]', "", stdout_cut=True), "failed"),
        (Outcome(0, DENY + "\nmore […]", "", stdout_cut=True), "failed"),
        # exit 2 is a deny whatever was cut; another exit is a failure anyway
        (Outcome(2, "x […]", "reason […]", stdout_cut=True, stderr_cut=True), "deny"),
        (Outcome(1, "x […]", "", stdout_cut=True), "failed"),
        # stderr is not read on exit 0: a long one changes nothing
        (Outcome(0, "", "log […]", stderr_cut=True), "allow"),
        (Outcome(0, DENY, "log […]", stderr_cut=True), "deny"),
    ],
)
def test_a_cut_output_decides_only_where_the_decision_is_whole(
    outcome: Outcome, decision: str
) -> None:
    found = verdict(outcome, 5)
    assert found.decision == decision
    if decision == "failed" and outcome.code == 0:
        assert found.reason.startswith("its output was larger than 64 KiB and was cut;")


@pytest.mark.parametrize(
    ("matcher", "allowed"),
    [
        ("apply_patch|write_file", True),
        ("mcp__.*", True),
        ("^read_.*$", True),
        ("[a-z_]+", True),
        ("(\\w|\\w|\\w|\\w)*X", False),  # the review's: seconds per call, growing with names
        ("(a+)+b", False),
        (".*.*.*.*X", False),
    ],
)
def test_matchers_are_tool_name_patterns_that_cannot_backtrack_for_long(
    matcher: str, allowed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused matcher is never handed to the regex engine (it covers every tool); an allowed
    one is. Counted, not timed: the engine's calls are recorded."""
    import re
    import types

    from s_code.hooks import config

    ran: list[tuple[str, str]] = []

    def fullmatch(pattern: str, text: str) -> None:  # recorded, not run
        ran.append((pattern, text))

    data = json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [{"command": "x"}]}]}}
    )
    (found,) = parse_hooks(data.encode(), "user", "hooks.json")
    assert (found.problem is None) is allowed, found.problem
    monkeypatch.setattr(config, "re", types.SimpleNamespace(fullmatch=fullmatch, error=re.error))
    name = "a" * 40 + "_tool_with_a_long_name"
    covered = found.covers(name)
    if allowed:
        assert ran == [(matcher, name)]  # an allowed matcher is what decides
    else:
        assert covered and ran == []  # a refused matcher is never run: it covers all
        # positive control: without the check the same matcher reaches the engine (where
        # "(a+)+b" on 22 a's backtracks ~2^22 times)
        monkeypatch.setattr(config, "simple_matcher", lambda m: True)
        found.covers(name)
        assert ran == [(matcher, name)]


def test_head_and_tail_cursors() -> None:
    buf = HeadTail(head=10, tail=20)
    stream = bytes(range(48, 48 + 50))  # 50 ASCII bytes
    for i in range(0, 50, 7):
        buf.append(stream[i : i + 7])
    assert buf.total == 50 and buf.dropped == 20
    first = buf.read(0, 100)
    assert first.output.encode() == stream[:10] and first.cursor == 10 and first.truncated
    second = buf.read(first.cursor, 100)
    assert second.omitted_bytes == 20 and second.output.encode() == stream[30:]
    assert second.cursor == 50 and not second.truncated
    assert buf.read(35, 5).output.encode() == stream[35:40]


def test_a_read_never_splits_a_character() -> None:
    buf = HeadTail(head=4, tail=9)
    buf.append("ééééééééé".encode())  # 18 bytes: the drop cuts inside a character
    part = buf.read(4, 100)
    assert "\ufffd" not in part.output and part.cursor == 18
    assert part.omitted_bytes == 6  # 5 dropped, and the half character after them
    assert buf.read(0, 3).output == "é"


def test_the_idle_flush_shows_a_prompt_and_holds_what_may_be_a_secret() -> None:
    secret = "s3cr3t-value-0123456789"
    stream = StreamRedactor(Redactor([secret]))
    assert stream.feed("name? ") == "" and stream.flush_idle() == "name? "
    assert stream.feed("here s3cr3t-va") == ""
    assert stream.flush_idle() == "here "  # the start of the value waits
    assert stream.feed("lue-0123456789\n") == "[REDACTED]\n"
    assert stream.feed("api_token=abc") == "" and stream.flush_idle() == ""  # a name, a value?


def test_the_idle_flush_never_shows_a_value_but_its_last_character() -> None:
    """Issue 29: the value's last character ("6") starts its hex form ("636f…"): the old idle
    flush held that character only and showed the rest."""
    secret = "correct-horse-battery-6"
    stream = StreamRedactor(Redactor([secret]))
    assert stream.feed("here " + secret) == "" and stream.flush_idle() == "here "
    assert stream.flush_idle() == ""  # a second pause with nothing new shows nothing either
    assert stream.feed(" and on\n") == "[REDACTED] and on\n"
    # a token, or a name that may become one, waits at a pause: "rk" of "rk_live_…"
    stream = StreamRedactor(Redactor())
    assert stream.feed("next? rk") == "" and stream.flush_idle() == "next? "
    assert stream.feed("_live_" + "4eC39HqLyjWDarjtT1zd" + "\n") == "[REDACTED]\n"
    # a prompt with nothing that could grow into a secret is shown whole
    assert stream.feed("Continue? [y/N]") == "" and stream.flush_idle() == "Continue? [y/N]"


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("./hooks/a.sh;./hooks/b.sh", {"/ws/hooks/a.sh", "/ws/hooks/b.sh"}),
        ('bash -c "./hooks/y.sh z"', {"/ws/hooks/y.sh"}),
        ("echo $(./hooks/x.sh) `./hooks/w.sh`", {"/ws/hooks/x.sh", "/ws/hooks/w.sh"}),
        (
            '"$CLAUDE_PROJECT_DIR"/h/c.sh && ${S_CODE_PROJECT_DIR}/h/d.sh',
            {"/ws/h/c.sh", "/ws/h/d.sh"},
        ),
        ("python3 hooks/g.py|tee log/out", {"/ws/hooks/g.py", "/ws/log/out"}),
    ],
)
def test_every_file_a_shell_line_names_is_found(line: str, named: set[str]) -> None:
    """What the shell would run is bound to the trust and held from the agent, however the line
    strings its commands together."""
    from s_code.hooks.paths import named_paths

    cfg = HookConfig("PreToolUse.0.0", "workspace", "hooks.json", "PreToolUse", command=line)
    assert named <= set(named_paths(cfg, "/ws", "/ws", os.environ["PATH"]))


# -- what an approval cannot see is said in its preview ------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("make", "lint"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "FOO=1 make check && ./x.sh"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "cd web; npm run lint | tee out"), "npm runs what package.json says"),
        (("/bin/sh", "-c", "(cd a && python3 -m pkg.hook)"), "python3 -m pkg.hook runs the module"),
        (("python3.11", "-m", "pkg"), "python3.11 -m pkg runs the module"),
        (("python3", "-I", "-m", "pkg"), "python3 -m pkg runs the module"),
        (("/bin/sh", "-c", "echo start\nmake"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "command make"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "nice -n 5 timeout 60 make"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "git ls-files | xargs make"), "make runs what its Makefile says"),
        (("/bin/sh", "-c", "{ make; }"), "make runs what its Makefile says"),
        (("bash", "-lc", "make"), "make runs what its Makefile says"),
        (("sh", "-e", "-c", "make"), "make runs what its Makefile says"),
        (("sh", "-c", "sh -c 'npm test'"), "npm runs what package.json says"),
        (("env", "CI=1", "make"), "make runs what its Makefile says"),
        (("pytest", "-q"), "pytest runs what conftest.py"),
    ],
)
def test_a_task_runner_or_a_module_is_noted_as_outside_the_approval(
    argv: tuple[str, ...], says: str, tmp_path: Path
) -> None:
    entry = canonical("hook", "h", "workspace", "hooks.json", argv, str(tmp_path), (), "/usr/bin")
    assert any(note.startswith(says) for note in entry.notes), entry.notes


@pytest.mark.parametrize(
    "argv",
    [
        ("/bin/sh", "-c", "./hooks/check.sh"),
        ("/bin/sh", "-c", "echo make  # make"),
        ("python3", "hooks/check.py"),
        ("/bin/sh", "-c", '"unterminated'),
        ("/bin/sh", "-c", 'echo "one\nmake"'),
        ("env",),
    ],
)
def test_a_named_script_has_no_such_note(argv: tuple[str, ...], tmp_path: Path) -> None:
    entry = canonical("hook", "h", "workspace", "hooks.json", argv, str(tmp_path), (), "/usr/bin")
    assert not [n for n in entry.notes if "not part of this approval" in n]


def test_a_credential_in_an_argument_is_refused_and_one_in_env_is_bound(tmp_path: Path) -> None:
    from s_code.protocol.errors import ErrorKind, SCodeError

    handle = "${secret:env:API_TOKEN}"
    for argv in (("/bin/true", "--token", handle), ("/usr/bin/env", f"T={handle}", "/bin/true")):
        with pytest.raises(SCodeError) as err:
            canonical("mcp", "m", "user", "mcp.json", argv, str(tmp_path), (), "/")
        assert err.value.kind == ErrorKind.INVALID_PARAMS
        assert err.value.data["field"] == f"argv.{argv.index(next(a for a in argv if handle in a))}"
        assert "pass the secret in env" in err.value.message
    in_env = canonical(
        "mcp", "m", "user", "mcp.json", ("/bin/true",), str(tmp_path), (("TOKEN", handle),), "/"
    )
    assert in_env.handles == (handle,)
    other = canonical(
        "mcp", "m", "user", "mcp.json", ("/bin/true",), str(tmp_path), (("TOKEN", "x"),), "/"
    )
    assert other.hash != in_env.hash  # the env as written is bound


def test_a_shell_line_too_long_to_read_is_said_so_and_costs_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past 64 KiB a shell line is not lexed at all (shlex is quadratic: a 2 MB line took
    minutes): counted, not timed."""
    import shlex
    import types

    from s_code.hostproc import entry

    lexed: list[int] = []

    def lexer(line: str, *args: object, **kwargs: object) -> shlex.shlex:
        lexed.append(len(line))
        return shlex.shlex(line, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(entry, "shlex", types.SimpleNamespace(shlex=lexer))

    def hook(line: str) -> entry.Canonical:
        argv = ("sh", "-c", line)
        return canonical("hook", "h", "workspace", "hooks.json", argv, str(tmp_path), (), "/")

    too_long = hook("(" * 2_000_000)
    assert any("was not read for what it runs" in note for note in too_long.notes)
    assert lexed == []
    # positive control: a line within the bound is lexed, and read for what it runs
    assert any("runs what its Makefile says" in note for note in hook("make build").notes)
    assert lexed == [len("make build")]


def test_host_path_drops_every_entry_the_agent_could_write(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".venv" / "bin").mkdir(parents=True)
    inside = tmp_path / "link-to-ws"
    inside.symlink_to(ws)
    value = f".::bin:{ws}/.venv/bin:{inside}/x:/proc/self/cwd/bin:/dev/fd/3:/usr/bin:/bin:/usr/bin"
    assert host_path([str(ws)], value) == "/usr/bin:/bin"
    odd = "//proc/self/cwd/bin:/./proc/self/cwd:/usr/../usr/bin:/usr//bin"
    assert host_path([str(ws)], odd) == "/usr//bin"
    outside = tmp_path / "venvs" / "proj" / "bin"
    outside.mkdir(parents=True)
    (ws / "env").symlink_to(outside.parent)  # leads outside today; the agent can repoint it
    assert host_path([str(ws)], f"{ws}/env/bin:/bin") == "/bin"
    assert host_path([str(ws)], f"{outside}:/bin") == f"{outside}:/bin"  # control
    assert host_path([str(ws)], ".:bin") == DEFAULT_PATH  # never "": that is the current folder


def test_a_hook_command_or_argument_too_long_is_a_clear_error() -> None:
    for hook in (
        {"command": "x" * (MAX_COMMAND + 1)},
        {"argv": ["/bin/true", "x" * (MAX_COMMAND + 1)]},
    ):
        data = json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}).encode()
        (cfg,) = parse_hooks(data, "workspace", "/ws/.s-code/hooks.json")
        assert cfg.problem is not None and f"at most {MAX_COMMAND} characters" in cfg.problem


@pytest.mark.parametrize("bad", ["x" * (128 * 1024 + 1), "a\0b"])
def test_terminal_start_refuses_an_argument_too_long_or_with_a_nul(bad: str) -> None:
    from s_code.protocol.errors import SCodeError
    from s_code.tools.builtin import default_registry

    tool = default_registry().get("terminal_start")
    with pytest.raises(SCodeError) as err:
        tool.parse({"command": ["/bin/echo", bad]})
    assert err.value.kind.value == "invalid_params" and err.value.data["field"] == "command.1"
    assert tool.parse({"command": ["/bin/echo", "fine"]}) is not None  # control

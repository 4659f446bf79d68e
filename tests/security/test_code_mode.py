"""SECURITY.md H9: code mode cannot reach a writing tool, the file system, the network or timers,
and its time, memory and call limits hold against a hostile script.

The runner is driven directly (``codemode.runner.run``) with a host over the real registry's
read-only rule, so each limit can be lowered and each defence switched off: every test has a
positive control showing that the same attack gets further without the defence.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.polling import until_async

from s_code.codemode import workers
from s_code.codemode.limits import Limits
from s_code.codemode.runner import Outcome, run
from s_code.codemode.workers import Pool, Worker
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.tools.builtin import default_registry
from s_code.tools.code_tools import may_call

REGISTRY = default_registry()


class Host:
    """The tool layer's rule (``may_call`` over the real registry); a child call returns its
    name and arguments, or a payload of ``size`` characters. ``permissive`` switches the
    read-only rule off (the positive control)."""

    def __init__(self, *, permissive: bool = False) -> None:
        self.permissive = permissive
        self.ran: list[str] = []
        self.notes: list[dict[str, Any]] = []

    def check(self, name: str) -> None:
        tool = REGISTRY.get(name)
        if not self.permissive and not may_call(tool):
            raise SCodeError(ErrorKind.TOOL_NOT_READ_ONLY, f"{name} is not read-only", name=name)

    async def call(self, name: str, arguments: Any) -> Any:
        self.ran.append(name)
        size = arguments.get("size") if isinstance(arguments, dict) else None
        if isinstance(size, int):
            return {"payload": "y" * size}
        return {"name": name, "arguments": arguments}

    def redact(self, value: Any) -> Any:
        return value

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append(params)


class Watched(Pool):
    """Cold workers (no spare), each remembered so the test can look at the process."""

    def __init__(self) -> None:
        super().__init__(warm=False)
        self.taken: list[Worker] = []

    async def take(self) -> Worker:
        worker = await super().take()
        self.taken.append(worker)
        return worker


@pytest.fixture
async def pool() -> AsyncIterator[Watched]:
    made = Watched()
    yield made
    made.close()


async def attempt(pool: Pool, code: str, host: Host | None = None, **limits: Any) -> Any:
    """The run's outcome, or the error it ended with."""
    try:
        return await run(pool, host or Host(), code, Limits(**limits))
    except SCodeError as err:
        return err


async def _gone(pid: int, within: float = 30.0) -> bool:
    """Killed and reaped (the run's reply does not wait for the reaping), polled ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)


# -- writing tools ---------------------------------------------------------------------------


WRITERS = sorted(t.name for t in REGISTRY if not may_call(t))


def test_every_tool_that_is_not_a_read_is_outside_code_mode() -> None:
    assert set(WRITERS) >= {"apply_patch", "run_command", "update_plan", "code_mode"}
    assert {t.name for t in REGISTRY if may_call(t)} <= {
        "read_file",
        "list_files",
        "search_text",
        "git_status",
        "git_diff",
        "git_log",
        "git_show",
        "git_blame",
        "tool_search",
    }


@pytest.mark.parametrize("tool", WRITERS)
async def test_a_writing_tool_is_refused_by_any_spelling(pool: Watched, tool: str) -> None:
    host = Host()
    code = f"""
        const t = tools, n = "{tool}";
        for (const f of [() => t[n]({{}}), () => t["{tool}"].call(null, {{}}),
                         () => Reflect.get(t, n)({{}}), () => t[n].apply(t, [{{}}])]) {{
            try {{ f(); }} catch (e) {{ console.log(e.kind); }}
        }}
        return "done";
    """
    found = await attempt(pool, code, host)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.TOOL_NOT_READ_ONLY
    assert host.ran == []
    assert [c["status"] for c in found.data["calls"]] == ["refused"] * 4
    # positive control: with the read-only rule switched off, the same call reaches the tool
    control = Host(permissive=True)
    allowed = await attempt(pool, f"return tools.{tool}({{}})", control)
    assert isinstance(allowed, Outcome) and control.ran == [tool]


async def test_a_refusal_stands_even_when_the_script_keeps_going(pool: Watched) -> None:
    code = """
        try { tools.apply_patch({}); } catch (e) {}
        try { return tools.read_file({ path: "a" }); } catch (e) { return e.kind; }
    """
    host = Host()
    found = await attempt(pool, code, host)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.TOOL_NOT_READ_ONLY
    assert host.ran == []  # once refused, no further call reaches a tool
    assert [c["status"] for c in found.data["calls"]] == ["refused", "refused"]


# -- the file system, the network, timers, processes -------------------------------------------


async def test_the_context_has_no_file_network_timer_or_module_access(pool: Watched) -> None:
    code = """
        const g = Object.getOwnPropertyNames(globalThis);
        let mod = "";
        try { await import("/etc/passwd"); } catch (e) { mod = String(e); }
        let req = "";
        try { require("fs"); } catch (e) { req = e.name; }
        return { g, mod, req };
    """
    found = await attempt(pool, code)
    assert isinstance(found, Outcome), found
    names = set(found.result["g"])
    for banned in (
        "setTimeout",
        "setInterval",
        "fetch",
        "require",
        "std",
        "os",
        "process",
        "print",
    ):
        assert banned not in names
    assert not any(n.startswith("__sc_") for n in names)  # the bridge is not reachable
    assert "could not load module" in found.result["mod"]
    assert found.result["req"] == "ReferenceError"


def _worker_probe(limited: bool) -> str:
    """What native code in the worker could do after its limits are set (or without them)."""
    probe = (
        "import json, socket, sys\n"
        f"sys.path.insert(0, {os.path.dirname(workers.WORKER)!r})\n"
        "import worker\n"
        f"if {limited}: worker._limit({{'cpu_s': 5, 'memory': 64 << 20}})\n"
        "found = []\n"
        "for what, act in (('open', lambda: open('/etc/passwd').close()),\n"
        "                  ('socket', lambda: socket.socket().close())):\n"
        "    try:\n"
        "        act(); found.append(what)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps(found))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip()


def test_the_worker_cannot_open_a_file_or_a_socket() -> None:
    assert _worker_probe(True) == "[]"
    assert _worker_probe(False) == '["open", "socket"]'  # positive control


async def test_the_worker_inherits_no_secret_and_holds_no_file(
    pool: Watched, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("S_CODE_TEST_API_TOKEN", "tok-6d1f0c2b9e8a7")
    host = Host()
    code = "tools.read_file({ path: 'a' }); while (true) {}"
    task = asyncio.ensure_future(attempt(pool, code, host, timeout_ms=3000))
    await until_async(lambda: host.ran, what="the script's first call")  # the worker runs it
    pid = pool.taken[0].pid
    assert os.environ["S_CODE_TEST_API_TOKEN"] == "tok-6d1f0c2b9e8a7"  # the sidecar has it
    assert Path(f"/proc/{pid}/environ").read_bytes() == b"LC_ALL=C.UTF-8\0"  # the worker not
    assert sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")) == [0, 1, 2]
    limits = {
        line[:26].strip(): line[26:].split()[:2]
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    }
    assert limits["Max open files"] == ["3", "3"]
    assert limits["Max file size"] == ["0", "0"]
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert os.getpgid(pid) == pid  # a process group of its own, killed as one
    await task


# -- limits: each holds, and the attack gets further with it raised -----------------------------


async def test_an_infinite_loop_is_killed_at_the_deadline(pool: Watched) -> None:
    found = await attempt(pool, "while (true) {}", timeout_ms=400)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.TIMEOUT
    assert await _gone(pool.taken[-1].pid)  # killed and reaped
    # positive control: a loop that ends after 1 s finishes when the deadline allows it
    code = "const end = Date.now() + 1000; while (Date.now() < end) {} return 'ran'"
    assert (await attempt(pool, code, timeout_ms=400)).kind == ErrorKind.TIMEOUT
    ran = await attempt(pool, code, timeout_ms=5000)
    assert isinstance(ran, Outcome) and ran.result == "ran"


async def test_a_loop_inside_a_child_calls_callback_is_killed(pool: Watched) -> None:
    code = "tools.read_file({ path: 'a', get start_line() { while (true) {} } })"
    found = await attempt(pool, code, timeout_ms=500)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.TIMEOUT
    assert await _gone(pool.taken[-1].pid)


BOMB = "const a = []; for (let i = 0; i < 40000; i++) a.push('x'.repeat(1000) + i); return a.length"


async def test_a_memory_bomb_stops_at_the_heap_limit(pool: Watched) -> None:
    found = await attempt(pool, BOMB, memory_bytes=16 << 20)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "memory"
    # positive control: the same 40 MB fit under a higher limit
    ran = await attempt(pool, BOMB, memory_bytes=256 << 20)
    assert isinstance(ran, Outcome) and ran.result == 40000


DEEP = "function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } return f(5000)"


async def test_deep_recursion_stops_at_the_stack_limit(pool: Watched) -> None:
    found = await attempt(pool, DEEP, stack_bytes=64 << 10)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "stack"
    ran = await attempt(pool, DEEP, stack_bytes=4 << 20)  # positive control
    assert isinstance(ran, Outcome) and ran.result == 5000


MANY = "let n = 0; for (let i = 0; i < 1e6; i++) { tools.read_file({ path: 'a' }); n++; } return n"


async def test_a_million_child_calls_stop_at_the_call_limit(pool: Watched) -> None:
    host = Host()
    found = await attempt(pool, MANY.replace("1e6", "1000000"), host, max_calls=50)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "calls" and len(host.ran) == 50
    assert len(found.data["calls"]) == 50 and len(host.notes) == 100  # all recorded
    control = Host()  # positive control: 300 calls go through with the limit raised
    ran = await attempt(pool, MANY.replace("1e6", "300"), control, max_calls=1000)
    assert isinstance(ran, Outcome) and ran.result == 300 and len(control.ran) == 300


async def test_a_large_result_is_not_passed_in(pool: Watched) -> None:
    code = "return tools.read_file({ size: 50000 }).payload.length"
    found = await attempt(pool, code, max_result_chars=10_000)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "result_size"
    ran = await attempt(pool, code, max_result_chars=100_000)  # positive control
    assert isinstance(ran, Outcome) and ran.result == 50000


async def test_huge_arguments_stop_the_run(pool: Watched) -> None:
    code = "return tools.read_file({ path: 'x'.repeat(300000) }).name"
    found = await attempt(pool, code, max_args_chars=100_000)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "arguments_size"
    ran = await attempt(pool, code, max_args_chars=1_000_000)  # positive control
    assert isinstance(ran, Outcome) and ran.result == "read_file"


async def test_output_keeps_head_and_tail(pool: Watched) -> None:
    code = "for (let i = 0; i < 100000; i++) console.log('line ' + i); return 'x'.repeat(9e6)"
    found = await attempt(pool, code, max_output_chars=1000)
    assert isinstance(found, Outcome) and found.truncated
    assert len(found.result) < 1100 and len(found.logs) < 1100
    assert found.logs.startswith("line 0\n") and found.logs.endswith("line 99999\n")
    ran = await attempt(pool, code, max_output_chars=20_000_000)  # positive control
    assert isinstance(ran, Outcome) and len(ran.result) == 9_000_000


async def test_the_spare_worker_ends_with_the_session() -> None:
    warm = Pool()
    found = await run(warm, Host(), "return 1", Limits())
    assert found.result == 1
    for _ in range(200):
        if warm._making is not None and warm._making.done():
            break
        await asyncio.sleep(0.01)
    spare = warm._making.result() if warm._making is not None else None
    assert spare is not None and not await _gone(spare.pid, within=0)
    warm.close()
    assert await _gone(spare.pid)


# -- the review's attacks (each was tried against the runner; what it found is fixed) ---------


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("return tools.read_file(JSON.parse('['.repeat(5000) + ']'.repeat(5000)))", "code_error"),
        ("const a = {}; a.a = a; return a", "code_error"),
        ("return 10n", "code_error"),
        ("throw new Error('e'.repeat(20e6))", "code_error"),
        (
            "new Int32Array(new SharedArrayBuffer(16)).fill(0); Atomics.wait(new Int32Array("
            "new SharedArrayBuffer(16)), 0, 0)",
            "code_error",
        ),
        ("return tools.read_file(new Proxy({}, { ownKeys() { for (;;) {} } }))", "timeout"),
        ("throw { get name() { for (;;) {} } }", "timeout"),
        ("(async function f() { for (;;) await null })(); return 1", "timeout"),
    ],
)
async def test_hostile_scripts_end_with_an_error_in_time(
    pool: Watched, code: str, kind: str
) -> None:
    host = Host()
    found = await attempt(pool, code, host, timeout_ms=1000)
    assert isinstance(found, SCodeError) and found.kind.value == kind, found
    assert host.ran == []
    assert len(found.message) < 2200  # a huge error message is cut


async def test_a_huge_log_line_is_cut_in_the_worker(pool: Watched) -> None:
    found = await attempt(pool, "console.log('x'.repeat(30e6)); return 1", timeout_ms=3000)
    assert isinstance(found, Outcome) and found.result == 1 and found.truncated
    assert len(found.logs) < 33_000


async def test_lone_surrogates_never_reach_a_tool(pool: Watched) -> None:
    host = Host()
    found = await attempt(pool, "return tools.read_file({ path: 'a\\ud800' }).arguments", host)
    assert isinstance(found, Outcome)
    found.result["path"].encode("utf-8")  # replaced, encodable


async def test_a_secret_in_a_tool_name_is_redacted() -> None:
    from s_code.redaction import Redactor

    class Redacting(Host):
        def redact(self, value: Any) -> Any:
            return Redactor().redact_json(value)

    secret = "ghp_" + "Zq7Lx2Vb9Nc4Md8Kf3Hj6Gt1Rs5Wp0Ya2Ue7"
    host = Redacting()
    pool = Pool(warm=False)
    try:
        found = await run(pool, host, f"try {{ tools['{secret}']({{}}) }} catch (e) {{}}")
    finally:
        pool.close()
    assert secret not in repr(host.notes) and secret not in repr([c.to_wire() for c in found.calls])


async def test_runs_at_once_are_bounded_per_session() -> None:
    """Eight runs asked for at once: never more than four run together (each says when it ran)."""
    assert 2 <= await _most_at_once(Pool()) <= Pool.MAX_RUNNING  # concurrent, but bounded

    class Unbounded(Pool):  # positive control: without the bound, all eight run together
        MAX_RUNNING = 8

    assert await _most_at_once(Unbounded()) > Pool.MAX_RUNNING


async def _most_at_once(pool: Pool) -> int:
    spin = "const t0 = Date.now(); while (Date.now() < t0 + 300) {} return [t0, Date.now()]"
    try:
        found = await asyncio.gather(*(run(pool, Host(), spin) for _ in range(8)))
    finally:
        pool.close()
    spans = [f.result for f in found]
    return max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)


# -- the second review: messages forged from JavaScript ---------------------------------------

# The bootstrap's helpers use String.prototype.replace, which defers to RegExp.prototype's
# Symbol.replace: a script that redefines it chooses the text those helpers produce.
HIJACK = """
const real = RegExp.prototype[Symbol.replace];
RegExp.prototype[Symbol.replace] = function (s, r) {
  return String(s).split('"PLACEHOLDER"').join('NaN');
};
"""


def _finite(value: Any) -> bool:
    """No NaN or Infinity anywhere (a client's JSON parser rejects them)."""
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


async def test_a_script_cannot_put_nan_on_the_wire(pool: Watched) -> None:
    host = Host()
    code = HIJACK + "tools.read_file({ path: 'PLACEHOLDER' }); return ['PLACEHOLDER'];"
    found = await attempt(pool, code, host)
    wire = found.to_wire() if isinstance(found, Outcome) else found.data
    assert _finite(wire) and all(_finite(note) for note in host.notes)
    assert host.ran == []  # the forged arguments never reached a tool
    # positive control: the redefinition does reach the text the bootstrap's helpers make
    probe = HIJACK + "return String('a\"PLACEHOLDER\"b').replace(/x/g, '')"
    ran = await attempt(pool, probe)
    assert isinstance(ran, Outcome) and ran.result == "aNaNb"


async def test_the_output_limit_holds_when_the_script_leaves_its_function(pool: Watched) -> None:
    # closing the wrapper function early reaches the runner's entry before it is deleted
    escape = (
        "}, globalThis.R = __sc_run); R(1e9, async function () { return 'x'.repeat(600000) });"
        " (async function () {"
    )
    found = await attempt(pool, escape, max_output_chars=1000)
    assert isinstance(found, Outcome | SCodeError)
    if isinstance(found, Outcome) and isinstance(found.result, str):
        assert len(found.result) < 1200
    plain = "return 'x'.repeat(600000)"
    ran = await attempt(pool, plain, max_output_chars=1_000_000)  # positive control
    assert isinstance(ran, Outcome) and len(ran.result) == 600_000


async def test_nesting_is_bounded_with_a_proper_error(pool: Watched) -> None:
    deep = "let a = 1; for (let i = 0; i < 300; i++) a = [a]; return a"
    found = await attempt(pool, deep, max_depth=64)
    assert isinstance(found, SCodeError) and found.kind == ErrorKind.LIMIT_EXCEEDED
    assert found.data["limit"] == "depth" and "calls" in found.data and "run_id" in found.data
    args = "let a = 1; for (let i = 0; i < 300; i++) a = [a]; return tools.read_file({ p: a }).name"
    host = Host()
    found = await attempt(pool, args, host, max_depth=64)
    assert isinstance(found, SCodeError) and found.data["limit"] == "depth"
    assert host.ran == []
    ran = await attempt(pool, args, max_depth=1000)  # positive control
    assert isinstance(ran, Outcome) and ran.result == "read_file"

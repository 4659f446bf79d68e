"""The code-mode worker: one JavaScript run in QuickJS, in a throwaway process.

Started as a script (``python -I -S worker.py <dir of _quickjs>``) so that it imports nothing but
the standard library's ``json``, ``os``, ``select`` and ``resource`` and the QuickJS binding: no
``s_code``, no site packages, no environment. It waits (at most ``IDLE_S``) for one job on stdin,
lowers its own limits, runs the code and exits. The sidecar owns the deadline and kills the
process group; the limits set here (the JavaScript heap and stack, no new file descriptors, no new
processes, CPU time) hold even if the sidecar is gone.

Wire, one JSON object per line. In: the job ``{code, memory, stack, output, cpu_s}``, then the
answer to each child call (``{"ok": result}`` or ``{"error": {kind, message, ...}}``). Out:
``{"t": "call", "name", "args"}`` per child call, and one last ``{"t": "done", ...}`` or
``{"t": "error", ...}``. Nothing else writes to stdout.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import sys
from typing import Any

IDLE_S = 300.0
"""A spare worker that gets no job in this long exits (the sidecar makes a fresh one)."""

BOOT = r"""
(function (g) {
  'use strict';
  const call = g.__sc_call, log = g.__sc_log, done = g.__sc_done, fail = g.__sc_fail;
  const stringify = JSON.stringify, parse = JSON.parse;
  let MAX = 0;
  const apply = Reflect.apply, then = Promise.prototype.then, replace = String.prototype.replace;
  const slice = String.prototype.slice;
  const short = (s, n) => wf(apply(slice, String(s), [0, n]));
  for (const k of ['__sc_call', '__sc_log', '__sc_done', '__sc_fail']) delete g[k];
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const wf = (s) => apply(replace, String(s), [lone, '\ufffd']);
  const text = (v) => {
    if (typeof v === 'string') return v;
    try { const s = stringify(v); return s === undefined ? String(v) : s; }
    catch (e) { return String(v); }
  };
  const part = (s, a, b) => apply(slice, s, [a, b]);
  const cut = (s) => s.length > MAX
    ? [part(s, 0, MAX / 2) + '\n[... ' + (s.length - MAX) + ' characters omitted ...]\n'
       + part(s, s.length - MAX / 2, s.length), s.length - MAX]
    : [s, 0];
  function __sc_tool(name, args) {
    const raw = call(wf(name), wf(stringify(args === undefined ? {} : args)));
    const answer = parse(raw);
    if (answer.error) {
      const err = new Error(answer.error.message);
      err.name = 'ToolError';
      err.kind = answer.error.kind;
      err.data = answer.error;
      throw err;
    }
    return answer.ok;
  }
  const tools = new Proxy(Object.create(null), {
    get(_, name) {
      if (typeof name !== 'string' || name === 'then') return undefined;
      return function __sc_bound(args) { return __sc_tool(name, args); };
    },
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
  });
  const write = (...parts) => {
    const [s, omitted] = cut(parts.map(text).join(' '));
    log(wf(s), omitted);
  };
  const console = Object.freeze(
    { log: write, info: write, warn: write, error: write, debug: write });
  const fixed = (value) => ({ value, enumerable: false, configurable: false, writable: false });
  Object.defineProperty(g, 'tools', fixed(tools));
  Object.defineProperty(g, 'console', fixed(console));
  function __sc_ok(v) {
    try {
      if (v === undefined) return done('none', '', 0);
      if (typeof v === 'string') {
        const [s, omitted] = cut(v);
        return done('string', wf(s), omitted);
      }
      const s = stringify(v);
      if (s === undefined) return done('none', '', 0);
      const [t, omitted] = cut(s);
      return done(omitted ? 'text' : 'json', wf(t), omitted);
    } catch (e) {  // not JSON (a cycle, a BigInt), or a toJSON that threw
      __sc_err(e);
    }
  }
  function __sc_err(e) {
    let name = 'Error', message = '', stack = '', kind = '';
    try { name = String(e && e.name); } catch (_) {}
    try { message = String(e && e.message !== undefined ? e.message : e); } catch (_) {}
    try { stack = String(e && e.stack || ''); } catch (_) {}
    try { kind = String(e && e.kind || ''); } catch (_) {}
    fail(short(name, 200), short(message, 2000), short(stack, 4000), short(kind, 100), e === null);
  }
  g.__sc_run = function __sc_run(max, f) {
    delete g.__sc_run;
    MAX = max;
    apply(then, f(), [__sc_ok, __sc_err]);
  };
})(globalThis);
"""

_FRAME = re.compile(r"at ([^ ]*) ?\(?<input>:(\d+)")


def user_line(stack: str) -> int | None:
    """The line of the first frame that is the user's code (not this file's bootstrap)."""
    for name, line in _FRAME.findall(stack):
        if not name.startswith("__sc_"):
            return int(line)
    return None


class Bounded:
    """Text with its head and tail kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail: list[str] = []
        self.tail_len = 0
        self.omitted = 0

    def add(self, line: str) -> None:
        half = self.limit // 2
        if self.head_len < half:
            room = half - self.head_len
            self.head.append(line[:room])
            self.head_len += min(room, len(line))
            line = line[room:]
            if not line:
                return
        self.tail.append(line)
        self.tail_len += len(line)
        while self.tail_len > half and self.tail:
            drop = self.tail_len - half
            first = self.tail[0]
            if len(first) <= drop:
                self.tail.pop(0)
                self.tail_len -= len(first)
                self.omitted += len(first)
            else:
                self.tail[0] = first[drop:]
                self.tail_len -= drop
                self.omitted += drop

    def text(self) -> str:
        head = "".join(self.head)
        if self.omitted:
            head += f"\n[... {self.omitted} characters omitted ...]\n"
        return head + "".join(self.tail)


def _wf(text: Any) -> str:
    """``text`` as a string with every lone surrogate replaced (U+FFFD): well-formed UTF-8."""
    return str(text).encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(text: str) -> Any:
    """Strict JSON from JavaScript: no NaN or Infinity; ValueError for anything wrong."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _error_answer(message: str) -> str:
    return json.dumps({"error": {"kind": "invalid_params", "message": message}})


class Run:
    """The callables the bootstrap hands JavaScript. Everything JavaScript passes is distrusted
    (a script can redefine what the bootstrap's helpers use, e.g. ``String.prototype.replace``):
    every message is parsed, checked and written here, in Python."""

    def __init__(self) -> None:
        self.logs = Bounded(0)
        self.limit = 0  # the value's text, head and tail kept
        self.outcome: dict[str, Any] | None = None
        self.pending = b""
        self.cut = 0

    def call(self, name: str, args: str) -> str:
        try:
            value = _json(args) if isinstance(args, str) else None
        except ValueError as exc:
            return _error_answer(f"the arguments are not JSON: {exc}")
        if not isinstance(value, dict):
            return _error_answer("the arguments must be an object")
        message = {"t": "call", "name": _wf(name), "args": value}
        _send(_wf(json.dumps(message, ensure_ascii=False, allow_nan=False)))
        answer = self.read_line()
        if answer is None:
            os._exit(3)  # the sidecar is gone
        return answer.decode("utf-8", "replace")

    def read_line(self) -> bytes | None:
        """The next line on stdin (unbuffered reads: nothing is left in a buffer unseen)."""
        while b"\n" not in self.pending:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def log(self, text: str, omitted: int) -> None:
        self.logs.add(_wf(text) + "\n")  # a line cut in JavaScript holds its own marker
        self.cut += max(0, int(omitted)) if isinstance(omitted, (int, float)) else 0

    def done(self, kind: str, text: str, omitted: int) -> None:
        if self.outcome is not None:  # the first outcome stands
            return
        kind = kind if kind in ("none", "string", "text", "json") else "text"
        value = _wf(text)
        if len(value) > self.limit + 100:  # however it got here (the cut adds its marker)
            half = self.limit // 2
            value = value[:half] + "\n[... characters omitted ...]\n" + value[-half:]
            kind, omitted = "text", 1
        elif kind == "json":
            try:
                _json(value)
            except ValueError as exc:
                self.outcome = {
                    "t": "error",
                    "name": "TypeError",
                    "message": f"the returned value is not JSON ({exc})",
                    "line": None,
                }
                return
        cut = max(0, int(omitted)) if isinstance(omitted, (int, float)) else 0
        self.outcome = {"t": "done", "kind": kind, "value": value, "omitted": cut}

    def fail(self, name: str, message: str, stack: str, kind: str, null: bool) -> None:
        if self.outcome is not None:
            return
        if null is True:  # QuickJS throws null when it cannot even make the out-of-memory error
            self.outcome = {"t": "limit", "limit": "memory", "message": "out of memory"}
            return
        self.outcome = {
            "t": "error",
            "name": _wf(name)[:200],
            "message": _wf(message)[:2000],
            "line": user_line(_wf(stack)[:4000]),
            "tool_kind": _wf(kind)[:100] or None,
        }


def _send(line: str) -> None:
    data = (line + "\n").encode("utf-8", "surrogatepass")
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _limit(job: dict[str, Any]) -> None:
    """What holds even without the sidecar: no new file descriptor (so no file, no socket), no
    new process, no file written, a bounded address space and CPU time."""
    for res, value in (
        (resource.RLIMIT_NOFILE, 3),
        (resource.RLIMIT_NPROC, 0),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_CPU, int(job["cpu_s"])),
        (resource.RLIMIT_AS, int(job["memory"]) + 512 * 1024 * 1024),
    ):
        try:  # noqa: SIM105 (contextlib is one more import at every start)
            resource.setrlimit(res, (value, value))
        except (ValueError, OSError):
            pass


def main() -> int:
    sys.path.append(sys.argv[1])
    import _quickjs

    # everything but the job itself is ready before it arrives (a spare waits here)
    ctx = _quickjs.Context()
    run = Run()
    ctx.add_callable("__sc_call", run.call)
    ctx.add_callable("__sc_log", run.log)
    ctx.add_callable("__sc_done", run.done)
    ctx.add_callable("__sc_fail", run.fail)
    ctx.eval(BOOT)
    readable, _, _ = select.select([0], [], [], IDLE_S)
    if not readable:
        return 0
    line = run.read_line()
    if line is None:
        return 0
    job = json.loads(line)
    for fd in range(3, 64):  # nothing but the pipes and stderr
        try:  # noqa: SIM105
            os.close(fd)
        except OSError:
            pass
    _limit(job)
    ctx.set_memory_limit(int(job["memory"]))
    ctx.set_max_stack_size(int(job["stack"]))
    run.logs = Bounded(int(job["output"]))
    run.limit = int(job["output"])
    try:
        ctx.eval(f"__sc_run({int(job['output'])}, async function () {{" + job["code"] + "\n})")
        while ctx.execute_pending_job():
            pass
    except _quickjs.StackOverflow as exc:
        run.outcome = {"t": "limit", "limit": "stack", "message": str(exc).split("\n")[0]}
    except _quickjs.JSException as exc:
        text = str(exc)
        if text.strip() == "null":  # as in fail(): no room for an error object
            text = "InternalError: out of memory"
        first = text.split("\n", 1)[0]
        name, _, message = first.partition(": ")
        where = user_line(text)
        run.outcome = {"t": "error", "name": name[:200], "message": message[:2000], "line": where}
    except Exception as exc:  # the binding's own failure (text it could not convert, say)
        message = str(exc)[:2000]
        run.outcome = {"t": "error", "name": "EngineError", "message": message, "line": None}
    outcome = run.outcome
    if outcome is None:
        outcome = {
            "t": "error",
            "name": "Error",
            "message": "the script's promise never settled",
            "line": None,
        }
    if outcome["t"] == "error" and outcome.get("name") == "InternalError":
        message = outcome.get("message", "")
        if "out of memory" in message or not message.strip():
            # QuickJS out of memory can leave no room even for its message: an empty one
            outcome = {"t": "limit", "limit": "memory", "message": message or "out of memory"}
        elif "stack overflow" in outcome.get("message", ""):
            outcome = {"t": "limit", "limit": "stack", "message": outcome["message"]}
    outcome["logs"] = run.logs.text()
    outcome["logs_omitted"] = run.logs.omitted + run.cut
    _send(_wf(json.dumps(outcome, ensure_ascii=False, allow_nan=False)))
    # No teardown here: the process waits to be killed. Exiting now (freeing the interpreter and
    # the QuickJS heap) would run on the CPU the sidecar is about to read the outcome on; the
    # sidecar kills the process group once it has read it, or closes the pipe.
    while os.read(0, 1 << 16):
        pass
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

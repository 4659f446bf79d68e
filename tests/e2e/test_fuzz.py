"""Random JSON thrown at every ``s-code/*`` method of one real ``s-code serve`` child.

Whatever the params, every request is answered within :data:`REPLY_TIMEOUT`; the reply is a
result or an error whose ``data.kind`` is one of :class:`ErrorKind` (with that kind's code, and
never ``internal``); no reply carries a Python traceback; and the server still answers
``s-code/tools/list`` afterwards.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, currently_in_test_context, given, note, settings
from hypothesis import strategies as st

from s_code.client import StdioClient
from s_code.protocol import methods
from s_code.protocol.errors import ERROR_CODES, ErrorKind
from s_code.tools.builtin import default_registry

REPLY_TIMEOUT = 10.0
KINDS = {k.value for k in ErrorKind}
# Words found in every tool's name, arguments or description (tool_search matches whole words).
BROAD_QUERY = (
    "file files read list search text plan update tool git status diff log show blame patch "
    "apply command run code mode edit workspace path terminal start wait kill write"
)
# Params of the control methods (they publish no schema; PROTOCOL.md names them). Tool params come
# from the server's own inputSchema. Unknown fields are refused by the methods in STRICT_CONTROL.
CONTROL_PARAMS: dict[str, tuple[str, ...]] = {
    methods.TOOLS_LIST: (),
    methods.TOOLS_CALL: ("name", "arguments"),
    methods.PERMISSION_MODE_GET: (),
    methods.PERMISSION_MODE_SET: ("mode",),
    "s-code/turn/begin": (),
    "s-code/turn/end": ("turnId",),
    "s-code/turn/undo": ("turnId",),
    "s-code/sandbox/preview": ("command", "cwd", "network"),
    "s-code/approval/details": ("id",),
}
STRICT_CONTROL = (
    methods.TOOLS_LIST,
    methods.TOOLS_CALL,
    methods.PERMISSION_MODE_GET,
    methods.PERMISSION_MODE_SET,
)
# The fuzzer must never widen what the server may do unasked.
UNSAFE_MODES = ("accept-edits", "workspace")

FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- the server under test ---------------------------------------------------------------------


class Fuzzed:
    """The running server, what it advertised, and a tally of what the fuzzing got back."""

    def __init__(
        self,
        client: StdioClient,
        log_path: Path,
        advertised: list[str],
        described: dict[str, dict[str, Any]],
    ) -> None:
        self.client = client
        self.log_path = log_path
        self.methods = advertised
        self.schemas = {t["method"]: t["inputSchema"] for t in described.values()}
        self.tool_methods = {name: t["method"] for name, t in described.items()}
        self.read_only = {name for name, t in described.items() if t.get("readOnly")}
        self.outcomes: Counter[tuple[str, str]] = Counter()
        self.next_id = 10_000
        self.workspace = Path()
        self.before: dict[str, bytes | str] = {}

    def __repr__(self) -> str:
        return f"Fuzzed(pid={self.client.proc.pid}, methods={len(self.methods)})"

    def stderr_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "<no stderr>"

    def call(self, method: str, params: Any = None, msg_id: Any = None) -> dict[str, Any]:
        """One request, answered within the bound, with a well-formed, traceback-free reply."""
        if msg_id is None:
            self.next_id += 1
            msg_id = f"fuzz-{self.next_id}"
        summary = f"{method} {json.dumps(params)[:300]}"
        _note(f"request id={msg_id!r}: {summary}")
        try:
            reply = self.client.request_raw(method, params, timeout=REPLY_TIMEOUT, msg_id=msg_id)
        except TimeoutError:
            pytest.fail(
                f"no reply within {REPLY_TIMEOUT}s to {summary}\n"
                f"server stderr:\n{self.stderr_tail()}"
            )
        _note(f"reply: {json.dumps(reply)[:500]}")
        if self.client.proc.poll() is not None:
            pytest.fail(
                f"the server exited ({self.client.proc.returncode}) on {summary}\n"
                f"server stderr:\n{self.stderr_tail()}"
            )
        check_reply(reply, msg_id)
        self.outcomes[method, error_kind(reply) or "ok"] += 1
        return reply

    def assert_alive(self) -> None:
        reply = self.call(methods.TOOLS_LIST, {})
        assert "result" in reply, reply
        assert isinstance(reply["result"]["tools"], list)
        assert reply["result"]["tools"], "tools/list lists no tools"


def _note(text: str) -> None:
    if currently_in_test_context():
        note(text)


def _walk_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _walk_keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk_keys(v)


def check_reply(reply: dict[str, Any], msg_id: Any) -> None:
    assert isinstance(reply, dict), reply
    assert reply.get("jsonrpc") == "2.0", reply
    assert reply.get("id") == msg_id, f"reply id {reply.get('id')!r} for request {msg_id!r}"
    assert ("result" in reply) != ("error" in reply), f"exactly one of result/error: {reply}"
    text = json.dumps(reply)
    assert "Traceback" not in text, f"a traceback reached the client: {text[:2000]}"
    assert 'File \\"' not in text and 'File "' not in text, f"a stack frame leaked: {text[:2000]}"
    assert "traceback" not in {k.lower() for k in _walk_keys(reply)}, text[:2000]
    if "result" in reply:
        assert isinstance(reply["result"], dict), f"s-code results are objects: {reply}"
        return
    error = reply["error"]
    assert isinstance(error, dict), reply
    assert isinstance(error.get("code"), int), reply
    assert isinstance(error.get("message"), str), reply
    data = error.get("data")
    assert isinstance(data, dict), f"error without data: {reply}"
    kind = data.get("kind")
    assert kind in KINDS, f"unknown error kind {kind!r}: {reply}"
    # ``internal`` means an unexpected exception: client input must always get a precise kind.
    assert kind != ErrorKind.INTERNAL, f"client input crashed the handler: {reply}"
    assert error["code"] == ERROR_CODES[ErrorKind(kind)], f"code does not match kind: {reply}"


def error_kind(reply: dict[str, Any]) -> str | None:
    if "error" not in reply:
        return None
    kind: str = reply["error"]["data"]["kind"]
    return kind


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` (not following links) with its bytes, or its kind."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = f"link:{os.readlink(path)}"
        elif path.is_file():
            found[rel] = path.read_bytes()
        else:
            found[rel] = "dir" if path.is_dir() else "other"
    return found


def _make_workspace(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("def main():\n    return 42\n")
    (root / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "README.md").write_text("# fuzz\n\nnothing to see\n")
    (root / "data.bin").write_bytes(b"\x00\x01\x02binary")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "secret.txt").write_text("hidden\n")
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    (root / "link").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "pipe")


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    base = tmp_path_factory.mktemp("fuzz")
    workspace = base / "ws"
    _make_workspace(workspace)
    env = dict(os.environ, S_CODE_STATE_DIR=str(base / "state"), S_CODE_LOG="INFO")
    log_path = base / "stderr.log"
    with log_path.open("wb") as log_file:
        client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env, stderr=log_file)
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "capabilities": {},
            },
            timeout=REPLY_TIMEOUT,
        )
        client.notify("initialized", {})
        advertised = init["capabilities"]["experimental"]["sCode"]["methods"]
        described: dict[str, dict[str, Any]] = {}
        listed = client.request(methods.TOOLS_LIST, {}, timeout=REPLY_TIMEOUT)["tools"]
        found = client.request(
            methods.TOOLS_SEARCH, {"query": BROAD_QUERY, "limit": 50}, timeout=REPLY_TIMEOUT
        )["tools"]
        for tool in [*listed, *found]:
            described[tool["name"]] = tool
        fz = Fuzzed(client, log_path, list(advertised), described)
        fz.workspace = workspace
        fz.before = snapshot(workspace)
        yield fz
    finally:
        code = client.close(timeout=REPLY_TIMEOUT)
    assert code == 0, f"the server exited with {code} after shutdown+exit"


# -- strategies --------------------------------------------------------------------------------

INTERESTING_STRINGS = [
    "",
    ".",
    "..",
    "../",
    "../../../etc/passwd",
    "/etc/passwd",
    "/",
    "a.txt",
    "./a.txt",
    "src",
    "src/",
    "src/main.py",
    "src//main.py",
    "src/../a.txt",
    "README.md",
    "A.TXT",
    "data.bin",
    "latin1.txt",
    "ignored/secret.txt",
    "link",
    "link/passwd",
    "pipe",
    "missing.txt",
    ".git",
    ".gitignore",
    "\x00",
    "a.txt\x00",
    "a\x00b",
    "~",
    "~/.ssh/id_rsa",
    "$HOME",
    "file:///etc/passwd",
    "%2e%2e/%2e%2e/etc/passwd",
    "C:\\Windows\\system.ini",
    "\\\\server\\share",
    "*",
    "**/*",
    "!**",
    "(",
    "[",
    "(?P<",
    "a{99999999}",
    "\\",
    "-",
    "--",
    "--files",
    "-e",
    "\n",
    "\r\n",
    " ",
    "\t",
    "é",
    "\u202e",
    "\ufeff",
    "\U0001f600",
    "\ud800",  # lone surrogates: valid JSON escapes, not encodable as UTF-8
    "a\udfff.txt",
    "\udc80",
    "null",
    "true",
    "0",
    "manual",
    "pending",
    "in_progress",
    "completed",
    "x" * 600,
    "a/" * 300,
]

strings = st.one_of(st.sampled_from(INTERESTING_STRINGS), st.text(max_size=30))
integers = st.one_of(
    st.integers(-3, 12),
    st.integers(),
    st.sampled_from([2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**30, -(10**30), 10**400]),
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 1e308, -1e-308]),
)
scalars = st.one_of(st.none(), st.booleans(), integers, floats, strings)
keys = st.one_of(
    st.sampled_from(["path", "name", "arguments", "query", "mode", "x", "", "__proto__"]), strings
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=16,
)
ENVELOPE_KEYS = ("jsonrpc", "id", "method", "type_name", "params", "result", "error")
envelope_dicts = st.recursive(
    st.fixed_dictionaries(
        {"jsonrpc": st.one_of(st.just("2.0"), scalars)},
        optional={
            "id": st.one_of(integers, strings, st.none(), floats, st.booleans()),
            "method": st.one_of(
                st.sampled_from(
                    ["exit", "shutdown", "initialize", methods.TOOLS_LIST, methods.READ_FILE]
                ),
                strings,
            ),
            "type_name": st.one_of(strings, st.sampled_from(["InitializeParams", "ExitNotif"])),
            "params": json_values,
            "result": json_values,
            "error": st.fixed_dictionaries({"code": integers, "message": strings}),
        },
    ),
    lambda children: st.one_of(
        st.dictionaries(st.one_of(st.sampled_from(ENVELOPE_KEYS), keys), children, max_size=4),
        st.lists(children, max_size=3),
    ),
    max_leaves=8,
)


def from_schema(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy:
    """Values roughly of ``schema``'s shape (boundaries included), mixed with any JSON at all."""
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth)
    options: list[st.SearchStrategy] = []
    if "anyOf" in schema:
        options += [from_schema(s, defs, depth + 1) for s in schema["anyOf"]]
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if kind == "string":
        options.append(st.one_of(st.sampled_from(INTERESTING_STRINGS), strings))
    elif kind == "integer":
        edges = [
            v + d
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
            if isinstance(v := schema.get(key), int)
            for d in (-1, 0, 1)
        ]
        options.append(integers | st.sampled_from(edges) if edges else integers)
    elif kind == "boolean":
        options.append(st.booleans())
    elif kind == "null":
        options.append(st.none())
    elif kind == "array" and depth < 3:
        item = from_schema(schema.get("items", {}), defs, depth + 1)
        options.append(st.lists(item, max_size=4))
    elif kind == "object" and depth < 3:
        options.append(object_from_schema(schema, defs, depth + 1))
    if not options:
        return json_values
    typed = st.one_of(*options)
    # Mostly well-typed values, so that calls get past validation; sometimes anything at all.
    return st.integers(0, 5).flatmap(lambda i: json_values if i == 0 else typed)


def object_from_schema(
    schema: dict[str, Any], defs: dict[str, Any], depth: int = 0
) -> st.SearchStrategy:
    """Dicts with the schema's own property names (required ones usually present)."""
    props = schema.get("properties", {})
    values = {name: from_schema(sub, defs, depth) for name, sub in props.items()}
    required = {n: values[n] for n in schema.get("required", []) if n in values}
    optional = {n: v for n, v in values.items() if n not in required}
    return st.one_of(
        st.fixed_dictionaries(required, optional=optional),
        st.fixed_dictionaries({}, optional=values),
        st.fixed_dictionaries(
            required, optional={**optional, "unexpected_field": json_values, "jsonrpc": scalars}
        ),
    )


def params_for(fz: Fuzzed, method: str) -> st.SearchStrategy:
    """Params built from the method's real argument names."""
    if method in fz.schemas:
        schema = fz.schemas[method]
        return object_from_schema(schema, schema.get("$defs", {}))
    if method == methods.TOOLS_CALL:
        return tools_call_params(fz)
    if method == methods.PERMISSION_MODE_SET:
        modes = st.one_of(st.just("manual"), strings.filter(lambda s: s not in UNSAFE_MODES))
        return st.fixed_dictionaries({}, optional={"mode": st.one_of(modes, json_values)})
    names = CONTROL_PARAMS.get(method, ("x",))
    return st.fixed_dictionaries({}, optional={n: json_values for n in names})


def tools_call_params(fz: Fuzzed) -> st.SearchStrategy:
    names = sorted(fz.tool_methods)

    def arguments(name: Any) -> st.SearchStrategy:
        method = fz.tool_methods.get(name) if isinstance(name, str) else None
        if method is None:
            return json_values
        schema = fz.schemas[method]
        return st.one_of(object_from_schema(schema, schema.get("$defs", {})), json_values)

    name_strategy = st.one_of(st.sampled_from(names), strings, json_values)
    return name_strategy.flatmap(
        lambda name: st.fixed_dictionaries(
            {}, optional={"name": st.just(name), "arguments": arguments(name)}
        )
    )


def allowed_keys(fz: Fuzzed, method: str) -> set[str] | None:
    """The param names ``method`` accepts, or None when it accepts any."""
    if method in STRICT_CONTROL:
        return set(CONTROL_PARAMS[method])
    schema = fz.schemas.get(method, {})
    if schema.get("additionalProperties") is False:
        return set(schema.get("properties", {}))
    return None


def safe(params: Any) -> bool:
    """False for params that could switch the server to a wider permission mode."""
    return not (isinstance(params, dict) and params.get("mode") in UNSAFE_MODES)


# -- tests -------------------------------------------------------------------------------------


def test_advertised_methods_are_the_registry(fuzzed: Fuzzed) -> None:
    expected = {*methods.CONTROL_METHODS, *(t.method for t in default_registry())}
    assert set(fuzzed.methods) == expected
    assert len(fuzzed.methods) == len(expected), "a method is advertised twice"
    assert all(m.startswith("s-code/") for m in fuzzed.methods)


def test_every_tool_schema_was_found(fuzzed: Fuzzed) -> None:
    registry = {t.name: t.method for t in default_registry()}
    assert fuzzed.tool_methods == registry
    for method, schema in fuzzed.schemas.items():
        assert schema.get("type") == "object", method
        assert isinstance(schema.get("properties", {}), dict), method


def test_every_advertised_method_is_served(fuzzed: Fuzzed) -> None:
    """An advertised method never answers MethodNotFound, whatever its params."""
    for method in fuzzed.methods:
        for params in (None, {}, [], {"x": 1}):
            reply = fuzzed.call(method, params)
            assert reply.get("error", {}).get("code") != -32601, reply


@settings(FUZZ, max_examples=250)
@given(data=st.data(), params=json_values)
def test_any_json_params(fuzzed: Fuzzed, data: st.DataObject, params: Any) -> None:
    method = data.draw(st.sampled_from(fuzzed.methods), label="method")
    if not safe(params):
        params = {"mode": "manual"}
    reply = fuzzed.call(method, params)
    if params is not None and not isinstance(params, dict):
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
    allowed = allowed_keys(fuzzed, method)
    if isinstance(params, dict) and allowed is not None and set(params) - allowed:
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
    fuzzed.assert_alive()


@settings(FUZZ, max_examples=250)
@given(data=st.data())
def test_params_with_real_argument_names(fuzzed: Fuzzed, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(fuzzed.methods), label="method")
    params = data.draw(params_for(fuzzed, method).filter(safe), label="params")
    fuzzed.call(method, params)
    fuzzed.assert_alive()


@settings(FUZZ, max_examples=120)
@given(data=st.data(), nested=envelope_dicts)
def test_nested_envelope_keys_are_plain_data(
    fuzzed: Fuzzed, data: st.DataObject, nested: Any
) -> None:
    method = data.draw(st.sampled_from(fuzzed.methods), label="method")
    allowed = sorted(allowed_keys(fuzzed, method) or CONTROL_PARAMS.get(method, ())) or ["x"]
    key = data.draw(st.sampled_from(allowed), label="key")
    where = data.draw(st.sampled_from(["top", "value", "list"]), label="where")
    params: Any
    if where == "top":
        params = nested if isinstance(nested, dict) else {"jsonrpc": "2.0", "v": nested}
    elif where == "value":
        params = {key: nested}
    else:
        params = {key: [nested, {"jsonrpc": "2.0", "method": "exit"}]}
    if not safe(params):
        params = {"mode": "manual"}
    reply = fuzzed.call(method, params)
    # Every method refuses unknown fields, so the envelope keys are never accepted at the top.
    if isinstance(params, dict) and set(params) - set(allowed_keys(fuzzed, method) or ()):
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
    fuzzed.assert_alive()


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(FUZZ, max_examples=100)
@given(data=st.data())
def test_tools_call_random_name_and_arguments(fuzzed: Fuzzed, data: st.DataObject) -> None:
    params = data.draw(tools_call_params(fuzzed), label="params")
    reply = fuzzed.call(methods.TOOLS_CALL, params)
    name, arguments = params.get("name"), params.get("arguments", {})
    if not isinstance(name, str):
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
        assert reply["error"]["data"].get("field") == "name", reply
    elif not isinstance(arguments, dict):
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
        # The required name is checked first: a name that is not valid Unicode is named instead.
        named = ("arguments",) if _encodable(name) else ("arguments", "name")
        assert reply["error"]["data"].get("field", "").startswith(named), reply
    elif not _encodable(json.dumps(params, ensure_ascii=False)):
        # A lone surrogate anywhere is refused, by field, before any lookup.
        assert error_kind(reply) == ErrorKind.INVALID_PARAMS, reply
        assert reply["error"]["data"].get("field", "").startswith(("name", "arguments")), reply
    elif name not in fuzzed.tool_methods:
        assert error_kind(reply) == ErrorKind.UNKNOWN_TOOL, reply
    elif name in fuzzed.read_only:
        # The same tool through its typed method: identical arguments, identical outcome.
        typed = fuzzed.call(fuzzed.tool_methods[name], arguments)
        if "result" in typed:
            assert reply.get("result") == typed["result"], (reply, typed)
        else:
            assert error_kind(reply) == error_kind(typed), (reply, typed)
            via_call = reply["error"]["data"].get("field")
            direct = typed["error"]["data"].get("field")
            assert via_call in (direct, f"arguments.{direct}"), (reply, typed)
    fuzzed.assert_alive()


R, L, S = methods.READ_FILE, methods.LIST_FILES, methods.SEARCH_TEXT
P, C, Q = methods.UPDATE_PLAN, methods.TOOLS_CALL, methods.TOOLS_SEARCH
A, TE, TU = "s-code/applyPatch", "s-code/turn/end", "s-code/turn/undo"
INVALID, ESCAPE = ErrorKind.INVALID_PARAMS.value, ErrorKind.PATH_ESCAPE.value
# Inputs the fuzzer found (or that sit on a boundary), replayed every run.
# The expected kind ``None`` means: any precise kind (an error, but never ``internal``).
EDGE_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    (S, {"pattern": "\x00"}, INVALID),
    (S, {"pattern": "a\x00b", "fixed_strings": True}, INVALID),
    (C, {"name": "search_text", "arguments": {"pattern": "\x00"}}, INVALID),
    (S, {"pattern": "("}, INVALID),
    (S, {"pattern": "x", "globs": ["\x00"]}, INVALID),
    (S, {"pattern": "x", "globs": ["\ud800"]}, None),
    (S, {"pattern": "x", "path": "\ud800"}, None),
    (S, {"pattern": "x", "path": "pipe"}, None),
    (S, {"pattern": "x", "max_results": 10**400}, INVALID),
    (S, {"pattern": "-e"}, None),
    (R, {"path": "\ud800"}, None),
    (R, {"path": "src/\udfff.py"}, None),
    (R, {"path": "a.txt", "start_line": 10**400}, INVALID),
    (R, {"path": "pipe"}, None),
    (R, {"path": "link/passwd"}, ESCAPE),
    (R, {"path": "data.bin"}, ErrorKind.UNSUPPORTED_ENCODING.value),
    (R, {"path": "latin1.txt"}, ErrorKind.UNSUPPORTED_ENCODING.value),
    (R, {"path": "x" * 5000}, None),
    (L, {"path": "\ud800"}, None),
    (L, {"path": "link"}, ESCAPE),
    (L, {"path": "pipe"}, None),
    (L, {"cursor": "\x00"}, None),
    (P, {"plan": [{"step": "a", "status": "in_progress"}] * 2}, INVALID),
    (Q, {"query": "\x00"}, None),
    (C, {"name": "\ud800"}, ErrorKind.INVALID_PARAMS.value),
    (C, {"name": "\ud800", "arguments": None}, ErrorKind.INVALID_PARAMS.value),
    (A, {"files": [{"path": "\ud800", "expected_revision": None, "content": "x"}]}, None),
    (A, {"files": [{"path": "new.txt", "expected_revision": None, "content": "\ud800"}]}, None),
    (A, {"path": "a.txt", "expected_revision": "\ud800", "content": "y"}, None),
    (A, {"files": [{"path": "pipe", "expected_revision": None, "content": "x"}]}, None),
    (TE, {"turnId": "\ud800"}, None),
    (TU, {"turnId": "\ud800"}, None),
]


@pytest.mark.parametrize(
    ("method", "params", "kind"),
    EDGE_CASES,
    ids=[f"{m.removeprefix('s-code/')}-{json.dumps(p)[:40]}" for m, p, _ in EDGE_CASES],
)
def test_edge_cases(fuzzed: Fuzzed, method: str, params: dict[str, Any], kind: str | None) -> None:
    if method not in fuzzed.methods:
        pytest.skip(f"{method} is not served by this build")
    reply = fuzzed.call(method, params)
    if kind is not None:
        assert error_kind(reply) == kind, reply
    fuzzed.assert_alive()


def test_permission_mode_untouched(fuzzed: Fuzzed) -> None:
    reply = fuzzed.call(methods.PERMISSION_MODE_GET, {})
    assert reply["result"]["mode"] == "manual"


def test_fuzzing_reached_the_tools(fuzzed: Fuzzed) -> None:
    """Positive control: the random calls did not all stop at params validation."""
    total = sum(fuzzed.outcomes.values())
    if total < 500:
        pytest.skip("only meaningful after the fuzz tests of this module ran")
    deep = {
        method
        for (method, kind), n in fuzzed.outcomes.items()
        if method != methods.TOOLS_LIST and kind != ErrorKind.INVALID_PARAMS
    }
    assert len(deep) >= len(fuzzed.methods) // 2, sorted(fuzzed.outcomes.items())
    succeeded = {m for (m, kind) in fuzzed.outcomes if kind == "ok"} - {methods.TOOLS_LIST}
    assert len(succeeded) >= 3, sorted(fuzzed.outcomes.items())


def test_nothing_was_written_without_approval(fuzzed: Fuzzed) -> None:
    """The client cannot show prompts and the mode stayed manual: every edit failed closed."""
    assert snapshot(fuzzed.workspace) == fuzzed.before

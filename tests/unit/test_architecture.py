"""The import graph: layers that only look down, and no circles.

Every ``import`` of an ``s_code`` module counts, at module level or inside a function, under
``TYPE_CHECKING`` too: a lazy import is still an arrow. The layers are ARCHITECTURE.md's "Turn 2"
shape (docs/architecture.md draws it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "server" / "s_code"

# Bottom first. A package may import its own modules and any package of a lower layer; only the
# faces (the top layer) may import each other.
LAYERS: list[set[str]] = [
    {"protocol", "redaction", "state"},
    {"workspace"},
    {"approvals", "credentials", "git", "sandbox"},
    {"session", "hostproc"},
    {"edits", "commands", "mcp_client", "codemode", "hooks", "terminals"},
    {"tools"},
    {
        "lsp",
        "mcp_face",
        "cli",
        "demo",
        "demo_hosts",
        "doctor",
        "docs_gen",
        "client",
        "__main__",
        "__init__",
    },
]
FACES = LAYERS[-1]
DOMAINS = (
    "codemode",
    "hooks",
    "terminals",
    "hostproc",
    "mcp_client",
    "workspace",
    "edits",
    "approvals",
    "sandbox",
    "commands",
    "git",
    "credentials",
    "state",
    "protocol",
)


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts
    return ".".join(parts)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, module: str) -> set[str]:
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("s_code")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                name = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                name = node.module or ""
            if not name.startswith("s_code"):
                continue
            found.add(name)
            for alias in node.names:  # `from s_code.tools import dispatch` imports a module
                if (
                    (SRC.parent / Path(*f"{name}.{alias.name}".split(".")))
                    .with_suffix(".py")
                    .exists()
                ):
                    found.add(f"{name}.{alias.name}")
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {t for t in _imports(path, name) if t in modules and t != name}
        graph[name] = targets
    return graph


def _layer(package: str) -> int:
    for i, layer in enumerate(LAYERS):
        if package in layer:
            return i
    raise AssertionError(f"package {package!r} is in no layer: add it to LAYERS")


GRAPH = _graph()


def test_every_package_has_a_layer() -> None:
    for module in GRAPH:
        _layer(_package(module))


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow from a package to one of its own layer or above (faces excepted)."""
    wrong = []
    for module, targets in graph.items():
        src = _package(module)
        for target in targets:
            dst = _package(target)
            if target == "s_code":
                continue  # the package root holds only __version__
            if src == dst or (src in FACES and dst in FACES):
                continue
            if _layer(dst) >= _layer(src):
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_imports_only_look_down() -> None:
    assert upward(GRAPH) == []


@pytest.mark.parametrize("domain", DOMAINS)
def test_domains_never_import_the_tool_layer_or_a_face(domain: str) -> None:
    wrong = [
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        if _package(m) == domain
        for t in targets
        if _package(t) in {"tools", "lsp", "cli"}
    ]
    assert wrong == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


def test_the_checker_sees_a_planted_cycle_and_an_upward_arrow(tmp_path: Path) -> None:
    """Positive control: the same helpers find what the tests above forbid."""
    pkg = tmp_path / "s_code"
    (pkg / "edits").mkdir(parents=True)
    (pkg / "edits" / "a.py").write_text(
        "def f():\n    from s_code.tools.dispatch import call\n"
        "if False:\n    from s_code.lsp import server\n"
    )
    assert _imports(pkg / "edits" / "a.py", "s_code.edits.a") == {
        "s_code.tools.dispatch",
        "s_code.lsp",
        "s_code.lsp.server",  # a module imported by name
    }
    planted = {
        "s_code.edits.a": {"s_code.tools.dispatch"},
        "s_code.tools.dispatch": {"s_code.edits.a"},
    }
    assert upward(planted) == ["s_code.edits.a -> s_code.tools.dispatch"]
    assert cycles(planted) == [["s_code.edits.a", "s_code.tools.dispatch"]]

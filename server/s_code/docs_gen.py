"""Generate the tool and error sections of docs/protocol.md from the registry.

``python -m s_code.docs_gen`` rewrites the text between the markers; ``--check`` exits 1 when the
committed file is out of date (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from s_code.protocol.errors import ERROR_CODES
from s_code.tools.builtin import default_registry
from s_code.tools.registry import ToolDef

BEGIN, END = "<!-- generated:tools:begin -->", "<!-- generated:tools:end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " \\| ".join(_type(p, defs) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    if prop.get("type") == "array":
        return f"array of {_type(prop.get('items', {}), defs)}"
    return str(prop.get("type", "any"))


def _fields(schema: dict[str, Any]) -> list[str]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    rows = ["| field | type | required | default | description |", "|---|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        desc = prop.get("description", "").replace("|", "\\|")
        rows.append(
            f"| `{name}` | {_type(prop, defs)} | {'yes' if name in required else ''} | "
            f"{default} | {desc} |"
        )
    return rows


def _tool(tool: ToolDef) -> list[str]:
    lines = [
        f"### `{tool.name}`",
        "",
        f"Method `{tool.method}` · profile {tool.profile} · "
        f"{'read-only' if tool.read_only else 'writes'}",
        "",
        tool.description,
        "",
        "Arguments:",
        "",
        *_fields(tool.input_schema),
        "",
        "Result:",
        "",
        *_fields(tool.output_schema or {}),
        "",
    ]
    return lines


def render() -> str:
    lines = [BEGIN, "", "## Tools (generated from the registry by `make docs`)", ""]
    for tool in default_registry():
        lines += _tool(tool)
    lines += ["## Error codes (generated)", "", "| `data.kind` | code |", "|---|---|"]
    lines += [f"| `{k.value}` | {c} |" for k, c in ERROR_CODES.items()]
    lines += ["", END]
    return "\n".join(lines)


def updated(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + render() + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s_code.docs_gen")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    current = DOC.read_text()
    fresh = updated(current)
    if args.check:
        if fresh != current:
            sys.stderr.write(f"{DOC} is out of date: run `make docs`\n")
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

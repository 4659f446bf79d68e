"""The static method table the server binds at start-up matches the registry it loads later."""

from __future__ import annotations

from s_code.protocol import methods
from s_code.tools.builtin import default_registry


def test_tool_methods_table_is_the_registry() -> None:
    assert {t.name: t.method for t in default_registry()} == methods.TOOL_METHODS


def test_starting_the_server_does_not_load_the_tool_layer() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; from s_code.lsp.handlers import create_server; create_server(); "
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 's_code.tools.files',"
        " 's_code.edits.engine', 'bm25s', 'numpy'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

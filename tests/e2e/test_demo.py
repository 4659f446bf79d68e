"""`s-code demo` (the README's main job) runs end to end and shows each step's answer."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_the_agent_session() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "demo"], capture_output=True, text=True, timeout=120
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "read_file, list_files, search_text, update_plan, tool_search" in out
    assert "src/calc/ops.py:17: # TODO: raise a clear error for b == 0" in out
    listing = out.split("→ s-code/listFiles")[1].split("Search for TODO")[0]
    assert "src/calc/ops.py" in listing and "debug.log" not in listing
    assert "from buffer" in out and "from disk" in out
    assert "error kind=path_escape" in out
    assert "error kind=invalid_params: unknown field 'lines'" in out
    assert "s-code/planUpdated" in out
    assert "the server exited with code 0" in out

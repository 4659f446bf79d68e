"""The example client of docs/client.md, run as written: a new pytest in its own directory (none
of this repository's conftest or settings), against the real server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "client.md"


def test_the_documented_client_runs(tmp_path: Path) -> None:
    found = re.search(
        r"<!-- client-example:begin -->\s*```python\n(.*?)```\s*<!-- client-example:end -->",
        DOC.read_text(),
        re.S,
    )
    assert found, "docs/client.md lost its example"
    (tmp_path / "test_client_example.py").write_text(found.group(1))
    env = {**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "test_client_example.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr

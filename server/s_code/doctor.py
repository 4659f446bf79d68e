"""``s-code doctor``: versions, and what this machine supports for the sidecar's defences."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from typing import Any

from s_code import __version__

SYS_LANDLOCK_CREATE_RULESET = 444
LANDLOCK_CREATE_RULESET_VERSION = 1


def landlock_abi() -> int | None:
    """The kernel's Landlock ABI version, or None when Landlock is absent or disabled."""
    if sys.platform != "linux":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return int(abi) if abi > 0 else None


def user_namespaces() -> bool:
    """Whether an unprivileged process may create a user namespace (observed, not inferred)."""
    probe = (
        "import ctypes,os,sys\n"
        "libc=ctypes.CDLL(None,use_errno=True)\n"
        "sys.exit(0 if libc.unshare(0x10000000)==0 else 1)\n"  # CLONE_NEWUSER
    )
    try:
        done = subprocess.run([sys.executable, "-c", probe], timeout=10, capture_output=True)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def openat2_supported() -> bool:
    from s_code.workspace.openat2 import _openat2

    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(_openat2(root, ".", os.O_RDONLY, 0))
        return True
    except OSError:
        return False
    finally:
        os.close(root)


def _version_of(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.splitlines()[0].strip() if out.returncode == 0 and out.stdout else None


def git_report() -> tuple[dict[str, Any], str | None]:
    """The git the sidecar would choose (the same rules as the git tools), and why it refused
    one (None when a git was chosen)."""
    from s_code.git.binary import resolve
    from s_code.protocol.errors import SCodeError

    try:
        chosen = resolve(os.environ.get("PATH"), ())
    except SCodeError as err:
        return {"path": err.data.get("path"), "version": err.data.get("version")}, err.message
    return {"path": chosen.path, "version": chosen.version_text}, None


def _sandbox() -> dict[str, Any]:
    from s_code.sandbox.tiers import current

    try:
        return current(refresh=True).to_wire()
    except Exception as exc:
        return {"tier": 3, "label": "unsandboxed", "reasons": [f"the self-test failed: {exc}"]}


def _helper() -> dict[str, Any]:
    """Which exec helper the sandbox uses: the shipped one, one compiled here, or none."""
    from s_code.sandbox import launcher

    return launcher.selection(refresh=True).to_wire()


def _helper_line(helper: dict[str, Any]) -> str:
    notes = "; ".join(helper["notes"])
    if helper["origin"] == "shipped":
        return f"exec helper: shipped with the package, runs here ({helper['path']})"
    if helper["origin"] == "compiled":
        return f"exec helper: compiled from the bundled source ({helper['path']})" + (
            f"; {notes}" if notes else ""
        )
    return f"exec helper: NONE: {notes}"


def collect() -> dict[str, Any]:
    from s_code.hostproc.trees import observed
    from s_code.sandbox.profile import not_prevented
    from s_code.state.store import DB_NAME, state_dir
    from s_code.workspace.search import ripgrep_path

    packages: dict[str, str | None] = {}
    for name in ("pygls", "lsprotocol", "cattrs", "pydantic", "pathspec", "platformdirs"):
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    rg: str | None
    try:
        rg = ripgrep_path()
    except Exception:
        rg = None
    git, git_refused = git_report()
    helper = _helper()
    sandbox = _sandbox()
    return {
        "s-code": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
        "ripgrep": {"path": rg, "version": _version_of([rg, "--version"]) if rg else None},
        "git": git,
        "git_refused": git_refused,
        "openat2": openat2_supported(),
        "landlock_abi": landlock_abi(),
        "user_namespaces": user_namespaces(),
        "bubblewrap": shutil.which("bwrap"),
        "exec_helper": helper,
        "host_process_trees": observed(),
        "sandbox": sandbox,
        "not_prevented": list(not_prevented(int(sandbox["tier"]))),
        "state_db": os.path.join(state_dir(), DB_NAME),
        "agent_link": _agent_link(),
    }


def _agent_link() -> dict[str, Any]:
    from s_code.mcp_face.link import status

    try:
        return status(os.getcwd())
    except Exception as exc:
        return {"problem": f"{type(exc).__name__}: {exc}"}


def _agent_lines(link: dict[str, Any]) -> list[str]:
    if link.get("problem"):
        return [f"agent link: {link.get('socket') or '-'}: {link['problem']}"]
    if not link.get("socket"):
        return [
            f"agent link: no editor serves this folder (sockets in {link.get('runtime_dir')}); "
            "`s-code mcp` here serves a session of its own"
        ]
    if not link.get("editor"):
        return [f"agent link: {link['socket']} (left by an editor that is gone)"]
    agents = link.get("agents") or []
    names = ", ".join(str(a.get("name")) for a in agents) or "none"
    return [
        f"agent link: {link['socket']} (the editor's session for {link.get('root')})",
        f"  agents attached: {names}",
    ]


def run_doctor(as_json: bool = False) -> int:
    report = collect()
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"s-code {report['s-code']} on Python {report['python']} ({report['platform']})")
    print("packages: " + ", ".join(f"{k} {v}" for k, v in report["packages"].items()))
    info = report["ripgrep"]
    print(
        f"ripgrep: {info['version'] or 'NOT FOUND'}"
        + (f" ({info['path']})" if info["path"] else "")
    )
    git = report["git"]
    if report["git_refused"]:
        print(f"git: REFUSED: {report['git_refused']}")
    else:
        print(f"git: {git['version']} ({git['path']}; chosen from PATH, outside any workspace)")
    print(f"openat2 (RESOLVE_BENEATH): {'yes' if report['openat2'] else 'no (component walk)'}")
    abi = report["landlock_abi"]
    print(f"Landlock: {'ABI ' + str(abi) if abi else 'not available'}")
    print(f"user namespaces: {'yes' if report['user_namespaces'] else 'no'}")
    print(f"bubblewrap: {report['bubblewrap'] or 'not installed'}")
    print(_helper_line(report["exec_helper"]))
    print(f"host-process trees, for a helper killed outright: {report['host_process_trees']}")
    box = report["sandbox"]
    print(f"sandbox: tier {box['tier']} ({box['label']}), from a self-test run now")
    for reason in box.get("reasons", []):
        print(f"  not higher: {reason}")
    for note in report["not_prevented"]:
        print(f"  not prevented in tier {box['tier']}: {note}")
    print(f"state database: {report['state_db']}")
    for line in _agent_lines(report["agent_link"]):
        print(line)
    return 0

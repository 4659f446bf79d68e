"""Issue 23: s-code installed like any developer tool, on a machine shape with no compiler.

The wheel and sdist are built once (``python -m build``, as ``make dist`` does: the wheel from the
sdist), kept in the temporary directory under the hash of what goes into them. A fresh virtual
environment (no system site-packages, no checkout on ``sys.path``) gets the wheel by ``pip install``
with its dependencies from the package index, pinned by constraints.txt, with PATH stripped of
compilers: a directory of links to bwrap, sh, true, sleep, env and git only. Then ``s-code doctor``
must report tier 1 (and tier 2 with bubblewrap switched off) with the shipped helper, and
``s-code sandbox --yes -- ...`` must run sandboxed. A helper that cannot run here and no compiler
give one line and an exit code (no traceback), and a compiler brings the fallback back. pipx
installs the same wheel into its own environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from s_code.sandbox import tiers

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
TOOLS = ("bwrap", "sh", "true", "sleep", "env", "git", "touch")
COMPILERS = ("cc", "gcc", "clang", "tcc", "c99")
PIPX = shutil.which("pipx", path=os.path.dirname(sys.executable)) or shutil.which("pipx")

pytestmark = [
    pytest.mark.skipif(
        sys.platform != "linux" or shutil.which("bwrap") is None, reason="Linux and bubblewrap"
    ),
    # builds and installs (pip, pipx), each step bounded at 600 s: past the suite's default
    pytest.mark.timeout(1800),
]


def _source_hash() -> str:
    digest = hashlib.sha256()
    files = [ROOT / "setup.py", ROOT / "pyproject.toml", ROOT / "README.md"]
    files += sorted(
        p
        for p in (ROOT / "server" / "s_code").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


@pytest.fixture(scope="module")
def dist() -> Path:
    """dist/ of this source: built once, reused while the source is the same."""
    cache = Path(tempfile.gettempdir()) / "s-code-test-dist" / _source_hash()
    if not list(cache.glob("*.whl")):
        building = cache.with_name(f"{cache.name}.{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        done = _run([sys.executable, "-m", "build", "--outdir", str(building), str(ROOT)])
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        shutil.rmtree(cache, ignore_errors=True)
        os.replace(building, cache)
    return cache


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def _bare_bin(bindir: Path) -> str:
    """A PATH of links to the few tools a user's machine has: no C compiler."""
    bindir.mkdir(parents=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    assert not any(shutil.which(c, path=str(bindir)) for c in COMPILERS)
    return str(bindir)


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _bare_bin(tmp_path_factory.mktemp("bare") / "bin")


def _env(base: Path, path: str, **extra: str) -> dict[str, str]:
    """A user's environment: a home of its own, no compiler, nothing of the checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("LANG", "LC_ALL", "TERM", "USER", "LOGNAME")
        or (k.startswith("PIP_") and k != "PIP_REQUIRE_VIRTUALENV")
    }
    home = base / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        PATH=path,
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CONFIG_HOME=str(home / ".config"),
        **extra,
    )
    return env


@pytest.fixture(scope="module")
def installed(
    dist: Path, bare_path: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A fresh virtual environment with the wheel installed by pip, on the compiler-less PATH."""
    base = tmp_path_factory.mktemp("install")
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    assert made.returncode == 0, made.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    env = _env(base, bare_path)
    done = _run([*pip, "-c", str(CONSTRAINTS), str(_wheel(dist))], cwd=base, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield venv


def _s_code(
    venv: Path, args: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return _run([str(venv / "bin" / "s-code"), *args], cwd=cwd, env=env)


def _case(tmp_path: Path, **extra: str) -> tuple[Path, dict[str, str]]:
    """A workspace, and the environment of a user without a compiler. The tools' links are in
    the workspace: a sandboxed command sees no other part of the temporary directory."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path, _bare_bin(ws / ".bin"), **extra)
    env["S_CODE_LAUNCHER_DIR"] = str(tmp_path / "launcher")  # empty: nothing compiled before
    return ws, env


def test_the_wheel_carries_the_helper_and_the_sdist_its_source(dist: Path) -> None:
    wheel = _wheel(dist)
    machine = os.uname().machine
    assert wheel.name.endswith(f"-py3-none-linux_{machine}.whl")
    with zipfile.ZipFile(wheel) as zf:
        info = zf.getinfo("s_code/sandbox/bin/s-code-launch")
        assert (info.external_attr >> 16) & 0o111  # executable
        names = zf.namelist()
        assert "s_code/sandbox/launch.c" in names and "s_code/py.typed" in names
        assert not any(n.startswith(("tests/", "editors/")) for n in names)
    (sdist,) = dist.glob("*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as tf:
        members = [m.split("/", 1)[1] for m in tf.getnames() if "/" in m]
    assert "setup.py" in members and "server/s_code/sandbox/launch.c" in members
    assert not any("sandbox/bin" in m for m in members)  # built from source, never shipped in it


def test_installed_without_the_checkout(installed: Path, tmp_path: Path) -> None:
    ws, env = _case(tmp_path)
    code = "import s_code, sys; print(s_code.__file__); print(sys.path)"
    done = _run([str(installed / "bin" / "python"), "-c", code], cwd=ws, env=env)
    assert done.returncode == 0, done.stderr
    where = done.stdout.splitlines()[0]
    assert where.startswith(str(installed)), where
    assert str(ROOT) not in done.stdout


@pytest.mark.parametrize("tier", [1, 2])
def test_doctor_and_a_sandboxed_command_with_no_compiler(
    installed: Path, tmp_path: Path, tier: int
) -> None:
    if tier == 1 and tiers.current().tier != 1:
        pytest.skip("tier 1 is not available on this machine")
    extra = {tiers.DISABLE_ENV: "bwrap"} if tier == 2 else {}
    ws, env = _case(tmp_path, **extra)
    doctor = _s_code(installed, ["doctor", "--json"], ws, env)
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    helper = report["exec_helper"]
    assert helper["origin"] == "shipped", helper
    assert helper["path"].startswith(str(installed))
    assert report["sandbox"]["tier"] == tier, report["sandbox"]
    text = _s_code(installed, ["doctor"], ws, env)
    assert "exec helper: shipped with the package, runs here" in text.stdout
    assert f"sandbox: tier {tier}" in text.stdout

    done = _s_code(installed, ["sandbox", "--yes", "--", "true"], ws, env)
    assert done.returncode == 0, done.stderr
    assert not list((tmp_path / "launcher").glob("s-code-launch-*"))  # nothing was compiled
    outside = installed / "written-by-a-command"  # outside the workspace, and visible in it
    script = f'echo "$S_CODE_SANDBOX" > seen; touch inside; touch {outside}'
    done = _s_code(installed, ["sandbox", "--yes", "--", "sh", "-c", script], ws, env)
    assert done.returncode != 0  # the write outside the workspace was refused
    assert not outside.exists()
    assert (ws / "inside").exists()  # positive control: touch ran, inside the workspace
    assert (ws / "seen").read_text().strip() == report["sandbox"]["label"]


@pytest.fixture
def foreign_helper(installed: Path) -> Iterator[Path]:
    """The installed helper, made an executable of another architecture for one test."""
    path = next(installed.glob("lib/python*/site-packages/s_code/sandbox/bin/s-code-launch"))
    original = path.read_bytes()
    foreign = 183 if os.uname().machine != "aarch64" else 62  # aarch64, or x86_64
    path.write_bytes(original[:18] + foreign.to_bytes(2, "little") + original[20:])
    try:
        yield path
    finally:
        path.write_bytes(original)


def test_no_usable_helper_and_no_compiler_is_one_line_and_tier_3(
    installed: Path, tmp_path: Path, foreign_helper: Path
) -> None:
    ws, env = _case(tmp_path)
    doctor = _s_code(installed, ["doctor"], ws, env)
    assert doctor.returncode == 0, doctor.stderr
    assert "sandbox: tier 3 (unsandboxed)" in doctor.stdout
    line = next(x for x in doctor.stdout.splitlines() if x.startswith("exec helper:"))
    assert "NONE" in line and "the shipped helper is built for" in line
    assert "no C compiler" in line
    for argv in (["sh", "-c", "exit 0"], ["true"]):
        done = _s_code(installed, ["sandbox", "--yes", "--", *argv], ws, env)
        assert done.returncode == 125
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("s-code sandbox: no sandbox exec helper: the shipped helper")
    # positive control: with a compiler, the helper is compiled from the bundled source
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this machine for the fallback's control")
    env["PATH"] = f"{env['PATH']}:{os.path.dirname(cc)}"  # the compiler and its assembler
    doctor = _s_code(installed, ["doctor", "--json"], ws, env)
    report = json.loads(doctor.stdout)
    assert report["exec_helper"]["origin"] == "compiled", report["exec_helper"]
    assert "the shipped helper is built for" in report["exec_helper"]["notes"][0]
    assert report["sandbox"]["tier"] in (1, 2)
    done = _s_code(installed, ["sandbox", "--yes", "--", "true"], ws, env)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(PIPX is None, reason="pipx is not installed (the dev extras have it)")
def test_pipx_install(dist: Path, tmp_path: Path) -> None:
    assert PIPX is not None
    ws, env = _case(tmp_path)
    env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"))
    env["PIPX_DEFAULT_PYTHON"] = sys.executable
    pip_args = f"--quiet -c {CONSTRAINTS}"
    done = _run([PIPX, "install", "--pip-args", pip_args, str(_wheel(dist))], cwd=ws, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    s_code = tmp_path / "bin" / "s-code"
    doctor = _run([str(s_code), "doctor", "--json"], cwd=ws, env=env)
    report = json.loads(doctor.stdout)
    assert report["exec_helper"]["origin"] == "shipped"
    assert report["exec_helper"]["path"].startswith(str(tmp_path / "pipx"))
    assert report["sandbox"]["tier"] in (1, 2)
    done = _run([str(s_code), "sandbox", "--yes", "--", "true"], cwd=ws, env=env)
    assert done.returncode == 0, done.stderr

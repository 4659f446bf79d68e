"""S17: degraded tiers are detected by the self-test and reported; tier 3 always asks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from s_code.client import RpcError, StdioClient
from s_code.sandbox import tiers

DETECT = (
    "from s_code.sandbox import tiers; import json; print(json.dumps(tiers.detect().to_wire()))"
)


def _detect(env: dict[str, str], prefix: tuple[str, ...] = ()) -> dict[str, object]:
    out = subprocess.run(
        [*prefix, sys.executable, "-c", DETECT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_best_tier_here_is_reported_with_its_reasons() -> None:
    """The report names why each better tier was not given, one reason per tier, in order: none
    at tier 1; at a lower tier, what failed above it (here tier 1 is switched off to see its
    reason, from a probe run of its own)."""
    report = tiers.detect()
    assert report.tier in (1, 2, 3)
    assert [r.split(":")[0] for r in report.reasons] == [f"tier {t}" for t in range(1, report.tier)]
    if report.bwrap is None:
        assert report.reasons[0] == "tier 1: bubblewrap is not installed"
    if report.tier != 1:
        return
    assert report.reasons == []
    degraded = _detect({**os.environ, tiers.DISABLE_ENV: "bwrap"})
    assert degraded["tier"] == 2 and degraded["reasons"] == ["tier 1: disabled"]


@pytest.mark.skipif(not shutil.which("unshare"), reason="util-linux unshare is needed")
def test_tier2_when_user_namespaces_are_refused(tmp_path: Path) -> None:
    """Inside a user namespace whose max_user_namespaces is 0, bubblewrap cannot start: the probe
    sees it and falls back to Landlock + seccomp."""
    if tiers.current().tier != 1:
        pytest.skip("tier 1 is not available here to degrade from")
    env = {**os.environ, "S_CODE_LAUNCHER_DIR": str(tmp_path / "launcher")}
    script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'
    prefix = ("unshare", "--user", "--map-root-user", "sh", "-c", script, "sh")
    report = _detect(env, prefix)
    assert report["tier"] == 2
    assert any("namespace" in str(r) for r in report["reasons"])  # type: ignore[union-attr]
    control = _detect(env)  # positive control: outside that namespace it is tier 1
    assert control["tier"] == 1


def test_tier3_when_the_layers_are_off(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "S_CODE_LAUNCHER_DIR": str(tmp_path / "launcher"),
        tiers.DISABLE_ENV: "bwrap,landlock,seccomp",
    }
    report = _detect(env)
    assert report["tier"] == 3
    reasons = " ".join(report["reasons"])  # type: ignore[arg-type]
    assert "wrote outside the workspace" in reasons  # observed, not assumed
    assert "connected to a loopback listener" in reasons
    assert "signalled a host process" in reasons


def test_tier3_is_reported_and_every_command_asks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        **os.environ,
        "S_CODE_LAUNCHER_DIR": str(tmp_path / "launcher"),
        tiers.DISABLE_ENV: "bwrap,landlock,seccomp",
    }
    client = StdioClient(env=env)
    try:
        init = client.initialize(str(ws), options={"permissionMode": "workspace"})
        caps = init["capabilities"]["experimental"]["sCode"]
        assert caps["sandboxTier"] == 3
        assert caps["sandbox"]["label"] == "unsandboxed"
        preview = client.request("s-code/sandbox/preview", {"command": ["true"]})
        assert preview["decision"] == "ask"  # workspace mode, but no sandbox: it asks
        with pytest.raises(RpcError) as err:
            client.request("s-code/runCommand", {"command": ["touch", "ran"]})
        assert err.value.error["data"]["kind"] == "approval_denied"  # no prompt support: denied
        assert not (ws / "ran").exists()
    finally:
        client.close()


def test_doctor_reports_the_tier() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "s_code", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    box = json.loads(out.stdout)["sandbox"]
    assert box["tier"] == tiers.current().tier
    assert box["label"]

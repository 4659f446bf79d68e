"""initialize, capabilities, shutdown: the lifecycle as both client presets see it."""

from __future__ import annotations

from pytest_lsp import LanguageClient

from s_code.protocol import methods
from s_code.tools.builtin import default_registry
from tests.e2e.support import call


async def test_server_info_and_capabilities(client: LanguageClient) -> None:
    result = client.init_result  # type: ignore[attr-defined]
    assert result.server_info.name == "s-code"
    caps = result.capabilities
    assert caps.text_document_sync is not None
    sc = caps.experimental["sCode"]
    assert sc["protocolVersion"] == 1
    expected = {*methods.CONTROL_METHODS, *(t.method for t in default_registry())}
    assert set(sc["methods"]) == expected
    assert all(m.startswith("s-code/") for m in sc["methods"])
    assert "sandboxTier" in sc


async def test_permission_mode_round_trip(client: LanguageClient) -> None:
    assert (await call(client, methods.PERMISSION_MODE_GET, {}))["mode"] == "manual"
    assert (await call(client, methods.PERMISSION_MODE_SET, {"mode": "accept-edits"})) == {
        "mode": "accept-edits"
    }
    assert (await call(client, methods.PERMISSION_MODE_GET, {}))["mode"] == "accept-edits"

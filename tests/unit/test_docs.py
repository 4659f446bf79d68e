"""The committed protocol reference matches the registry (run `make docs` when this fails)."""

from __future__ import annotations

from s_code import docs_gen


def test_protocol_reference_is_up_to_date() -> None:
    assert docs_gen.main(["--check"]) == 0


def test_reference_lists_every_tool_and_error_kind() -> None:
    text = docs_gen.DOC.read_text()
    from s_code.protocol.errors import ErrorKind
    from s_code.tools.builtin import default_registry

    for tool in default_registry():
        assert f"### `{tool.name}`" in text and f"`{tool.method}`" in text
    for kind in ErrorKind:
        assert f"| `{kind.value}` |" in text


def test_check_detects_a_stale_reference(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "protocol.md"
    stale.write_text(f"intro\n{docs_gen.BEGIN}\nold\n{docs_gen.END}\n")
    monkeypatch.setattr(docs_gen, "DOC", stale)
    assert docs_gen.main(["--check"]) == 1
    assert docs_gen.main([]) == 0
    assert docs_gen.main(["--check"]) == 0
    assert "### `read_file`" in stale.read_text()

"""The scripted model server on its own (no agent CLI needed): both wire protocols, the step picked
by the tool results the conversation holds, Codex's namespace on an MCP call, and the log."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tests.agents.scripted_model import CallTool, Final, FromResults, ScriptedModel, Step

SCRIPT: list[Step] = [CallTool("s-code", "read-file", {"path": "a.txt"}), Final("read it")]


def post(model: ScriptedModel, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        model.url + path, data=json.dumps(body).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["Content-Type"], reply.read()


def events(payload: bytes) -> list[dict[str, Any]]:
    """The data of each SSE event, checked against its ``event:`` line."""
    out = []
    for chunk in payload.decode().split("\n\n"):
        if not chunk.strip():
            continue
        kind, data = chunk.split("\n")
        event = json.loads(data.removeprefix("data: "))
        assert kind == f"event: {event['type']}"
        out.append(event)
    return out


def test_messages_api_calls_the_tool_then_answers_once_it_holds_the_result() -> None:
    with ScriptedModel(SCRIPT) as model:
        question = {"role": "user", "content": "read a.txt"}
        kind, first = post(
            model, "/v1/messages?beta=true", {"stream": True, "messages": [question]}
        )
        assert kind == "text/event-stream"
        sent = events(first)
        assert [e["type"] for e in sent] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        block = sent[1]["content_block"]
        assert (block["type"], block["name"]) == ("tool_use", "mcp__s-code__read-file")
        assert json.loads(sent[2]["delta"]["partial_json"]) == {"path": "a.txt"}
        assert sent[4]["delta"]["stop_reason"] == "tool_use"

        result = {"type": "tool_result", "tool_use_id": block["id"], "content": "1: hello"}
        history = [question, {"role": "assistant", "content": [block]}]
        history.append({"role": "user", "content": [result]})
        _, second = post(model, "/v1/messages", {"stream": True, "messages": history})
        answer = events(second)
        assert answer[2]["delta"] == {"type": "text_delta", "text": "read it"}
        assert answer[4]["delta"]["stop_reason"] == "end_turn"

    log = model.conversation()
    assert [(r.api, r.step) for r in log] == [("anthropic", 0), ("anthropic", 1)]
    assert log[1].tool_results() == ["1: hello"]
    assert model.tool_results() == ["1: hello"]


def test_responses_api_calls_an_mcp_tool_in_its_namespace() -> None:
    namespace = {
        "type": "namespace",
        "name": "mcp__s_code",
        "tools": [{"type": "function", "name": "read_file"}],
    }
    with ScriptedModel(SCRIPT) as model:
        body: dict[str, Any] = {"stream": True, "tools": [namespace], "input": []}
        _, first = post(model, "/v1/responses", body)
        sent = events(first)
        assert [e["type"] for e in sent] == [
            "response.created",
            "response.output_item.done",
            "response.completed",
        ]
        call = sent[1]["item"]
        assert (call["type"], call["namespace"], call["name"]) == (
            "function_call",
            "mcp__s_code",
            "read_file",
        )
        assert json.loads(call["arguments"]) == {"path": "a.txt"}

        output = {"type": "function_call_output", "call_id": call["call_id"], "output": "1: hi"}
        body["input"] = [call, output]
        _, second = post(model, "/v1/responses", body)
        message = events(second)[1]["item"]
        assert message["content"][0]["text"] == "read it"

    assert model.conversation()[0].tool_names() == ["mcp__s_code/read_file"]
    assert model.conversation()[1].tool_results() == ["1: hi"]


def test_past_the_script_a_final_repeats_and_an_unscripted_path_is_logged() -> None:
    with ScriptedModel([Final("only this")]) as model:
        results = [{"type": "function_call_output", "call_id": "c", "output": "x"}] * 3
        _, payload = post(model, "/v1/responses", {"input": results})
        assert events(payload)[1]["item"]["content"][0]["text"] == "only this"
        request = urllib.request.Request(model.url + "/v1/other", data=b"{}", method="POST")
        try:
            urllib.request.urlopen(request, timeout=10)
        except urllib.error.HTTPError as e:
            assert e.code == 404
        else:
            raise AssertionError("an unscripted path answered")
    assert [(r.path, r.api) for r in model.requests] == [
        ("/v1/responses", "openai"),
        ("/v1/other", "other"),
    ]


def test_a_step_made_from_the_results_uses_what_the_tool_returned() -> None:
    """A FromResults step gets the texts of the tool results so far; a maker that fails ends the
    turn with a text saying why (the CLI then finishes instead of waiting on a dead request)."""
    script: list[Step] = [
        CallTool("s-code", "read_file", {"path": "a.txt"}),
        FromResults(lambda seen: CallTool("s-code", "apply_patch", {"rev": seen[-1][-4:]})),
        FromResults(lambda seen: Final(seen[5])),
    ]
    with ScriptedModel(script) as model:
        first = {"type": "function_call_output", "call_id": "c1", "output": "revision 12ab"}
        _, payload = post(model, "/v1/responses", {"input": [first]})
        call = events(payload)[1]["item"]
        assert (call["name"], json.loads(call["arguments"])) == ("apply_patch", {"rev": "12ab"})

        second = {"type": "function_call_output", "call_id": "c2", "output": "applied"}
        _, payload = post(model, "/v1/responses", {"input": [first, second]})
        text = events(payload)[1]["item"]["content"][0]["text"]
        assert text.startswith("[scripted model: step 2 failed: IndexError("), text
    assert [r.step for r in model.conversation()] == [1, 2]

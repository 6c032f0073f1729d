"""Tool calls a log left without results (logs written before resume gave cut-off calls their
result) are answered with the interrupted result on the wire, where servers require it."""

from __future__ import annotations

from agent_host_openai.convert import to_messages

from host.agents.models import ModelRequest
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.sessions.model import MessageEvent, ToolCall


def test_calls_without_results_get_the_interrupted_result_before_the_next_message() -> None:
    calls = (ToolCall("c1", "shell", {"cmd": "ls"}), ToolCall("c2", "shell", {"cmd": "pwd"}))
    history = (
        MessageEvent("user", "look"),
        MessageEvent("assistant", "", tool_calls=calls),
        MessageEvent("tool", "files", tool_call_id="c1"),
        MessageEvent("user", "and now?"),  # the crash left c2 without a result
        MessageEvent("assistant", "", tool_calls=(ToolCall("c3", "shell", {"cmd": "id"}),)),
    )
    sent = to_messages(ModelRequest(agent_id="a", label=None, system_prompt="", messages=history))
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in sent] == [
        ("user", None, "look"),
        ("assistant", None, ""),
        ("tool", "c1", "files"),
        ("tool", "c2", INTERRUPTED_TOOL_TEXT),
        ("user", None, "and now?"),
        ("assistant", None, ""),
        ("tool", "c3", INTERRUPTED_TOOL_TEXT),
    ]


def test_a_complete_history_is_sent_unchanged() -> None:
    history = (
        MessageEvent("user", "look"),
        MessageEvent("assistant", "", tool_calls=(ToolCall("c1", "shell", {}),)),
        MessageEvent("tool", "files", tool_call_id="c1"),
        MessageEvent("assistant", "done"),
    )
    sent = to_messages(ModelRequest(agent_id="a", label=None, system_prompt="", messages=history))
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant"]

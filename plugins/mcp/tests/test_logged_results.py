"""What the session log keeps of an MCP tool result: data, not media, and the text once — with
a real MCP server (media_server.py) and the real JSONL log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import agent_host_mcp
import pytest
from agent_host_mcp.content import logged_structured

from host.agents import call, say

SERVER = str(Path(__file__).with_name("media_server.py"))
BIG = 2_000_000
PLACEHOLDER = "[image/png, 3008 bytes]"  # what the model sees of the picture, and the log keeps


@pytest.fixture
def h(make_harness):
    media = {"command": sys.executable, "args": [SERVER, "--size", str(BIG)]}
    return make_harness(("mcp", agent_host_mcp), config={"plugins": {"mcp": {"servers": {
        "media": media}}}})  # fmt: skip


async def logged_result(h, tool: str) -> tuple[Any, bytes]:
    """Run one turn calling ``tool``; its stored tool message and the root's log bytes."""
    root = await h.root("root")
    h.model.script("root", call(tool), say("done"))
    root.followup("go")
    await root.wait_idle()
    [message] = await h.stored_messages(root.id, "tool")
    assert not message.is_error, message.content
    return message, h.log_path(root.id).read_bytes()


async def test_media_inside_structured_is_logged_as_its_placeholder(h):
    message, log = await logged_result(h, "media__picture")
    assert message.content == PLACEHOLDER
    assert message.structured == {
        "content": [{"type": "image", "data": PLACEHOLDER, "mimeType": "image/png"}],
        "path": "/photos/cat.png",
        "thumbnail": PLACEHOLDER,
    }
    assert b"iVBORw0KGgo" not in log  # the PNG's base64, in no line of the log
    assert len(log) < 10_000  # the picture alone is 4,012 bytes of base64, twice over


async def test_a_text_repeated_as_structured_is_logged_once(h):
    message, log = await logged_result(h, "media__big")
    text = ("0123456789abcdef" * (BIG // 16 + 1))[:BIG]
    assert (message.content, message.structured) == (text, None)
    assert log.count(text.encode()) == 1
    assert BIG < len(log) < BIG + 20_000


async def test_a_dict_result_keeps_its_json_text_and_drops_the_same_dict(h):
    message, _ = await logged_result(h, "media__listing")
    assert json.loads(message.content) == {"files": ["a.txt", "b.txt"]}
    assert message.structured is None


async def test_structured_data_that_says_more_than_the_text_is_kept(h):
    message, _ = await logged_result(h, "media__counted")
    assert (message.content, message.structured) == (
        "2 files",
        {"files": ["a.txt", "b.txt"], "total": 2},
    )


@pytest.mark.parametrize(
    ("text", "structured", "kept"),
    [
        ("hello", {"result": "hello"}, None),  # the SDK's wrapping of a plain value
        ('{"a": 1}', {"a": 1}, None),
        ("1", {"result": 1}, None),
        ("true", {"result": 1}, {"result": 1}),  # 1 is not true
        ('{"a": 1}', {"a": 1, "b": 2}, {"a": 1, "b": 2}),
        ("hello", {"result": "hello", "more": 1}, {"result": "hello", "more": 1}),
        ("x", {"blob": "AAAA", "uri": "f:///"}, {"blob": "[binary, 3 bytes]", "uri": "f:///"}),
        ("x", {"data": "a,b", "mimeType": "text/csv"}, {"data": "a,b", "mimeType": "text/csv"}),
        ("x", ["data:audio/wav;codec=pcm;base64,AAAAAAAA"], ["[audio/wav, 6 bytes]"]),
        ("x", None, None),
        ("[" * 100_000 + "]" * 100_000, {"a": 1}, {"a": 1}),  # deeper than json parses
    ],
)
def test_what_the_log_keeps_of_structured(text, structured, kept):
    assert logged_structured(text, structured) == kept

"""What the session log keeps of an MCP tool result: data, not media, and the text once — with
a real MCP server (media_server.py) and the real JSONL log."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import agent_host_mcp
import pytest
from agent_host_mcp.content import MEDIA_CHARS, logged_structured

from host.agents import call, say

SERVER = str(Path(__file__).with_name("media_server.py"))
BIG = 2_000_000
PLACEHOLDER = "[image/png, 3008 bytes]"  # what the model sees of the picture, and the log keeps
PDF = b"%PDF-1.7\n" + bytes(3000)  # media_server.py's document, and its manifest
MANIFEST = "data:application/json;base64," + base64.b64encode(b'{"pages": 3}').decode()


@pytest.fixture
def h(make_harness):
    media = {"command": sys.executable, "args": [SERVER, "--size", str(BIG)]}
    # No result limit: the 2 MB text is here to be stored once, whole.
    return make_harness(("mcp", agent_host_mcp), config={"plugins": {"mcp": {"servers": {
        "media": media}}}, "tools": {"max_result_chars": 0}})  # fmt: skip


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


async def test_base64_under_any_key_whatever_its_mime_is_logged_as_a_placeholder(h):
    message, log = await logged_result(h, "media__document")
    digest = hashlib.sha256(PDF).hexdigest()
    assert message.structured == {
        "name": "report.pdf",
        "mimeType": "application/pdf",
        "data": "[application/pdf, 3009 bytes]",
        "screenshot": PLACEHOLDER,
        "cover": {"mimeType": "image/png", "data": "https://example.org/cover.png"},
        "sha256": digest,
        "head_hex": PDF[:640].hex(),
    }
    assert b"JVBERi0xLjcK" not in log and b"iVBORw0KGgo" not in log  # the PDF's, the PNG's
    assert b"https://example.org/cover.png" in log and digest.encode() in log


async def test_a_data_uri_inside_a_string_is_replaced_and_a_json_one_kept(h):
    message, log = await logged_result(h, "media__page")
    assert message.structured == {
        "html": f'<p>A cat:</p><img src="{PLACEHOLDER}" alt="cat"><p>The end.</p>',
        "manifest": MANIFEST,
    }
    assert b"iVBORw0KGgo" not in log and MANIFEST.encode() in log


LONG = base64.b64encode(bytes(range(256)) * 3).decode()  # 1,024 characters: the threshold
CSV = "[text/csv, 768 bytes]"


@pytest.mark.parametrize(
    ("text", "structured", "kept"),
    [
        ("hello", {"result": "hello"}, None),  # the SDK's wrapping of a plain value
        ('{"a": 1}', {"a": 1}, None),
        ("1", {"result": 1}, None),
        ("true", {"result": 1}, {"result": 1}),  # 1 is not true
        ('{"a": 1}', {"a": 1, "b": 2}, {"a": 1, "b": 2}),
        ("hello", {"result": "hello", "more": 1}, {"result": "hello", "more": 1}),
        ("[1, 2]", {"items": [1, 2]}, {"items": [1, 2]}),  # the key says what the text is
        ("ok", {"error": "ok"}, {"error": "ok"}),
        ("[1, 2]", {"content": [1, 2]}, None),
        ("ok", "ok", None),
        ("x", {"blob": LONG, "uri": "f:///"}, {"blob": "[binary, 768 bytes]", "uri": "f:///"}),
        ("x", {"blob": LONG[:-4], "uri": "f:///"}, {"blob": LONG[:-4], "uri": "f:///"}),
        ("x", {"blob": "AAAA"}, {"blob": "AAAA"}),  # short: never replaced
        ("x", {"data": "a,b", "mimeType": "text/csv"}, {"data": "a,b", "mimeType": "text/csv"}),
        ("x", {"data": LONG, "mimeType": "text/csv"}, {"data": CSV, "mimeType": "text/csv"}),
        ("x", {"data": LONG + "\n"}, {"data": LONG + "\n"}),  # not strict base64
        ("x", {"data": "ab" * MEDIA_CHARS}, {"data": "ab" * MEDIA_CHARS}),  # hexadecimal
        ("x", ["data:audio/wav;codec=pcm;base64,AAAAAAAA"], ["[audio/wav, 6 bytes]"]),
        ("x", ["a data:image/gif;base64,R0lGODlh b"], ["a [image/gif, 6 bytes] b"]),
        ("x", ["data:text/plain;base64,aGk="], ["data:text/plain;base64,aGk="]),
        ("x", ["data:application/ld+json;base64,e30="], ["data:application/ld+json;base64,e30="]),
        ("x", ["data:image/svg+xml;base64,PHN2Zz4="], ["[image/svg+xml, 5 bytes]"]),
        ("x", None, None),
        ("[" * 100_000 + "]" * 100_000, {"a": 1}, {"a": 1}),  # deeper than json parses
    ],
)
def test_what_the_log_keeps_of_structured(text, structured, kept):
    assert logged_structured(text, structured) == kept

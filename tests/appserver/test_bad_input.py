"""Bad input to ``agent-host app-server``: each is one JSON-RPC error with a stable code and a
one-line message, the server stays up, and nothing is written to any session."""

from __future__ import annotations

from pathlib import Path

from tests.appserver.client import Client
from tests.appserver.conftest import ASKING_ROOT_SCRIPT


def error_of(client: Client, method: str, params: object = None) -> tuple[int, str, str]:
    """The code, word and message of the error a request gets."""
    error = client.request(method, params)["error"]
    assert "\n" not in error["message"]
    return error["code"], error["data"]["code"], error["message"]


def stored(data: Path) -> dict[str, bytes]:
    """Every session log's bytes."""
    return {path.name: path.read_bytes() for path in data.glob("*.jsonl")}


def test_a_request_before_initialize_is_refused(clients) -> None:
    client = clients()
    assert error_of(client, "thread/list")[:2] == (-32002, "NOT_INITIALIZED")
    client.call("initialize", {"clientInfo": {"name": "t", "version": "1"}})
    assert error_of(client, "thread/list")[:2] == (-32002, "NOT_INITIALIZED")  # no initialized
    client.notify("initialized")
    assert client.call("thread/list") == {"threads": [], "nextCursor": None}
    again = error_of(client, "initialize", {"clientInfo": {"name": "t", "version": "1"}})
    assert again == (-32600, "INVALID_REQUEST", "initialize was already called")
    assert client.close()[0] == 0


def test_malformed_and_oversized_messages_and_unknown_methods(clients, tmp_path) -> None:
    client = clients()
    client.initialize()
    thread_id = client.call("thread/start")["thread"]["id"]
    before = stored(tmp_path / "data")
    client.send_raw(b"{not json\n")
    parse = client.expect(lambda m: "error" in m)
    assert (parse["id"], parse["error"]["code"]) == (None, -32700)
    client.send_raw(b"[1, 2]\n")
    assert client.expect(lambda m: "error" in m)["error"]["code"] == -32600
    client.send_raw(b'{"id": 7, "method": "x", "params": "y"}\n'.replace(b'"x"', b'"thread/list"'))
    assert client.expect(lambda m: "error" in m)["error"]["code"] == -32602
    client.send_raw(b'{"id": 8, "method": "turn/start", "params": {"text": "' + b"a" * (9 << 20) + b'"}}\n')
    large = client.expect(lambda m: "error" in m)
    assert (large["id"], large["error"]["code"], large["error"]["data"]["code"]) == (
        None, -32600, "TOO_LARGE",
    )
    client.send_raw(b'{"id": true, "method": "models/list"}\n')
    boolean = client.expect(lambda m: "error" in m)
    assert (boolean["id"], boolean["error"]["message"]) == (None, "id must be a string or a number")
    for params in (b"null", b"[]"):  # the id was read: the error answers it
        client.send_raw(b'{"id": 7, "method": "models/list", "params": ' + params + b"}\n")
        refused = client.expect(lambda m: m.get("id") == 7)["error"]
        assert (refused["code"], refused["message"]) == (-32602, "params must be an object")
    client.methods[2.5] = "models/list"
    client.send_raw(b'{"id": 2.5, "method": "models/list"}\n')
    assert client.expect(lambda m: m.get("id") == 2.5)["result"]["default"] == "scripted"
    assert error_of(client, "thread/fork")[:2] == (-32601, "METHOD_NOT_FOUND")
    assert client.call("models/list")["default"] == "scripted"  # still up
    assert stored(tmp_path / "data") == before
    assert thread_id in "".join(before)
    assert client.close()[0] == 0


def test_wrong_or_extra_params_and_unknown_or_foreign_threads(clients, tmp_path) -> None:
    client = clients()
    client.initialize()
    before = stored(tmp_path / "data")
    turn = "turn/start"
    text = [{"type": "text", "text": "hi"}]
    assert error_of(client, turn, {"threadId": 3, "input": text}) == (
        -32602, "INVALID_PARAMS", "invalid params: threadId: must be a string",
    )
    extra = error_of(client, turn, {"threadId": "a", "input": text, "mood": "x"})
    assert extra == (-32602, "INVALID_PARAMS", "invalid params: extra fields found (mood) @ $")
    image = error_of(client, turn, {"threadId": "a", "input": [{"type": "image", "text": "x"}]})
    assert image[:2] == (-32602, "INVALID_PARAMS")
    assert error_of(client, turn, {"threadId": "a", "input": []})[:2] == (-32602, "INVALID_INPUT")
    blank = {"threadId": "a", "input": [{"type": "text", "text": " \n"}]}
    assert error_of(client, turn, blank) == (-32602, "INVALID_INPUT", "input is empty")
    assert error_of(client, "thread/read", {"threadId": "nope"}) == (
        -32010, "UNKNOWN_THREAD", 'no thread "nope"',
    )
    assert error_of(client, "thread/read", {"threadId": "../x"})[:2] == (
        -32602, "INVALID_SESSION_ID",
    )
    assert error_of(client, turn, {"threadId": "nope", "input": text})[:2] == (
        -32010, "UNKNOWN_THREAD",
    )
    assert error_of(client, "thread/resume", {"threadId": "nope"})[:2] == (
        -32010, "UNKNOWN_THREAD",
    )
    assert stored(tmp_path / "data") == before
    assert client.close()[0] == 0


def test_a_flood_of_requests_is_answered_or_refused_and_the_server_stays_up(clients) -> None:
    client = clients()
    client.initialize()
    flood = range(100, 2100)
    client.methods.update(dict.fromkeys(flood, "thread/list"))
    client.send_raw(b"".join(
        b'{"jsonrpc": "2.0", "id": %d, "method": "thread/list"}\n' % n for n in flood
    ))
    answered = [client.expect(lambda m: "id" in m) for _ in flood]
    assert {m["id"] for m in answered} == set(flood)
    refused = [m for m in answered if "error" in m]
    assert all(m["error"]["data"]["code"] == "OVERLOADED" for m in refused)
    assert client.call("thread/list")["threads"] == []
    assert client.close()[0] == 0


def test_an_approval_request_nobody_answers_is_denied_by_the_policys_timeout(clients) -> None:
    client = clients(script=ASKING_ROOT_SCRIPT, policy="timeout = 1\n")
    client.initialize(approvals=True)
    thread_id = client.call("thread/start")["thread"]["id"]
    client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
    client.asked()  # never answered
    client.notification("turn/completed")
    decided = client.notifications("approval/decided")
    assert [(d["params"]["decision"], d["params"]["reason"]) for d in decided] == [
        ("denied", "no answer within 1 seconds")
    ]
    assert client.close()[0] == 0

"""``agent-host app-server`` over stdio, driven by a test client: a scripted turn with a
background child and a depth-2 approval, streamed text, replay by ``seq``, an interrupt while
a request waits, SIGKILL and resume, and a thread held by another process."""

from __future__ import annotations

from typing import Any

from agent_host_openai.testing import Stream, stream_chunks

from tests.appserver.client import Client, Message
from tests.appserver.conftest import ASKING_ROOT_SCRIPT
from tests.distributions import write_distribution


def start_thread(client: Client, text: str = "go") -> str:
    """A new thread with one message sent; its id."""
    thread_id: str = client.call("thread/start")["thread"]["id"]
    client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
    return thread_id


def approve(message: Message) -> Any:
    return {"decision": "approve"} if message["method"] == "approval/request" else None


def items_completed(client: Client, thread_id: str) -> list[dict[str, Any]]:
    return [
        n["params"]["item"]
        for n in client.notifications("item/completed")
        if n["params"]["threadId"] == thread_id
    ]


def run_tree(client: Client) -> str:
    """The tree scenario to its end (the settled child's notice answered); the thread id."""
    thread_id = start_thread(client)
    client.notification("item/completed", type="subagentSettled")
    client.notification("turn/completed")
    return thread_id


def tree_client(clients, answer=approve) -> tuple[Client, str]:
    """A client that ran the tree scenario, answering approvals with ``answer``."""
    client = clients()
    client.initialize(approvals=True)
    client.answer = answer
    return client, run_tree(client)


def test_a_turn_with_a_background_child_and_an_approval_from_depth_2(clients) -> None:
    client, thread_id = tree_client(clients)

    started = {n["params"]["label"]: n["params"] for n in client.notifications("subagent/started")}
    research, deep = started["research"], started["deep"]
    assert (research["parentId"], research["depth"]) == (thread_id, 1)
    first_turn = client.notifications("turn/started")[0]["params"]["turnId"]
    assert research["turnId"] == first_turn  # started by the root's first turn
    assert (deep["parentId"], deep["depth"]) == (research["subagentId"], 2)
    asked = [m for m in client.seen if m.get("method") == "approval/request"]
    assert len(asked) == 1 and "id" in asked[0]
    assert asked[0]["params"]["tool"] == "list_agents"
    assert asked[0]["params"]["origin"]["depth"] == 2
    assert asked[0]["params"]["origin"]["label"] == "deep"
    decided = client.notifications("approval/decided")
    assert [d["params"]["decision"] for d in decided] == ["approved"]

    items = items_completed(client, thread_id)
    kinds = [item["type"] for item in items]
    assert kinds.index("subagentReport") < kinds.index("subagentSettled")
    report = items[kinds.index("subagentReport")]
    assert report["text"].endswith("reported:\nFound it.")
    assert report["subagentId"] == research["subagentId"]
    seqs = [item["seq"] for item in items]
    assert seqs == sorted(seqs)  # in the stored order
    statuses = [
        n["params"]["status"]
        for n in client.notifications("subagent/status")
        if n["params"]["subagentId"] == research["subagentId"]
    ]
    assert statuses[0] == "running" and statuses[-1] == "settled"
    deep_statuses = [
        n["params"]["status"]
        for n in client.notifications("subagent/status")
        if n["params"]["subagentId"] == deep["subagentId"]
    ]
    assert deep_statuses[:3] == ["running", "waiting", "running"]

    read = client.call("thread/read", {"threadId": thread_id})
    assert read["items"] == items  # exactly what was announced, nothing more
    assert client.close()[0] == 0


def test_deltas_come_before_their_item_and_are_never_replayed(clients) -> None:
    client, thread_id = tree_client(clients)
    streams: dict[str, list[str]] = {}
    finished: set[str] = set()
    for message in client.notifications():
        params = message["params"]
        if message["method"] == "item/agentMessage/delta":
            assert params["itemId"] not in finished
            streams.setdefault(params["itemId"], []).append(params["delta"])
        elif message["method"] == "item/completed" and params.get("streamId"):
            finished.add(params["streamId"])
            assert "".join(streams[params["streamId"]]) == params["item"]["text"]
    assert streams and set(streams) == finished
    first = client.call("thread/read", {"threadId": thread_id})["items"]
    assert all(not item["id"].startswith("stream_") for item in first)


def test_a_denial_with_a_reason_reaches_the_model(clients) -> None:
    client, _ = tree_client(clients, lambda m: {"decision": "deny", "reason": "not now"})
    deep = next(
        n["params"] for n in client.notifications("subagent/started")
        if n["params"]["label"] == "deep"
    )
    items = client.call("thread/read", {"threadId": deep["subagentId"]})["items"]
    result = next(item for item in items if item["type"] == "toolResult")
    assert (result["text"], result["isError"]) == ("the user denied list_agents: not now", True)


def test_a_client_without_the_capability_gets_the_no_terminal_denial(clients) -> None:
    client = clients(script=ASKING_ROOT_SCRIPT)
    client.initialize()
    thread_id = start_thread(client)
    client.notification("turn/completed")
    assert not [m for m in client.seen if m.get("method") == "approval/request"]
    items = client.call("thread/read", {"threadId": thread_id})["items"]
    result = next(item for item in items if item["type"] == "toolResult")
    assert result["text"] == "the user denied list_agents: no terminal to ask"
    code, stderr = client.close()
    assert code == 0
    assert "agent-host: approval denied (no terminal to ask): " in stderr


def test_interrupting_a_turn_that_waits_for_an_unanswered_request(clients) -> None:
    client = clients(script=ASKING_ROOT_SCRIPT)
    client.initialize(approvals=True)
    thread_id = start_thread(client)
    client.asked()  # never answered
    assert client.call("turn/interrupt", {"threadId": thread_id}) == {}
    ended = client.notification("turn/completed")
    assert ended["params"]["stopReason"] == "interrupted"
    decided = client.notifications("approval/decided")  # recorded before the turn ended
    assert [d["params"]["decision"] for d in decided] == ["cancelled"]
    assert client.close()[0] == 0


def test_sigkill_then_resume_asks_the_open_request_again_and_reads_the_stored_log(
    clients,
) -> None:
    first = clients(script=ASKING_ROOT_SCRIPT)
    first.initialize(approvals=True)
    thread_id = start_thread(first)
    asked = first.asked()
    before = first.call("thread/read", {"threadId": thread_id})
    first.kill()

    second = clients(script={"user": ["Listed."]})
    second.initialize(approvals=True)
    assert second.call("thread/read", {"threadId": thread_id}) == before  # stored, not live
    not_live = second.request("turn/interrupt", {"threadId": thread_id})["error"]
    assert (not_live["code"], not_live["message"]) == (
        -32011, f'thread "{thread_id}" is not live here: resume it first',
    )
    resumed = second.call("thread/resume", {"threadId": thread_id})
    assert resumed["thread"]["id"] == thread_id
    again = second.asked()
    assert again["params"]["requestId"] == asked["params"]["requestId"]
    second.reply(again, {"decision": "approve"})
    second.notification("turn/completed")
    assert [m for m in second.seen if m.get("method") == "approval/request"] == [again]  # once
    after = second.call("thread/read", {"threadId": thread_id, "afterSeq": before["lastSeq"]})
    kinds = [item["type"] for item in after["items"]]
    assert kinds[0] == "toolResult"  # the call ran once it was approved
    assert second.close()[0] == 0


def start_child(label: str) -> dict[str, Any]:
    """A model reply starting the background child ``label``."""
    call = {"name": "subagent", "arguments": {"description": label, "prompt": "Go."}}
    return {"tool_calls": [call]}


WAITING_GRANDCHILD_SCRIPT = {
    "user": [start_child("research"), "Research is running."],
    "research": [start_child("deep"), "Deep is digging."],
    "deep": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Never."],
}
"""The root's background child starts a background grandchild whose ``list_agents`` call
the policy sends to the user; the child's turn ends while its grandchild waits."""


def test_sigkill_then_resume_asks_a_waiting_grandchilds_request_again(clients) -> None:
    first = clients(script=WAITING_GRANDCHILD_SCRIPT)
    first.initialize(approvals=True)
    thread_id = start_thread(first)
    asked = first.asked()
    deep = asked["params"]["origin"]["agentId"]
    assert asked["params"]["origin"]["depth"] == 2
    first.kill()

    second = clients(script={"deep": ["Dug."], "research": ["Research done."], "user": ["Noted."]})
    second.initialize(approvals=True)
    second.call("thread/resume", {"threadId": thread_id})
    again = second.asked()
    assert again["params"]["requestId"] == asked["params"]["requestId"]
    second.reply(again, {"decision": "approve"})
    second.notification("item/completed", type="subagentSettled")
    second.notification("turn/completed", threadId=thread_id)
    assert [m for m in second.seen if m.get("method") == "approval/request"] == [again]  # once
    items = second.call("thread/read", {"threadId": deep})["items"]
    results = [i for i in items if i["type"] == "toolResult"]
    assert len(results) == 1 and not results[0]["isError"]  # list_agents ran once
    decided = [n["params"]["decision"] for n in second.notifications("approval/decided")]
    assert decided == ["approved"]
    root_items = second.call("thread/read", {"threadId": thread_id})["items"]
    assert root_items[-1]["text"] == "Noted."  # the child's settlement reached the root
    assert second.close()[0] == 0


def test_replay_after_a_seq_then_live_with_no_gap_and_no_duplicate(clients) -> None:
    client, thread_id = tree_client(clients)
    everything = client.call("thread/read", {"threadId": thread_id})["items"]
    middle = everything[len(everything) // 2]["seq"]
    page = client.call("thread/read", {"threadId": thread_id, "afterSeq": middle, "limit": 2})
    assert [item["seq"] for item in page["items"]] == [
        item["seq"] for item in everything if item["seq"] > middle
    ][: len(page["items"])]
    client.call("thread/unsubscribe", {"threadId": thread_id})
    mark = len(client.seen)
    client.call("thread/subscribe", {"threadId": thread_id, "afterSeq": page["lastSeq"]})
    replayed = [
        m["params"]["item"] for m in client.seen[mark:] if m.get("method") == "item/completed"
    ]
    assert replayed == [item for item in everything if item["seq"] > page["lastSeq"]]
    client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "more"}]})
    client.notification("turn/completed")
    live = [m["params"]["item"] for m in client.seen[mark:] if m.get("method") == "item/completed"]
    stored = client.call("thread/read", {"threadId": thread_id, "afterSeq": page["lastSeq"]})
    assert live == stored["items"]  # every stored item once, in order


def test_a_thread_held_by_another_server_is_locked(clients) -> None:
    first = clients()
    first.initialize()
    thread_id = first.call("thread/start")["thread"]["id"]
    second = clients()
    second.initialize()
    refused = second.request("thread/resume", {"threadId": thread_id})
    assert refused["error"]["code"] == -32013
    assert refused["error"]["data"] == {"code": "LOCKED"}
    assert refused["error"]["message"] == f'thread "{thread_id}" is in use by another process'
    assert first.close()[0] == 0 and second.close()[0] == 0


def test_the_subagent_commands_answer_as_the_tools_do(clients) -> None:
    client, thread_id = tree_client(clients)
    started = {n["params"]["label"]: n["params"] for n in client.notifications("subagent/started")}
    research, deep = started["research"]["subagentId"], started["deep"]["subagentId"]

    listed = client.call("subagent/list", {"threadId": thread_id, "scope": "descendants"})
    assert listed["rows"] == [
        {
            "kind": "child", "id": research, "label": "research", "status": "ready",
            "parent": thread_id, "depth": 1,
        },
    ]  # settled, stored; the foreground grandchild is one-shot: not listed
    assert listed["text"] == f"{research} [ready] parent={thread_id} depth=1 — research"

    refused = client.request(
        "subagent/send", {"threadId": thread_id, "subagentId": deep, "text": "more"}
    )["error"]
    assert refused["message"] == (
        f'message was not delivered: subagent "{deep}" belongs to another parent session'
    )
    assert (refused["code"], refused["data"]["code"]) == (-32014, "UNAUTHORIZED")
    unknown = client.request(
        "subagent/send", {"threadId": thread_id, "subagentId": "sub_gone", "text": "more"}
    )["error"]
    assert (unknown["code"], unknown["message"]) == (
        -32015, 'message was not delivered: subagent "sub_gone" is unavailable',
    )
    itself = client.request(
        "subagent/interrupt", {"threadId": thread_id, "subagentId": thread_id}
    )["error"]
    assert itself["message"] == f'agent "{thread_id}" cannot interrupt itself'
    gone = client.call("subagent/interrupt", {"threadId": thread_id, "subagentId": "sub_gone"})
    assert gone == {"text": "interrupt requested for agent sub_gone", "accepted": True}
    foreign = client.request(
        "turn/start", {"threadId": research, "input": [{"type": "text", "text": "x"}]}
    )["error"]
    assert (foreign["code"], foreign["data"]["code"]) == (-32012, "NOT_A_ROOT")

    sent = client.call(
        "subagent/send", {"threadId": thread_id, "subagentId": research, "text": "More."}
    )
    assert sent["text"] == f"message queued as the next turn for subagent {research}"
    client.expect(
        lambda m: m.get("method") == "subagent/status"
        and m["params"]["subagentId"] == research and m["params"]["status"] == "running"
    )
    assert client.close()[0] == 0


def test_interrupting_a_turn_mid_stream_keeps_the_text_streamed_so_far(
    clients, server
) -> None:
    words = " ".join(f"word{n}" for n in range(40))
    server.reply(Stream(stream_chunks(words), pace=0.2))
    client = clients(env={"OPENAI_BASE_URL": server.url, "AGENT_HOST_MODEL": "m1"})
    client.initialize()
    thread_id = start_thread(client)
    first = client.notification("item/agentMessage/delta")
    assert client.call("turn/interrupt", {"threadId": thread_id}) == {}
    ended = client.notification("turn/completed")
    assert ended["params"]["stopReason"] == "interrupted"
    streamed = "".join(
        m["params"]["delta"] for m in client.notifications("item/agentMessage/delta")
    )
    assert first["params"]["delta"] == "word0" and streamed != words
    kept = [
        m["params"] for m in client.notifications("item/completed")
        if m["params"]["item"]["type"] == "agentMessage"
    ]
    assert [(k["item"]["text"], k["streamId"]) for k in kept] == [
        (streamed, first["params"]["itemId"])
    ]
    assert client.close()[0] == 0


ASKING_SCRIPT = {
    "user": [
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which branch?",
                                                           "choices": ["main", "dev"]}}]},
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Ship it?"}}]},
        "Done.",
    ],
}


def test_ask_user_questions_go_to_a_client_that_takes_user_input(clients) -> None:
    client = clients(script=ASKING_SCRIPT)
    client.initialize(userInput=True)
    replies = iter([{"answer": "dev"}, {"decline": True, "reason": "not sure"}])
    client.answer = lambda m: next(replies) if m["method"] == "userInput/request" else None
    thread_id = start_thread(client)
    client.notification("turn/completed")
    asked = [m["params"] for m in client.seen if m.get("method") == "userInput/request"]
    assert [(a["question"], a["choices"]) for a in asked] == [
        ("Which branch?", ["main", "dev"]), ("Ship it?", None),
    ]
    assert asked[0]["origin"]["agentId"] == thread_id
    items = client.call("thread/read", {"threadId": thread_id})["items"]
    results = [(i["text"], i["isError"]) for i in items if i["type"] == "toolResult"]
    assert results == [("dev", False), ("the user did not answer: not sure", True)]
    decided = [n["params"]["decision"] for n in client.notifications("approval/decided")]
    assert decided == ["answered", "denied"]


def test_a_followed_subagent_streams_again_when_sent_more_after_it_settled(clients) -> None:
    client = clients()
    client.initialize(approvals=True)
    client.answer = approve
    thread_id = start_thread(client)
    research = client.notification("subagent/started", label="research")["params"]["subagentId"]
    client.call("thread/subscribe", {"threadId": research})
    client.notification("item/completed", type="subagentSettled")
    client.notification("turn/completed")
    mark = len(client.seen)
    client.call("subagent/send", {"threadId": thread_id, "subagentId": research, "text": "More."})
    client.expect(
        lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == research
    )
    deltas = [
        m["params"]["delta"] for m in client.seen[mark:]
        if m.get("method") == "item/agentMessage/delta" and m["params"]["threadId"] == research
    ]
    assert "".join(deltas) == "scripted reply: More."


def test_a_resumed_thread_knows_its_stored_subagents(clients) -> None:
    first, thread_id = tree_client(clients)
    research = next(
        n["params"]["subagentId"] for n in first.notifications("subagent/started")
        if n["params"]["label"] == "research"
    )
    assert first.close()[0] == 0
    second = clients(script={"research": ["Nothing more."]})
    second.initialize()
    second.call("thread/resume", {"threadId": thread_id})
    second.call("subagent/send", {"threadId": thread_id, "subagentId": research, "text": "More."})
    second.notification("subagent/status", subagentId=research, status="settled")
    statuses = [
        n["params"]["status"] for n in second.notifications("subagent/status")
        if n["params"]["subagentId"] == research
    ]
    assert statuses[0] == "running" and statuses[-1] == "settled"
    assert second.notifications("subagent/started") == []  # known from storage, not new


CHATTY = """
from host import hookimpl
from host.tools import tool


@tool(name="chatty")
async def chatty() -> str:
    \"\"\"Print to stdout, as careless code does.\"\"\"
    print("noise on stdout")
    return "said it"


@hookimpl
def register_tools(register):
    register(chatty)
"""


def test_stdout_carries_protocol_messages_only(clients, tmp_path) -> None:
    site = tmp_path / "site"
    write_distribution(site, "chatty", entry_points={"chatty": "chatty"}, modules={"chatty": CHATTY})
    script = {"user": [{"tool_calls": [{"name": "chatty", "arguments": {}}]}, "Done."]}
    client = clients(script=script, env={"PYTHONPATH": str(site)})
    client.initialize()
    thread_id = start_thread(client)  # every line read is parsed as JSON and checked
    client.notification("turn/completed")
    items = client.call("thread/read", {"threadId": thread_id})["items"]
    assert [i["text"] for i in items if i["type"] == "toolResult"] == ["said it"]
    code, stderr = client.close()
    assert code == 0 and "noise on stdout\n" in stderr

"""The authorization audit: caller relations × operations through the real tools (docs/reliability.md).

The tree (every child continuable, resident and running, held in its first model call)::

    R ── A ── T ── C          S (a stranger root)
    │    └─── AB
    └─── B ── BB

``T`` is the target. Relations of the caller to ``T``: self (T), parent (A), grandparent (R),
sibling (AB), cousin (BB), child (C), stranger root (S), forged object (a new ``Agent`` object
carrying the id of the caller the operation would accept), no agent. A second tree covers the
stale agent object and the same-id replacement: root ``P`` whose child ``Q`` settled, then
``P`` disposed and resumed as ``P2`` (stale = the old ``P``; for ``report``, the settled
``Q``'s old object).

Every refusal is the exact text of docs/subagents.md and writes nothing: every file under the test's
directory is compared byte for byte before and after the call. ``list_agents`` needs no
authority: it always lists the caller's own subtree (by the calling object's id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host.agents import say
from host.sessions.model import InboxAccepted
from tests.reliability.hosts import QUIET, Tree
from tests.support import forged

ALLOWED = "allowed"


async def build_live(tree: Tree) -> dict[str, Any]:
    r = await tree.root("R")
    s = await tree.root("S")
    a = await tree.child(r, "A")
    b = await tree.child(r, "B")
    t = await tree.child(a, "T")
    ab = await tree.child(a, "AB")
    bb = await tree.child(b, "BB")
    c = await tree.child(t, "C")
    return {"R": r, "S": s, "A": a, "B": b, "T": t, "AB": ab, "BB": bb, "C": c}


def op_args(op: str, target: str) -> dict[str, Any]:
    return {
        "send_message": {"subagent_id": target, "message": "do more"},
        "interrupt_agent": {"agent_id": target},
        "report": {"output": "found it"},
        "list_agents": {},
    }[op]


def expected(op: str, relation: str, n: dict[str, Any], caller: Any) -> Any:
    """``ALLOWED``, a list of listed ids (``list_agents``), or the exact error text."""
    t = n["T"].id
    cid = getattr(caller, "id", None)
    if caller is None:
        return f"{op} requires a calling agent"
    if op == "send_message":
        if relation == "parent":
            return ALLOWED
        if relation == "forged":
            return f'message was not delivered: subagent "{t}" delivery requires the exact live parent agent'
        return f'message was not delivered: subagent "{t}" belongs to another parent session'
    if op == "interrupt_agent":
        if relation in ("parent", "grandparent"):
            return ALLOWED
        if relation == "self":
            return f'agent "{t}" cannot interrupt itself'
        if relation == "forged":
            return f'interrupting "{t}" requires the exact live ancestor agent'
        return f'subagent "{t}" is not a live descendant of agent "{cid}"'
    if op == "report":
        if relation in ("self", "parent", "sibling", "cousin", "child"):
            return ALLOWED
        return f'agent "{cid}" is not a live continuable subagent and cannot report'
    own = {"R": ["A", "B"], "S": [], "A": ["T", "AB"], "B": ["BB"], "T": ["C"]}
    name = next(k for k, v in n.items() if v.id == cid)
    return sorted(n[k].id for k in own.get(name, []))


def caller_for(op: str, relation: str, n: dict[str, Any]) -> Any:
    if relation == "none":
        return None
    if relation == "forged":  # a copy of the caller the operation would accept
        return forged(n[{"report": "T", "list_agents": "R"}.get(op, "A")])
    return n[
        {
            "self": "T",
            "parent": "A",
            "grandparent": "R",
            "sibling": "AB",
            "cousin": "BB",
            "child": "C",
            "stranger": "S",
        }[relation]
    ]


RELATIONS = [
    "self",
    "parent",
    "grandparent",
    "sibling",
    "cousin",
    "child",
    "stranger",
    "forged",
    "none",
]
OPS = ["list_agents", "report", "send_message", "interrupt_agent"]  # read-only first


async def run_row(tree: Tree, n: dict[str, Any], op: str, caller: Any) -> tuple[Any, Any]:
    """(what happened, a snapshot check): the outcome in the table's terms."""
    scope_of = n["T"] if op == "report" else None
    before = tree.files()
    result = await tree.tool(op, op_args(op, n["T"].id), caller, scope_of=scope_of)
    if result.is_error:
        assert tree.files() == before, f"{op} refused but wrote something"
        return result.text, None
    if op == "list_agents":
        return sorted(row["id"] for row in result.structured), None
    return ALLOWED, result


async def test_relations_by_operations(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "data", config=QUIET)
    try:
        n = await build_live(tree)
        mismatches = []
        rows = [(op, rel) for op in OPS for rel in RELATIONS]
        assert len(rows) == 36
        # refusals first within each operation, so an accepted interrupt cannot change the
        # state a later row of the same operation sees
        rows.sort(
            key=lambda row: (
                OPS.index(row[0]),
                expected(row[0], row[1], n, caller_for(row[0], row[1], n)) == ALLOWED,
            )
        )
        for op, relation in rows:
            caller = caller_for(op, relation, n)
            want = expected(op, relation, n, caller)
            got, result = await run_row(tree, n, op, caller)
            if got != want:
                mismatches.append((op, relation, want, got))
                continue
            if op == "send_message" and got == ALLOWED:
                last = [e.body for e in n["T"].session.events if isinstance(e.body, InboxAccepted)][
                    -1
                ]
                assert last.message_id == result.structured["message_id"]
                assert last.source == {"kind": "coordinator", "sender_session_id": n["A"].id}
            if op == "report" and got == ALLOWED:
                parent = tree.agents.get(caller.session.header.parent_session)
                last = [e.body for e in parent.session.events if isinstance(e.body, InboxAccepted)][
                    -1
                ]
                assert last.content == f"Background subagent {caller.id} reported:\nfound it"
                assert last.delivery == "inject"  # quiet, from config, never the model
        assert mismatches == []
    finally:
        await tree.aclose()


async def test_stale_object_and_same_id_replacement(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "data", config=QUIET)
    try:
        p = await tree.root("P")
        q = await tree.child(p, "Q", held=False)
        await tree.settled(q.id, p)
        await p.dispose()
        p2 = await tree.agents.resume(p.id, label="P")
        qid = q.id
        stale_send = f'message was not delivered: subagent "{qid}" delivery requires the exact live parent agent'
        cases = [
            ("send_message", p, {"subagent_id": qid, "message": "x"}, stale_send),
            ("interrupt_agent", p, {"agent_id": qid}, f"interrupt requested for agent {qid}"),
            (
                "report",
                q,
                {"output": "late"},
                f'agent "{qid}" is not a live continuable subagent and cannot report',
            ),
            (
                "report",
                p,
                {"output": "x"},
                f'agent "{p.id}" is not a live continuable subagent and cannot report',
            ),
            (
                "report",
                p2,
                {"output": "x"},
                f'agent "{p.id}" is not a live continuable subagent and cannot report',
            ),
            (
                "list_agents",
                p,
                {},
                f"{qid} [ready] — Q\n{{holder}} [running] — holder",
            ),  # read-only, by the object's id
            ("interrupt_agent", p2, {"agent_id": qid}, f"interrupt requested for agent {qid}"),
            ("list_agents", p2, {}, f"{qid} [ready] — Q\n{{holder}} [running] — holder"),
        ]
        holder = await tree.child(p2, "holder")  # a child scope that holds a report tool
        for op, caller, args, want in cases:
            before = tree.files()
            if op == "report":
                result = await tree.tool(op, args, caller, scope_of=holder)
            else:
                result = await tree.tool(op, args, caller)
            assert result.text == want.replace("{holder}", holder.id), (op, caller)
            if op != "list_agents":  # listing may write the identity index (derived data)
                assert tree.files() == before, (op, "wrote something")
        # the replacement is the exact live parent: it may resume the child
        tree.model.script("Q", say("again"))
        result = await tree.tool("send_message", {"subagent_id": qid, "message": "more"}, p2)
        assert result.text == f"message queued as the next turn for subagent {qid}"
        await tree.settled(qid, p2)
    finally:
        await tree.aclose()


HOSTILE = [
    "../etc/passwd",
    "..",
    "a/b",
    "/tmp/x",
    "\x00",
    "sub\x00x",
    "x" * 4096,
    "ｓｕｂ＿ｆｕｌｌｗｉｄｔｈ",  # fullwidth
    "\u202esub",  # right-to-left override
    "",
    " lead",
    "trail\n",
    "-dash",
    "name.jsonl",
]


def confusable(real: str) -> str:
    """``real`` with its first latin letter swapped for a Cyrillic look-alike."""
    swap = {"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "x": "х", "s": "ѕ", "u": "ս"}
    for index, char in enumerate(real):
        if char in swap:
            return real[:index] + swap[char] + real[index + 1 :]
    return real + "\u200b"  # zero-width space


async def test_hostile_ids_and_arguments(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "data", config=QUIET)
    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")
        ids = [*HOSTILE, confusable(t.id), t.id.upper(), t.id + "\u200b"]
        for bad in ids:
            before = tree.files()
            sent = await tree.tool("send_message", {"subagent_id": bad, "message": "x"}, r)
            assert sent.is_error
            assert sent.text == f'message was not delivered: subagent "{bad}" is unavailable'
            stopped = await tree.tool("interrupt_agent", {"agent_id": bad}, r)
            # a missing target is an accepted no-op (docs/subagents.md): it names nothing, touches nothing
            assert stopped.text == f"interrupt requested for agent {bad}"
            assert tree.files() == before, repr(bad)
        # hostile *content* is data: stored verbatim, one JSON line, nothing outside data_dir
        for content in ["../../x", "a\x00b", "y" * 4096, '\u202e\n{"seq":0}\n', "ｆｕｌｌ"]:
            sent = await tree.tool("send_message", {"subagent_id": t.id, "message": content}, r)
            assert not sent.is_error, sent.text
            reported = await tree.tool("report", {"output": content}, t, scope_of=t)
            assert not reported.is_error, reported.text
        stored = await tree.services.session_persistence.inspect(t.id)
        contents = [e.body.content for e in stored.events if isinstance(e.body, InboxAccepted)]
        assert contents[-5:] == ["../../x", "a\x00b", "y" * 4096, '\u202e\n{"seq":0}\n', "ｆｕｌｌ"]
        assert stored.ignored_bytes == 0
        stored_r = await tree.services.session_persistence.inspect(r.id)
        assert [e.body.content for e in stored_r.events if isinstance(e.body, InboxAccepted)][
            -1
        ] == (f"Background subagent {t.id} reported:\nｆｕｌｌ")
        outside = {p.name for p in tmp_path.iterdir()}
        assert outside == {"data"}
        # a hostile scope is refused by argument validation, before anything runs
        before = tree.files()
        for scope in ["../x", "\x00", "descendants ", "ｃｈｉｌｄｒｅｎ", "z" * 4096]:
            listed = await tree.tool("list_agents", {"scope": scope}, r)
            assert listed.is_error and listed.text.startswith("invalid arguments for list_agents: ")
        assert tree.files() == before
        # a huge report is refused with the plugin's limit text, nothing delivered
        huge = "z" * 100_001
        before = tree.files()
        refused = await tree.tool("report", {"output": huge}, t, scope_of=t)
        assert refused.text == (
            "report output is 100001 characters, more than the limit of 100000; "
            "report was not delivered"
        )
        assert tree.files() == before
    finally:
        await tree.aclose()


@pytest.mark.parametrize("op", OPS)
async def test_no_agent_is_refused_for_every_operation(tmp_path: Path, op: str) -> None:
    tree = Tree(tmp_path / "data", config=QUIET)
    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")
        before = tree.files()
        result = await tree.tool(
            op, op_args(op, t.id), None, scope_of=t if op == "report" else None
        )
        assert (result.is_error, result.text) == (True, f"{op} requires a calling agent")
        assert tree.files() == before
    finally:
        await tree.aclose()

"""``Tree``: the subagent tree the terminal client keeps from session appends, and its status
line. Fed real ``Event`` bodies by hand (an injected clock), then by a real host's
``SessionStore.observe``."""

from __future__ import annotations

from collections.abc import Sequence

from host.agents import say
from host.clients.tree import Tree
from host.sessions.model import (
    ApprovalDecided,
    ApprovalOrigin,
    ApprovalRequested,
    Event,
    EventBody,
    InboxAccepted,
    MessageEvent,
    TurnEnd,
    TurnStart,
)
from host.sessions.store import Session
from host.subagents.types import ChildRequest, MessageSource
from host.testing import HostHarness
from tests.support import Gate


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def events(*bodies: EventBody) -> list[Event]:
    return [Event(seq, body) for seq, body in enumerate(bodies)]


def start() -> list[Event]:
    return events(TurnStart("t1"))


def end(stop: str = "completed") -> list[Event]:
    return events(TurnEnd("t1", stop))  # type: ignore[arg-type]


def said(text: str = "hello") -> list[Event]:
    return events(MessageEvent(role="assistant", content=text))


def settled_notice(sender: str) -> list[Event]:
    source = MessageSource("subagent-settled", sender).as_dict()
    return events(InboxAccepted("msg_1", "followup", f"{sender} finished", source))


def tree(labels: dict[str, str] | None = None, clock: Clock | None = None) -> Tree:
    known = {} if labels is None else labels
    return Tree("root", known.get, clock or Clock())


def test_membership_follows_the_parent_chain_and_ignores_other_sessions() -> None:
    made = tree()
    assert made.observe("a", "root", said())
    assert made.observe("a1", "a", said())
    assert not made.observe("stranger", "elsewhere", said())
    assert not made.observe("orphan", None, said())
    assert not made.observe("root", None, start())  # the root itself is no member
    assert [(m.id, m.parent_id, m.depth) for m in made.members()] == [
        ("a", "root", 1),
        ("a1", "a", 2),
    ]
    assert made.get("stranger") is None and made.get("root") is None


def test_a_session_whose_parent_was_never_seen_stays_out() -> None:
    made = tree()
    assert not made.observe("a1", "a", said())  # its parent is not (yet) a member
    made.observe("a", "root", said())
    assert [m.id for m in made.members()] == ["a"]


def test_members_are_in_pre_order_of_appearance() -> None:
    made = tree()
    for session, parent in [("a", "root"), ("b", "root"), ("a1", "a"), ("b1", "b"), ("a2", "a")]:
        made.observe(session, parent, said())
    made.observe("a1x", "a1", said())
    assert [m.id for m in made.members()] == ["a", "a1", "a1x", "a2", "b", "b1"]
    assert [m.depth for m in made.members()] == [1, 2, 3, 2, 1, 2]


def test_only_lifecycle_changes_report_changed() -> None:
    made = tree()
    assert made.observe("a", "root", said())  # joined
    assert not made.observe("a", "root", said())  # a plain message: no redraw
    assert made.observe("a", "root", start())
    member = made.get("a")
    assert member is not None and member.status == "running"
    assert not made.observe("a", "root", start())  # already running
    assert not made.observe("a", "root", said("still working"))
    assert made.observe("a", "root", end())
    assert member.status == "idle"
    assert not made.observe("a", "root", end())  # already idle
    assert not made.observe("stranger", "nowhere", start())


def test_a_turn_in_one_append_that_starts_and_ends_is_a_change() -> None:
    made = tree()
    made.observe("a", "root", said())
    both = events(
        TurnStart("t1"), MessageEvent(role="assistant", content="x"), TurnEnd("t1", "completed")
    )
    assert [change.status for change in made.observe("a", "root", both)] == ["running", "idle"]
    assert made.get("a").status == "idle"


def test_a_settlement_notice_on_the_parent_marks_the_sender_settled() -> None:
    made = tree()
    made.observe("a", "root", start())
    made.observe("a1", "a", start())
    made.observe("a1", "a", end())
    assert made.observe("a", "root", settled_notice("a1"))  # the notice reaches a1's parent
    assert made.get("a1").status == "settled"
    assert made.get("a").status == "running"
    assert not made.observe("a", "root", settled_notice("a1"))  # already settled
    report = MessageSource("subagent-report", "a").as_dict()
    assert not made.observe("root", None, events(InboxAccepted("m", "followup", "r", report)))
    assert made.get("a").status == "running"
    made.observe("a", "root", end())
    assert made.observe("root", None, settled_notice("a"))
    assert made.get("a").status == "settled"
    assert not made.observe("root", None, settled_notice("unknown"))


def request(request_id: str, agent_id: str) -> list[Event]:
    origin = ApprovalOrigin(agent_id, agent_id, depth=1)
    return events(ApprovalRequested(request_id, "shell", {}, "call_1", origin))


def test_a_member_waits_while_a_request_it_made_is_open_in_the_roots_log() -> None:
    made = tree({"a": "research"})
    made.observe("a", "root", start())
    assert [c.status for c in made.observe("root", None, request("apr_1", "a"))] == ["waiting"]
    assert made.status_line() == "subagents: 1 waiting"
    assert not made.observe("root", None, request("apr_2", "stranger"))
    decided = events(ApprovalDecided("apr_1", "approved"))
    assert [c.status for c in made.observe("root", None, decided)] == ["running"]
    made.observe("root", None, request("apr_3", "a"))
    assert [c.status for c in made.observe("a", "root", end())] == ["idle"]  # cancelled, ended
    assert not made.observe("root", None, events(ApprovalDecided("apr_3", "cancelled")))
    assert made.get("a").status == "idle"


def test_sent_more_a_settled_member_runs_again() -> None:
    made = tree()
    made.observe("a", "root", said())
    made.observe("root", None, settled_notice("a"))
    assert made.observe("a", "root", start())
    assert made.get("a").status == "running"


def test_labels_are_looked_up_when_first_known() -> None:
    labels: dict[str, str] = {}
    made = tree(labels)
    made.observe("a", "root", said())
    assert made.get("a").label is None and made.get("a").name == "a"
    labels["a"] = "research"
    made.observe("a", "root", said())
    assert made.get("a").label == "research" and made.get("a").name == "research"
    labels["a"] = "renamed"
    made.observe("a", "root", said())
    assert made.get("a").label == "research"  # looked up once found


def test_status_line_counts_and_names_the_running_with_their_idle_time() -> None:
    clock = Clock()
    made = tree({"a": "research", "b": "tests", "c": "docs"}, clock)
    made.observe("a", "root", start())
    clock.now += 3
    made.observe("b", "root", start())
    made.observe("c", "root", said())
    made.observe("d", "root", said())
    made.observe("root", None, settled_notice("d"))
    clock.now += 1
    assert made.status_line() == (
        "subagents: 2 running (research 4s, tests 1s) · 1 idle · 1 settled"
    )
    clock.now += 120
    made.observe("b", "root", said())  # activity resets its time
    clock.now += 2
    assert made.status_line() == (
        "subagents: 2 running (research 2m, tests 2s) · 1 idle · 1 settled"
    )
    clock.now += 7200
    made.observe("b", "root", end())
    assert made.status_line() == "subagents: 1 running (research 2h) · 2 idle · 1 settled"


def test_status_line_leaves_out_empty_counts() -> None:
    made = tree({"a": "research"})
    made.observe("a", "root", said())
    assert made.status_line() == "subagents: 1 idle"
    made.observe("root", None, settled_notice("a"))
    assert made.status_line() == "subagents: 1 settled"


def test_status_line_is_cut_to_the_width_with_an_ellipsis() -> None:
    made = tree({"a": "research"})
    made.observe("a", "root", start())
    full = "subagents: 1 running (research 0s)"
    assert made.status_line() == full
    assert made.status_line(len(full)) == full
    assert made.status_line(20) == full[:19] + "…"
    assert len(made.status_line(20)) == 20
    assert made.status_line(1) == "…"
    assert made.status_line(0) == "…"


def test_status_line_is_empty_without_members() -> None:
    made = tree()
    assert made.status_line() == ""
    made.observe("stranger", "elsewhere", start())
    assert made.status_line() == ""


class Observed:
    """What a real host's store reports to an observer, folded into a ``Tree``."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.changes: list[str] = []

    def __call__(self, session: Session, appended: Sequence[Event]) -> None:
        if self.tree.observe(session.id, session.header.parent_session, appended):
            self.changes.append(self.tree.status_line())


async def test_a_real_hosts_appends_keep_the_tree(harness: HostHarness) -> None:
    root = await harness.root()

    def label_of(agent_id: str) -> str | None:
        agent = harness.agents.get(agent_id)
        return agent.label if agent is not None else None

    observed = Observed(Tree(root.id, label_of))
    stop = harness.services.sessions.observe(observed)
    gate = Gate()
    harness.model.script("research", gate.reply(say("found it")))
    started = await harness.subagents.start_continuable(
        "spawn", ChildRequest("look"), parent=root, label="research"
    )
    await gate.entered.wait()
    member = observed.tree.get(started.child_id)
    assert member is not None
    assert (member.label, member.depth, member.status) == ("research", 1, "running")
    assert observed.tree.status_line().startswith("subagents: 1 running (research ")
    gate.open()
    await harness.settled(started.child_id, root)
    stop()
    assert member.status == "settled"
    # joined, started, ended, settled: one redraw each, none per message
    assert observed.changes == [
        "subagents: 1 idle",
        "subagents: 1 running (research 0s)",
        "subagents: 1 idle",
        "subagents: 1 settled",
    ]

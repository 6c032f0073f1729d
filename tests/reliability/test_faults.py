"""Fault injection: failing persistence calls and broken plugins, through a real host.

``Faulty`` (``tests.reliability.faulty``) is the real JSONL persistence installed as the
``session_persistence`` service, failing chosen calls. The contract checked:

* listing — a failed ``inspect`` is one ``unavailable`` row, retried next time; a failed
  ``list`` fails the whole call;
* appends — a failure surfaces to the caller (tool error text), nothing is half-written and the
  in-memory log does not move; the real writer under a real ``EFBIG`` truncates its partial
  write;
* cold resume — a failed ``inspect``/``load``/``open_writer`` leaves the child cold (not live,
  not resident, not locked) and a later ``send_message`` resumes it;
* plugins that raise in import, hooks, activation, tool execution and disposal are isolated:
  the host keeps serving the rest.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import signal
from pathlib import Path
from typing import Any

import pytest

from host import hookimpl
from host.agents import call, say
from host.plugins.discovery import PluginCandidate
from host.sessions.jsonl import JsonlPersistence
from host.sessions.loading import load
from host.sessions.model import Event, InboxAccepted, MessageEvent, SessionHeader
from host.sessions.persistence import PersistenceError
from host.tools import Tool, ToolExec, tool
from tests.reliability import faulty as faulty_module
from tests.reliability.faulty import BOOM, DISABLE_BUILTIN, Faulty, FaultyPlugin
from tests.reliability.hosts import QUIET, Tree
from tests.support import tool_messages


def faulty_tree(tmp_path: Path) -> tuple[Tree, Faulty]:
    plugin = FaultyPlugin()
    tree = Tree(
        tmp_path / "data", config=QUIET, environ=DISABLE_BUILTIN, extra=((plugin.name, plugin),)
    )
    persistence = tree.services.session_persistence
    assert isinstance(persistence, Faulty)
    return tree, persistence


async def test_listing_maps_faults_to_the_contract(tmp_path: Path) -> None:
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        done = await tree.child(r, "done", held=False)
        await tree.settled(done.id, r)
        other = await tree.child(r, "other", held=False)
        await tree.settled(other.id, r)
        live = await tree.child(r, "live")
        (tree.data_dir / ".index" / "identity.jsonl").unlink()  # force inspections
        faulty.fail_inspect.add(done.id)
        listed = await tree.tool("list_agents", {}, r)
        assert listed.text.split("\n") == [
            f"{done.id} [diagnostic: unavailable]",
            f"{other.id} [ready] — other",
            f"{live.id} [running] — live",
        ]
        faulty.clear()  # not cached: the next listing tries again
        listed = await tree.tool("list_agents", {"scope": "descendants"}, r)
        assert listed.text.split("\n")[0] == f"{done.id} [ready] parent={r.id} depth=1 — done"
        faulty.fail_list = True  # a failing enumeration fails the whole call
        before = tree.files()
        for scope in ("children", "descendants"):
            failed = await tree.tool("list_agents", {"scope": scope}, r)
            assert failed.is_error and failed.text.startswith("list_agents failed (UNAVAILABLE): ")
        assert tree.files() == before
    finally:
        await tree.aclose()


async def test_append_failures_surface_and_write_nothing(tmp_path: Path) -> None:
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")
        before, events = tree.files(), len(t.session.events)
        faulty.fail_append.add(t.id)
        sent = await tree.tool("send_message", {"subagent_id": t.id, "message": "x"}, r)
        assert sent.text == f"message was not delivered: {sent.text.split(': ', 1)[1]}"
        assert "injected fault" in sent.text
        assert len(t.session.events) == events and t.inbox.pending() == ()
        faulty.fail_append = {r.id}  # the parent's log refuses the report
        reported = await tree.tool("report", {"output": "found"}, t, scope_of=t)
        assert reported.is_error and "injected fault" in reported.text
        assert tree.files() == before  # nothing written anywhere
        faulty.clear()
        sent = await tree.tool("send_message", {"subagent_id": t.id, "message": "y"}, r)
        reported = await tree.tool("report", {"output": "found"}, t, scope_of=t)
        assert not sent.is_error and not reported.is_error
        stored = await faulty.inner.inspect(t.id)
        assert [e.body.content for e in stored.events if isinstance(e.body, InboxAccepted)][
            -1
        ] == "y"
    finally:
        await tree.aclose()


def test_real_short_write_is_truncated_never_half_a_line(tmp_path: Path) -> None:
    """A real ``EFBIG`` (``RLIMIT_FSIZE``) mid-append: the writer truncates its partial write."""
    persistence = JsonlPersistence(tmp_path, fsync="never")
    writer = persistence.open_writer(SessionHeader(id="s"), create=True)
    writer.append([Event(0, MessageEvent(role="user", content="small"))])
    size = persistence.path_for("s").stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))
        with pytest.raises(PersistenceError) as caught:
            writer.append([Event(1, MessageEvent(role="user", content="z" * 10_000))])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert caught.value.code == PersistenceError.PERSISTENCE_FAILED
    assert persistence.path_for("s").stat().st_size == size  # the partial line is gone
    writer.append([Event(1, MessageEvent(role="user", content="after"))])  # still usable
    writer.close()
    stored = asyncio.run(persistence.inspect("s"))
    assert [e.body.content for e in stored.events] == ["small", "after"]
    assert stored.ignored_bytes == 0


@pytest.mark.parametrize("where", ["inspect", "load", "open"])
async def test_resume_failures_leave_the_child_cold_and_resumable(
    tmp_path: Path, where: str
) -> None:
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        q = await tree.child(r, "Q", held=False)
        await tree.settled(q.id, r)
        getattr(faulty, f"fail_{where}").add(q.id)
        before = tree.files()
        sent = await tree.tool("send_message", {"subagent_id": q.id, "message": "again"}, r)
        assert sent.text == f'message was not delivered: subagent "{q.id}" is unavailable'
        assert tree.files() == before
        assert tree.agents.get(q.id) is None and tree.services.sessions.get(q.id) is None
        assert tree.subagents.manager().activation(q.id) is None
        faulty.clear()
        tree.model.script("Q", say("resumed"))
        sent = await tree.tool("send_message", {"subagent_id": q.id, "message": "again"}, r)
        assert sent.text == f"message queued as the next turn for subagent {q.id}"
        await tree.settled(q.id, r)
        stored = await faulty.inner.inspect(q.id)
        assert [e.body.content for e in stored.events if isinstance(e.body, MessageEvent)][
            -1
        ] == "resumed"
    finally:
        await tree.aclose()


# -- broken plugins -------------------------------------------------------------------------


def broken_import() -> Any:
    raise ImportError("no module named broken_dependency")


class BrokenHook:
    name = "broken_hook"

    @hookimpl
    def register_tools(self, register: Any) -> None:
        raise RuntimeError("hook exploded")


class BrokenActivation:
    name = "broken_activation"

    @hookimpl
    def activate(self, ctx: Any, scope: Any) -> None:
        raise RuntimeError("activation exploded")


class BrokenDisposal:
    name = "broken_disposal"

    @hookimpl
    def activate(self, ctx: Any, scope: Any) -> None:
        def dispose() -> None:
            raise RuntimeError("disposal exploded")

        scope.add(dispose)


def exploding_tool() -> Tool:
    import attrs

    @attrs.frozen
    class Args:
        text: str = attrs.field(metadata={"description": "anything"})

    @tool("explode", "Always raises.", Args)
    async def explode(args: Any, exec: ToolExec) -> str:
        raise RuntimeError("tool exploded")

    return explode


class BrokenTool:
    name = "broken_tool"

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(exploding_tool())


async def test_broken_plugins_are_isolated(tmp_path: Path) -> None:
    importer = PluginCandidate(
        name="broken_import", load=broken_import, entry_point="broken:plugin"
    )
    extra = (
        importer,
        (BrokenHook.name, BrokenHook()),
        (BrokenActivation.name, BrokenActivation()),
        (BrokenDisposal.name, BrokenDisposal()),
        (BrokenTool.name, BrokenTool()),
    )
    tree = Tree(tmp_path / "data", config=QUIET, extra=extra)
    closed = False
    try:
        rows = {row["name"]: row for row in tree.host.plugin_rows()}
        for name in ("broken_import", "broken_hook", "broken_activation"):
            assert rows[name]["state"] == "failed", rows[name]
        assert (
            "exploded" in rows["broken_hook"]["error"]
            and "exploded" in rows["broken_activation"]["error"]
        )
        for name in (
            "subagent_control",
            "list_agents",
            "subagent_report",
            "broken_disposal",
            "broken_tool",
        ):
            assert rows[name]["state"] == "active", rows[name]
        # the rest keeps serving: a parent runs a turn that calls the raising tool, then
        # starts work through the service and talks to the child through the tools
        r = await tree.root("R")
        tree.model.script("R", call("explode", text="x"), say("carried on"))
        r.followup("go")
        await r.wait_idle()
        results = tool_messages(r)
        assert (
            results[-1].is_error
            and results[-1].content == "explode failed: RuntimeError: tool exploded"
        )
        assert r.last_answer == "carried on"
        t = await tree.child(r, "T")
        sent = await tree.tool("send_message", {"subagent_id": t.id, "message": "more"}, r)
        assert not sent.is_error
        tree.release.set()
        await tree.settled(t.id, r)
        closed = True
        failures = await tree.aclose()  # disposal failures are reported (returned) …
        assert [f.plugin for f in failures] == ["broken_disposal"]
        assert "disposal exploded" in failures[0].line()
        stored = await JsonlPersistence(tree.data_dir).inspect(t.id)  # … after sessions flushed
        assert stored.ignored_bytes == 0 and stored.open_turn is None
    finally:
        if not closed:
            await tree.aclose()


async def test_a_report_can_arrive_although_its_caller_never_learns_it(tmp_path: Path) -> None:
    """Why reports are not exactly-once: the parent's inbox append is the acknowledgement; if
    the child's own log then refuses the tool result (here: an injected fault; in life: the
    process dies between the two writes), the parent holds the report while the child's log
    shows the call without a result. A resumed child may report again."""
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        tree.model.script("T", call("report", output="finding"), say("done"))
        t = await tree.child(r, "T", held=False)

        def cut_child_off(session_id: str, events: Any) -> None:
            if session_id == r.id and any(isinstance(e.body, InboxAccepted) for e in events):
                faulty.fail_append.add(t.id)  # right after the report is acknowledged

        faulty.after_append = cut_child_off
        await tree.settled(t.id, r)
        faulty.after_append = None
        faulty.clear()
        parent_log = await faulty.inner.inspect(r.id)
        reports = [
            e.body.content
            for e in parent_log.events
            if isinstance(e.body, InboxAccepted)
            and (e.body.source or {}).get("kind") == "subagent-report"
        ]
        assert reports == [f"Background subagent {t.id} reported:\nfinding"]
        child_log = await load(faulty.inner, t.id)  # what a resume sees (repaired, turn closed)
        calls = [
            c.id
            for e in child_log.events
            if isinstance(e.body, MessageEvent)
            for c in e.body.tool_calls
        ]
        results = [m.tool_call_id for m in tool_messages(child_log.events)]
        assert calls and not set(calls) & set(results)  # the child never saw its success
    finally:
        await tree.aclose()


async def test_a_log_that_refuses_writes_mid_turn_is_logged_one_line_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A persistence error (a full disk, a lost lease) is the host's own readable error: each
    failure it causes is one log line with the error's text and code, not a traceback."""
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")  # its model call waits for tree.release
        faulty.fail_append.add(t.id)
        with caplog.at_level(logging.WARNING, logger="host"):
            tree.release.set()
            await tree.settled(t.id, r)
        failures = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
        args: Any = failures[0].args if failures else None
        turn = args[0] if args else None
        assert [rec.getMessage() for rec in failures] == [
            f"turn {turn} of agent {t.id} failed: {BOOM} (PERSISTENCE_FAILED)",
            f"could not record the end of turn {turn}: {BOOM} (PERSISTENCE_FAILED)",
        ]
        assert not any(rec.exc_info for rec in failures)
    finally:
        await tree.aclose()


async def test_a_parent_log_refusing_the_settlement_notice_is_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The parent's log refuses the child's settlement notice (a host paused past its lease
    whose sessions another host took over): one log line, the child still settles and the
    parent is still checked; no task failure with a traceback."""
    tree, faulty = faulty_tree(tmp_path)
    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")
        faulty.fail_append.add(r.id)
        with caplog.at_level(logging.INFO, logger="host"):
            tree.release.set()
            await tree.settled(t.id, r)
            for _ in range(20):  # the notice is given after the child is marked settled
                await asyncio.sleep(0)
        assert tree.subagents.manager().activation(t.id) is None
        failures = [rec for rec in caplog.records if rec.levelno >= logging.WARNING]
        assert [rec.getMessage() for rec in failures] == [
            f"settlement notice of subagent {t.id} to its parent {r.id} failed: "
            f"{BOOM} (PERSISTENCE_FAILED)"
        ]
        assert not any(rec.exc_info for rec in failures)
    finally:
        faulty.clear()
        await tree.aclose()


async def test_a_notice_refused_with_locked_goes_where_the_parent_lives_now(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``LOCKED``: another host took the parent's session over, so the notice is handed to
    cross-host delivery (recorded here) instead of being dropped."""
    tree, faulty = faulty_tree(tmp_path)
    locked = PersistenceError.locked("taken over")
    monkeypatch.setattr(faulty_module, "fault", lambda: locked)
    handed: list[str] = []

    async def elsewhere(activation: Any) -> None:
        handed.append(activation.id)

    try:
        r = await tree.root("R")
        t = await tree.child(r, "T")
        monkeypatch.setattr(tree.subagents.manager(), "_notify_elsewhere", elsewhere)
        faulty.fail_append.add(r.id)
        with caplog.at_level(logging.INFO, logger="host"):
            tree.release.set()
            await tree.settled(t.id, r)
            for _ in range(20):
                await asyncio.sleep(0)
        assert handed == [t.id]
        failures = [rec for rec in caplog.records if rec.levelno >= logging.WARNING]
        assert [rec.getMessage() for rec in failures] == [
            f"settlement notice of subagent {t.id} to its parent {r.id} failed: "
            f"{locked.message} (LOCKED)"
        ]
    finally:
        faulty.clear()
        await tree.aclose()

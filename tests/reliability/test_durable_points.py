"""The durable points of a background child's life under the default fsync policy ``turn``.

A child that answers once and settles syncs exactly three times: its new log's data before the
log is linked into place (a stored log always has its header), the data directory (the new
name survives), and its turn end (the completed turn survives). Its later checkpoints (the
settlement's, the disposal's and the release's) write nothing and so sync nothing. The parent
syncs its own log at the end of the turn that answers the settlement notice. docs/reliability.md
says which failure each point is for.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path

import agent_host_subagent
import pytest

from host.agents.scripted import say
from host.sessions import jsonl_writer
from host.testing import build_host, call_tool


def syncs_recorded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of the file or directory of every sync from now on."""
    synced: list[int] = []

    def recording(real: Callable[[int], None]) -> Callable[[int], None]:
        def sync(fd: int) -> None:
            synced.append(os.fstat(fd).st_ino)
            real(fd)

        return sync

    sync_fd = recording(jsonl_writer.sync_fd)  # bound by name in both modules
    monkeypatch.setattr(jsonl_writer, "sync_fd", sync_fd)
    monkeypatch.setattr("host.sessions.jsonl.sync_fd", sync_fd)
    monkeypatch.setattr(os, "fsync", recording(os.fsync))
    return synced


async def test_a_background_child_syncs_its_creation_and_its_turn_end_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    host = build_host(("subagent", agent_host_subagent), data_dir=data)
    try:
        host.services.models.resolve("scripted").answer_unscripted(lambda request: say("done"))
        root = await host.services.agents.create(label="root")
        synced = syncs_recorded(monkeypatch)
        args = {"description": "task", "prompt": "Do it."}
        result = await call_tool(host, "subagent", args, agent=root)
        child = result.structured["subagent_id"]
        activation = host.services.subagents.manager().activation(child)
        assert activation is not None
        await activation.wait_done()
        await root.wait_idle()
        inode = {path.name: os.stat(path).st_ino for path in (data, *data.glob("*.jsonl"))}
        assert synced == [
            inode[f"{child}.jsonl"],  # the new log's data, before it is linked into place
            inode["data"],  # the directory that now names it
            inode[f"{child}.jsonl"],  # the child's turn end
            inode[f"{root.id}.jsonl"],  # the parent's turn answering the settlement notice
        ]
    finally:
        await host.aclose()


async def test_two_background_children_sync_their_turn_ends_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The syncs run on worker threads, awaited: a child's turn end waits for its own sync
    while the event loop runs the other child up to its turn end, so both are in flight at
    once (on the event loop's thread the first would block the second from ever starting)."""
    data = tmp_path / "data"
    host = build_host(("subagent", agent_host_subagent), data_dir=data)
    try:
        host.services.models.resolve("scripted").answer_unscripted(lambda request: say("done"))
        root = await host.services.agents.create(label="root")
        meet = threading.Barrier(2)
        counts = {"now": 0, "most": 0, "arrived": 0}  # turn-end syncs in flight, at most
        lock = threading.Lock()
        real = jsonl_writer.sync_fd

        def sync(fd: int) -> None:
            linked = {os.stat(path).st_ino for path in data.glob("*.jsonl")}
            if os.fstat(fd).st_ino not in linked:  # a new log's data, before its link
                real(fd)
                return
            with lock:
                counts["now"] += 1
                counts["most"] = max(counts["most"], counts["now"])
                counts["arrived"] += 1
                meets = counts["arrived"] <= 2  # the first two wait for each other
            try:
                if meets:
                    meet.wait(30.0)  # a generous timeout: broken unless the other arrives
                real(fd)
            finally:
                with lock:
                    counts["now"] -= 1

        monkeypatch.setattr(jsonl_writer, "sync_fd", sync)
        children = []
        for index in range(2):
            args = {"description": f"task {index}", "prompt": "Do it."}
            result = await call_tool(host, "subagent", args, agent=root)
            children.append(result.structured["subagent_id"])
        activations = map(host.services.subagents.manager().activation, children)
        await asyncio.gather(*(each.wait_done() for each in activations if each is not None))
        await root.wait_idle()
        assert counts["most"] == 2
        assert not meet.broken
    finally:
        await host.aclose()

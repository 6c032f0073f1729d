"""The durable points of a background child's life under the default fsync policy ``turn``.

A child that answers once and settles syncs its log once: at its turn end (the completed turn
survives), which first makes every log linked before it durable — the data of those not synced
yet, its own among them, then the data directory that names them — so no durable point claims a
log that names another before that one is durable. Its
creation waits for no sync, and its later checkpoints (the settlement's, the disposal's and the
release's) write nothing and so sync nothing. The parent syncs its own log at the end of the
turn that answers the settlement notice. docs/reliability.md says which failure each point is
for.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path

import agent_host_subagent
import pytest

from host.agents import ModelRequest, ModelResponse
from host.agents.scripted import say
from host.cancel import CancelSignal
from host.sessions import new_logs
from host.testing import build_host, call_tool


def syncs_recorded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of the file or directory of every sync from now on."""
    synced: list[int] = []

    def recording(real: Callable[[int], None]) -> Callable[[int], None]:
        def sync(fd: int) -> None:
            synced.append(os.fstat(fd).st_ino)
            real(fd)

        return sync

    sync_fd = recording(new_logs.sync_fd)
    monkeypatch.setattr(new_logs, "sync_fd", sync_fd)
    monkeypatch.setattr(os, "fsync", recording(os.fsync))
    return synced


async def test_a_background_child_syncs_its_turn_end_only(
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
            inode[f"{root.id}.jsonl"],  # the child's turn end settles the new logs: the parent's
            inode[f"{child}.jsonl"],  # and its own (its creation and its turn), in link order,
            inode["data"],  # then the directory naming both; its own sync then has nothing left
            inode[f"{root.id}.jsonl"],  # the parent's turn answering the settlement notice
        ]
    finally:
        await host.aclose()


async def test_a_childs_turn_end_sync_in_flight_does_not_hold_up_another_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The syncs run on the sync thread, awaited: while a child's turn end waits for its
    sync, the event loop runs the other child up to its own turn end (on the event loop's
    thread the first sync would block the second child from ever getting there); the second
    child's sync then runs after the first, on the same thread."""
    data = tmp_path / "data"
    host = build_host(("subagent", agent_host_subagent), data_dir=data)
    try:
        model = host.services.models.resolve("scripted")
        model.answer_unscripted(lambda request: say("done"))
        created, scripted = asyncio.Event(), model.complete

        async def complete(request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
            await created.wait()  # both children exist before either can end its turn
            return await scripted(request, signal=signal)

        monkeypatch.setattr(model, "complete", complete)
        root = await host.services.agents.create(label="root")
        children = []
        for index in range(2):
            args = {"description": f"task {index}", "prompt": "Do it."}
            result = await call_tool(host, "subagent", args, agent=root)
            children.append(result.structured["subagent_id"])
        gate, held = threading.Event(), threading.Event()
        synced: list[tuple[int, int]] = []  # (inode, thread) of each data sync
        real = new_logs.sync_fd

        def sync(fd: int) -> None:
            synced.append((os.fstat(fd).st_ino, threading.get_ident()))
            if len(synced) == 1:
                held.set()
                assert gate.wait(30.0), "the gate was never opened"
            real(fd)

        monkeypatch.setattr(new_logs, "sync_fd", sync)
        created.set()
        assert await asyncio.to_thread(held.wait, 30.0)  # the first turn end's sync is held
        logs = [data / f"{child}.jsonl" for child in children]
        for _ in range(3000):  # a generous wait for the loop to run the other child on
            if all(b'"turn/end"' in log.read_bytes() for log in logs):
                break
            await asyncio.sleep(0.01)
        assert all(b'"turn/end"' in log.read_bytes() for log in logs)  # both, while held
        gate.set()
        activations = map(host.services.subagents.manager().activation, children)
        await asyncio.gather(*(each.wait_done() for each in activations if each is not None))
        await root.wait_idle()
        assert {os.stat(log).st_ino for log in logs} <= {ino for ino, _ in synced}
        threads = {thread for _, thread in synced}
        assert len(threads) == 1 and threading.get_ident() not in threads
    finally:
        await host.aclose()

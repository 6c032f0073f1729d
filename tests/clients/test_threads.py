"""``ThreadList``: a page after a cursor reads the write times of its own rows' logs only (a
first page reads them all); the order is that of one whole list; a stored thread written
since is read again when it comes up, and dropped once it moved past the cursor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from host.clients.commands import Commands
from host.clients.threads import ThreadRow
from host.sessions.model import SessionHeader
from host.testing import HostHarness, MakeHarness

BASE = 1_900_000_000_000_000_000


async def stored_threads(make_harness: MakeHarness) -> tuple[HostHarness, dict[str, int]]:
    """Ten stored roots, the fifth with a child written last of all, and a host that has
    them stored only; each root's number of logs."""
    first = make_harness()
    sizes: dict[str, int] = {}
    times: dict[str, int] = {}
    for number in range(10):
        root = await first.agents.create(label=f"root {number}")
        sizes[root.id] = 1
        times[root.id] = BASE + number * 1000
        if number == 4:
            header = SessionHeader(id=f"child-of-{number}", parent_session=root.id)
            await first.agents.create(header, label="child")
            sizes[root.id] = 2
            times[header.id] = BASE + 50_000
    await first.host.aclose()
    for session_id, moment in times.items():
        os.utime(first.log_path(session_id), ns=(moment, moment))
    return make_harness(data_dir=first.data_dir), sizes


def counting_stats(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> list[str]:
    """The logs of ``data_dir`` whose metadata is read from now on, one entry a read."""
    reads: list[str] = []
    real = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        where = Path(os.fsdecode(path))
        if where.parent == data_dir and where.suffix == ".jsonl":
            reads.append(where.stem)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    return reads


def ids(rows: list[ThreadRow]) -> list[str]:
    return [row.header.id for row in rows]


async def test_a_page_after_a_cursor_reads_its_own_rows_logs_only(
    make_harness: MakeHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, sizes = await stored_threads(make_harness)
    whole, _ = await Commands(host.host).threads.page(None, 100)
    threads = Commands(host.host).threads
    reads = counting_stats(monkeypatch, host.data_dir)
    pages: list[list[ThreadRow]] = []
    counts: list[int] = []
    after = None
    more = True
    while more:
        before = len(reads)
        page, more = await threads.page(after, 3)
        counts.append(len(reads) - before)
        pages.append(page)
        after = page[-1].order()
    assert [ids(page) for page in pages] == [ids(whole[i : i + 3]) for i in range(0, 10, 3)]
    assert [row.last_activity for page in pages for row in page] == [
        row.last_activity for row in whole
    ]
    assert counts[0] == 11  # a first page: every log
    for index, page in enumerate(pages[1:], start=1):
        following = pages[index + 1][:1] if index + 1 < len(pages) else []
        assert counts[index] == sum(sizes[row.header.id] for row in [*page, *following])


async def test_a_stored_thread_written_since_is_read_again_when_it_comes_up(
    make_harness: MakeHarness,
) -> None:
    host, _ = await stored_threads(make_harness)
    threads = Commands(host.host).threads
    first, _ = await threads.page(None, 3)
    whole, _ = await Commands(host.host).threads.page(None, 100)
    moved, stays = whole[3], whole[4]  # the next page's first two rows
    later = first[0].last_activity + 1
    os.utime(host.log_path(moved.header.id), ns=(later, later))  # as another process would
    nearer = stays.last_activity + 1
    os.utime(host.log_path(whole[6].header.id), ns=(nearer, nearer))
    page, more = await threads.page(first[-1].order(), 3)
    assert ids(page) == [whole[6].header.id, stays.header.id, whole[5].header.id]
    assert page[0].last_activity == nearer and more
    fresh, _ = await Commands(host.host).threads.page(None, 1)
    assert ids(fresh) == [moved.header.id]  # at the top of a new first page

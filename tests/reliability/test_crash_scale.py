"""Crash trials at scale: SIGKILL a real host whose continuable children report and persist.

Each trial runs ``crash_host.py`` (a real host: a root ``root`` and several continuable
children reporting at every step, settled children resumed by followups) over one data
directory and SIGKILLs it at a random moment. Then, in this process, a NEW host over the same
directory must: read every log (counting torn tails), find every acknowledged report in the
root's log and every acknowledged followup in its child's log (lost acknowledged events must
be 0), list every child with ``list_agents`` (no diagnostics), and resume each child with
``send_message`` (repairing torn tails and open turns) and let it settle.

Trials: 10 by default, 200 in the slow profile (a fresh tree every 10 trials). The kill
moments follow a seeded plan: ``CRASH_SEED`` sets the seed (else a fresh one, printed with a
failure), and for a fixed seed the minimum counts asserted at the end are exact.
The totals are printed (``-s``) for docs/reliability.md.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from host.agents import say
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import InboxAccepted
from tests.profile import scale
from tests.reliability.hosts import Tree
from tests.support import run_and_kill

HOST = Path(__file__).with_name("crash_host.py")
CHILDREN = 4


def plan(rng: random.Random) -> tuple[str, float]:
    """When a trial kills the host: ``("sleep", seconds)`` after start (anywhere: start-up,
    resume, repair, reporting) or ``("read", n)`` after ``n`` lines past ``ready``."""
    if rng.random() < 0.25:
        return ("sleep", rng.uniform(0.0, 0.6))
    return ("read", rng.randint(0, 120))


async def verify(
    data_dir: Path, acked: dict[str, str], followups: dict[str, str]
) -> dict[str, int]:
    """A new host over ``data_dir``: count torn tails and lost acknowledgements, list, resume."""
    persistence = JsonlPersistence(data_dir)
    torn = 0
    stored = {}
    for header in await persistence.list():
        log = await persistence.inspect(header.id)
        assert not log.damaged_middle, header.id
        torn += log.ignored_bytes > 0
        stored[header.id] = log
    root_accepted = {
        e.body.message_id: e.body.content
        for e in stored["root"].events
        if isinstance(e.body, InboxAccepted)
    }
    lost = 0
    for message_id, text in acked.items():
        child_id, _, output = text.partition(" ")
        if root_accepted.get(message_id) != f"Background subagent {child_id} reported:\n{output}":
            lost += 1
    for message_id, child_id in followups.items():
        child_log = stored.get(child_id)
        ids = (
            {e.body.message_id for e in child_log.events if isinstance(e.body, InboxAccepted)}
            if child_log
            else set()
        )
        lost += message_id not in ids
    tree = Tree(data_dir)
    try:
        tree.model.answer_unscripted(lambda request: say("checked"))
        root = await tree.agents.resume("root", label="root")
        listed = await tree.tool("list_agents", {}, root)
        rows = listed.structured
        assert not listed.is_error and len(rows) == CHILDREN, listed.text
        assert all(row["kind"] == "child" and row["status"] == "ready" for row in rows), listed.text
        for row in rows:
            sent = await tree.tool(
                "send_message", {"subagent_id": row["id"], "message": "check"}, root
            )
            assert sent.text == f"message queued as the next turn for subagent {row['id']}", (
                sent.text
            )
        for row in rows:
            await tree.settled(row["id"])
        await root.wait_idle()
    finally:
        await tree.aclose()
    for header in await persistence.list():  # everything repaired and closed
        log = await persistence.inspect(header.id)
        assert log.ignored_bytes == 0 and log.open_turn is None, header.id
    return {"torn": torn, "lost": lost}


@pytest.mark.slow
async def test_sigkill_trials_of_a_reporting_host(tmp_path: Path, crash_seed: int) -> None:
    trials = scale(10, 200)
    rng = random.Random(crash_seed)
    planned_trials = planned_reports = 0
    totals = {"torn": 0, "lost": 0, "trials": 0, "acked_reports": 0, "acked_followups": 0}
    acked: dict[str, str] = {}
    followups: dict[str, str] = {}
    data_dir = tmp_path / "data0"
    for trial in range(trials):
        if trial and trial % 10 == 0:  # a fresh tree every 10 trials keeps each trial cheap
            totals["acked_reports"] += len(acked)
            totals["acked_followups"] += len(followups)
            data_dir = tmp_path / f"data{trial}"
            acked, followups = {}, {}
        how = plan(rng)
        if how[0] == "read":  # ready was read: the tree exists and this trial is verified
            planned_trials += 1
            planned_reports += max(0, int(how[1]) - CHILDREN)  # a followup per child at most
        argv = [sys.executable, str(HOST), str(data_dir), str(trial + 1), str(CHILDREN)]
        for line in run_and_kill(argv, how, stderr=subprocess.DEVNULL):
            word, *rest = line.split(" ")
            if word == "ack" and len(rest) == 3:
                acked[rest[1]] = f"{rest[0]} {rest[2]}"
            elif word == "followup" and len(rest) == 2:
                followups[rest[1]] = rest[0]
        if not (data_dir / "root.jsonl").exists():
            assert not acked
            continue
        if len(list(data_dir.glob("*.jsonl"))) < CHILDREN + 1:
            assert not acked  # killed while creating the children: start over
            for path in data_dir.glob("*.jsonl"):
                path.unlink()
            continue
        found = await verify(data_dir, acked, followups)
        totals["torn"] += found["torn"]
        totals["lost"] += found["lost"]
        totals["trials"] += 1
    totals["acked_reports"] += len(acked)
    totals["acked_followups"] += len(followups)
    print(f"\ncrash trials: {totals}")
    assert totals["lost"] == 0
    # Exact for a fixed seed: each line read before a kill was printed after its acknowledgement.
    assert totals["trials"] >= planned_trials
    assert totals["acked_reports"] >= planned_reports

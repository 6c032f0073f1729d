"""Crash trials of approvals: SIGKILL a real host while a child's request waits, while it is
asked, after its decision; a new process resumes.

Each run is ``approval_host.py`` (a real host over one data directory: a root and a
continuable child whose tool ``append`` needs approval and appends a line to a marks file).
The contract checked, from the printed lines, the marks file and the logs:

* a request pending at the kill is asked again, with the same id, after the child's cold
  resume — exactly once per process that resumes it before it is decided;
* a decided request is never asked again; a kill after the decision and before the tool's
  result gives the call the interrupted result, and the tool never runs a second time;
* the tool runs only after an approval recorded in the child's log and mirrored in the root's,
  and each log holds one request and one decision.

The random trials kill each run at a seeded moment (``CRASH_SEED``; 3 trials by default, 30 in
the slow profile).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import ApprovalDecided, ApprovalRequested
from tests.profile import scale
from tests.support import run_and_kill

HOST = Path(__file__).with_name("approval_host.py")


class Trial:
    """One data directory and marks file, and the runs over them."""

    def __init__(self, base: Path) -> None:
        self.data_dir = base / "data"
        self.marks = base / "marks"

    def argv(self, mode: str) -> list[str]:
        return [sys.executable, str(HOST), str(self.data_dir), str(self.marks), mode]

    def kill(self, mode: str, how: tuple[str, float]) -> list[str]:
        """A run SIGKILLed as planned (``run_and_kill``); its lines."""
        return run_and_kill(self.argv(mode), how, stderr=subprocess.DEVNULL)

    def complete(self, mode: str) -> list[str]:
        """A run to its end; its lines."""
        done = subprocess.run(
            self.argv(mode), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120
        )
        assert done.returncode == 0, done.stdout
        return done.stdout.decode().splitlines()

    def start(self) -> str:
        """The first run, killed once its request is pending; the request id."""
        word, request_id = self.kill("approve", ("read", 0))[0].split(" ")
        assert word == "pending"
        return request_id

    def ran(self) -> int:
        """How many times the tool ran (lines in the marks file)."""
        return len(self.marks.read_text().splitlines()) if self.marks.exists() else 0

    async def requests(self) -> list[tuple[list[str], list[tuple[str, str]]]]:
        """For the child's log and the root's: request ids, and (id, decision) pairs."""
        persistence = JsonlPersistence(self.data_dir)
        child = next(h.id for h in await persistence.list() if h.id != "root")
        found = []
        for session_id in (child, "root"):
            events = [e.body for e in (await persistence.inspect(session_id)).events]
            requested = [b.request_id for b in events if isinstance(b, ApprovalRequested)]
            decided: list[tuple[str, str]] = [
                (b.request_id, b.decision) for b in events if isinstance(b, ApprovalDecided)
            ]
            found.append((requested, decided))
        return found


def asked(lines: list[str]) -> list[str]:
    return [line.split(" ")[1] for line in lines if line.startswith("asked ")]


def result(lines: list[str]) -> str:
    (line,) = [line for line in lines if line.startswith("result ")]
    return line[len("result ") :]


async def test_a_pending_request_is_asked_again_once_and_runs_once(tmp_path: Path) -> None:
    trial = Trial(tmp_path)
    request_id = trial.start()
    held = trial.kill("hold", ("read", 1))  # killed while the user is being asked
    assert held[:2] == ["ready", f"asked {request_id}"]
    approved = trial.complete("approve")
    assert asked(approved) == [request_id] and "ran" in approved
    assert result(approved) == "appended one"
    again = trial.complete("approve")
    assert asked(again) == [] and result(again) == "appended one"
    assert trial.ran() == 1
    for log in await trial.requests():
        assert log == ([request_id], [(request_id, "approved")])


async def test_a_kill_after_the_decision_never_asks_again_nor_runs_twice(tmp_path: Path) -> None:
    trial = Trial(tmp_path)
    request_id = trial.start()
    hung = trial.kill("hang", ("read", 2))  # approved, recorded, the tool ran: no result yet
    assert hung[:3] == ["ready", f"asked {request_id}", "ran"]
    after = trial.complete("approve")
    assert asked(after) == [] and "ran" not in after
    assert result(after) == INTERRUPTED_TOOL_TEXT
    assert trial.ran() == 1
    for log in await trial.requests():
        assert log == ([request_id], [(request_id, "approved")])


@pytest.mark.slow
async def test_random_kills_keep_asking_once_and_running_at_most_once(
    tmp_path: Path, crash_seed: int
) -> None:
    rng = random.Random(crash_seed)
    for number in range(scale(3, 30)):
        trial = Trial(tmp_path / f"trial{number}")
        request_id = trial.start()
        for _ in range(rng.randint(1, 3)):
            decided_before = (await trial.requests())[0][1]
            mode = rng.choice(("approve", "hang", "deny", "hold"))
            lines = trial.kill(mode, ("sleep", rng.uniform(0.0, 1.5)))
            assert set(asked(lines)) <= {request_id}
            assert not (decided_before and asked(lines)), (number, mode, lines)
        final = trial.complete("approve")
        assert set(asked(final)) <= {request_id}
        (child_log, root_log) = await trial.requests()
        assert child_log[0] == [request_id] and len(child_log[1]) == 1, child_log
        assert root_log == child_log
        decision = child_log[1][0][1]
        assert trial.ran() <= 1
        if trial.ran():  # never without a recorded approval
            assert decision == "approved"
        outcome = result(final)
        assert outcome in ("appended one", INTERRUPTED_TOOL_TEXT, "the user denied append: not now")

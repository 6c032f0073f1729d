"""Load benchmark: 100 continuable children × 100 reports into one parent. Not a test.

Run from the project root with the project venv::

    .venv/bin/python bench/load.py [--children 100] [--reports 100] [--json]

A real host (every built-in plugin plus the control root and list plugins; JSONL persistence
in a temporary directory, default fsync policy ``turn``; the scripted model). One root parent
starts ``--children`` continuable children (``max_steps`` large enough for one turn of
reports). Each child's model calls the ``bench_report`` tool at every step until it has sent
``--reports`` reports; the tool calls ``subagents.report_from`` — the path the ``report`` plugin
uses — with ``quiet`` for even-numbered children and ``next-step`` for odd ones (deployment
policy, per child; never chosen by the model), and times the call (acceptance latency: until
the report is durably accepted in the parent's inbox). Meanwhile the parent calls
``list_agents`` and ``send_message`` (a followup to a random child) through the real tools in a
loop. At the end a followup to the parent makes it claim every pending quiet report.

Checked: every report is accepted by the parent exactly once and claimed exactly once, in
per-child order; no deadlock (the whole run has a timeout). Baseline measured in the same run:
the same number of plain ``parent.inject`` calls (one durable inbox append each, no service).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tool_subagent_control"))

from host.agents import ModelRequest, call, say  # noqa: E402
from host.sessions.model import InboxAccepted, InboxClaimed, MessageEvent  # noqa: E402
from host.subagents.types import ChildRequest  # noqa: E402
from host.testing import build_host, call_tool  # noqa: E402
from host.tools import ToolExec, tool  # noqa: E402
from tool_subagent_control import listing, root  # noqa: E402

PREFIX = "Background subagent "


@attrs.frozen
class Args:
    output: str = attrs.field(metadata={"description": "the report"})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(children: int, reports: int, data_dir: Path) -> dict[str, Any]:
    host = build_host(("subagent_control", root), ("list_agents", listing), data_dir=data_dir)
    services = host.services
    latencies: list[float] = []
    mode: dict[str, Literal["quiet", "next-step"]] = {}

    @tool("bench_report", "Report to your parent.", Args)
    async def bench_report(args: Args, exec: ToolExec) -> str:
        await asyncio.sleep(0)  # a real tool awaits something: let the others (parent) run
        started = time.perf_counter()
        message_id = await exec.ctx.subagents.report_from(
            exec.agent, args.output, delivery=mode[exec.agent.id]
        )
        latencies.append(time.perf_counter() - started)
        return f"accepted {message_id}"

    host.tools.register("bench_report", bench_report, owner="bench")
    sent: dict[str, int] = {}

    def answer(request: ModelRequest) -> Any:
        if request.label is None or not request.label.startswith("c"):
            return say("ok")
        count = sent.get(request.agent_id, 0)
        if count >= reports:
            return say("done")
        sent[request.agent_id] = count + 1
        return call("bench_report", output=f"{request.label}:{count}")

    services.models.resolve("scripted").answer_unscripted(answer)
    agents, subagents = services.agents, services.subagents
    parent = await agents.create(label="parent")
    ids: list[str] = []
    for index in range(children):
        started = await subagents.start_continuable(
            "spawn",
            ChildRequest(prompt="report", max_steps=reports + 10),
            parent=parent,
            label=f"c{index}",
        )
        mode[started.child_id] = "quiet" if index % 2 == 0 else "next-step"
        ids.append(started.child_id)
    t0 = time.perf_counter()
    manager = subagents.manager()
    rng = random.Random(1)
    lists = messages = 0
    while any(manager.activation(child) is not None for child in ids):
        listed = await call_tool(host, "list_agents", {}, agent=parent)
        assert not listed.is_error, listed.text
        lists += 1
        target = rng.choice(ids)
        result = await call_tool(
            host, "send_message", {"subagent_id": target, "message": "keep going"}, agent=parent
        )
        messages += not result.is_error
        await asyncio.sleep(0.001)
    for child in ids:
        activation = manager.activation(child)
        if activation is not None:
            await activation.wait_done()
    elapsed = time.perf_counter() - t0
    await parent.wait_idle()
    parent.followup("flush")  # claims every quiet report still pending
    await parent.wait_idle()
    # -- checks ---------------------------------------------------------------------------
    events = list(parent.session.events)
    accepted = [e.body for e in events if isinstance(e.body, InboxAccepted)]
    claims = [m for e in events if isinstance(e.body, InboxClaimed) for m in e.body.message_ids]
    users = [
        e.body.message_id
        for e in events
        if isinstance(e.body, MessageEvent) and e.body.role == "user"
    ]
    reports_seen: dict[str, list[int]] = {}
    report_ids = []
    for body in accepted:
        if body.source and body.source.get("kind") == "subagent-report":
            child = body.source["sender_session_id"]
            number = int(body.content.rsplit(":", 1)[1])
            reports_seen.setdefault(child, []).append(number)
            report_ids.append(body.message_id)
    assert len(claims) == len(set(claims)), "a message was claimed twice"
    assert set(report_ids) <= set(claims), "a report never reached the parent's model"
    assert users == claims
    for child in ids:
        assert reports_seen.get(child) == list(range(reports)), f"{child}: order or count"
    total = children * reports
    assert len(report_ids) == total == len(latencies)
    stored = await services.session_persistence.inspect(parent.id)
    assert stored.events == tuple(events)
    # -- baseline: the same number of plain durable inbox appends ---------------------------
    other = await agents.create(label="baseline")
    b0 = time.perf_counter()
    for index in range(total):
        other.inject(f"{PREFIX}x reported:\nc0:{index}", {"kind": "baseline"})
    baseline = time.perf_counter() - b0
    await host.aclose()
    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    return {
        "children": children,
        "reports_per_child": reports,
        "reports": total,
        "elapsed_s": round(elapsed, 3),
        "reports_per_s": round(total / elapsed, 1),
        "p50_ms": round(p50 * 1000, 3),
        "p99_ms": round(p99 * 1000, 3),
        "max_ms": round(max(latencies) * 1000, 3),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 3),
        "baseline_inject_us": round(baseline / total * 1e6, 1),
        "report_vs_inject": round(statistics.fmean(latencies) / (baseline / total), 2),
        "parent_lists": lists,
        "parent_messages": messages,
        "parent_turns": sum(1 for e in events if e.kind == "turn/start"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=100)
    parser.add_argument("--reports", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(
            asyncio.wait_for(run(options.children, options.reports, Path(tmp)), options.timeout)
        )
    if options.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>20}: {value}")


if __name__ == "__main__":
    main()

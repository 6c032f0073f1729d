"""One host process on PostgreSQL for the multi-host tests (a script, never collected by pytest).

Usage: ``multi_host.py DATA_DIR SCHEMA LEASE_TTL`` with ``AGENT_HOST_POSTGRES_DSN`` set.

Builds a real host (``build_host``): the built-in plugins with the JSONL persistence blocked,
the ``postgres`` plugin (schema ``SCHEMA``, ``lease_ttl`` ``LEASE_TTL``), the control, list and
report plugins, and the scripted model.

**Protocol**: one JSON object per stdin line (``{"op": …, …}``), one flushed JSON line on stdout
per command, printed once the command is done: ``{"ok": true, …}``, or ``{"ok": false, "error":
"<type>: <text>"}`` when the command itself raised. The first line, before any command, is
``{"ready": true, "host_id": …, "pid": …}``. Nothing else is ever written to stdout; logging
(tracebacks included) goes to stderr, and every warning or error logged is also kept for ``log``.

Model: a label's next model call can be **held** (``hold``): it waits until ``release``, then
answers ``say`` (text) or calls ``report`` (output). Unheld calls answer at once:
``<label> saw: <last user message>``, or ``<label> reported`` after a report's tool result.

Commands (``id`` = a session/agent id, ``label`` = an agent label):

* ``create_root {id}`` / ``resume_root {id}`` / ``dispose {id}``: a root agent (``dispose``
  takes any live agent).
* ``hold {label}``: hold the label's next model call not yet held (holds queue up).
  ``wait_entered {label}``: until the oldest unanswered held call began.
* ``release {label, say | report}``: answer the oldest unanswered held call (it must have
  begun).
* ``start_child {parent, label, hold}``: ``start_continuable("spawn", …)`` below the live agent
  ``parent``; with ``hold`` (default true) returns once the child's first model call is held.
* ``send {parent, child, text, via}``: ``via="tool"`` runs ``send_message`` as ``parent``
  (``is_error``, ``text``, ``message_id``); ``via="service"`` calls ``subagents.followup``
  (``message_id``, or ``code``/``message`` of the ``HostError`` it raised).
* ``list {parent, scope}``: ``list_agents`` run as ``parent`` (``text``, ``rows``, ``is_error``).
* ``events {id}``: the live session's events (only acknowledged ones), else null; ``stored
  {id}``: ``persistence.inspect`` (read-only).
* ``status {id}``: live agent status, residency, and the outcomes of its turns on this host.
* ``wait_idle {id}`` / ``wait_settled {id}``: until the agent is idle / no longer resident.
* ``requests {label}``: the ``[role, content]`` messages of every model request of the label.
* ``log``: warnings and errors logged so far. ``exit``: close the host and stop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import agent_host_postgres
import tool_subagent_report.plugin as report_plugin

from host.agents import ModelRequest, call, say
from host.errors import HostError
from host.sessions.codec import encode_event
from host.sessions.model import SessionHeader
from host.subagents.types import ChildRequest
from host.testing import build_host, call_tool
from tool_subagent_control import listing, root

WAIT = 15.0  # seconds any waiting command waits at most


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, default=str) + "\n")
    sys.stdout.flush()


class Captured(logging.Handler):
    """Keeps every warning or error logged (message and exception), for ``log``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        self.records.append(
            {
                "logger": record.name,
                "level": record.levelname,
                "message": record.getMessage(),
                "exc_type": type(exc).__name__ if exc is not None else None,
                "exc": _describe(exc) if exc is not None else None,
            }
        )


def _describe(exc: BaseException) -> list[dict[str, Any]]:
    """An exception (and the members of an exception group) as type/code/text rows."""
    members = list(exc.exceptions) if isinstance(exc, BaseExceptionGroup) else [exc]
    return [
        {"type": type(m).__name__, "code": getattr(m, "code", None), "text": str(m)}
        for m in members
    ]


def encoded(events: Any) -> list[dict[str, Any]]:
    return [json.loads(encode_event(event)) for event in events]


class Held:
    """One held model call: entered once it began, answered by ``release``."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()


class MultiHost:
    def __init__(self, data_dir: Path, schema: str, ttl: float) -> None:
        self.host = build_host(
            ("postgres", agent_host_postgres),
            ("subagent_control", root),
            ("list_agents", listing),
            ("subagent_report", report_plugin),
            data_dir=data_dir,
            config={"plugins": {"postgres": {"schema": schema, "lease_ttl": ttl}}},
        )
        self.services = self.host.services
        self.persistence = self.services.session_persistence
        if type(self.persistence).__name__ != "PostgresPersistence":
            raise RuntimeError(f"session persistence is {self.persistence!r}, not PostgreSQL")
        self.model = self.services.models.resolve("scripted")
        self.model.answer_unscripted(self.answer)
        self.held: dict[str, list[Held]] = {}
        self.outcomes: dict[str, list[dict[str, Any]]] = {}
        self.listened: set[Any] = set()  # agent objects (hashed by identity)

    # -- the model ---------------------------------------------------------------------------

    @staticmethod
    def answer(request: ModelRequest) -> Any:
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "tool":
            return say(f"{request.label} reported: {last.content}")
        user = request.last_user_message()
        return say(f"{request.label} saw: {user.content if user else ''}")

    def hold(self, label: str) -> Held:
        """Hold the next not yet held model call of ``label`` (holds queue up per label)."""
        held = Held()
        self.held.setdefault(label, []).append(held)

        async def wait(request: ModelRequest) -> Any:
            held.entered.set()
            return await held.answer

        self.model.script(label, wait)
        return held

    def pending(self, label: str) -> Held:
        """The oldest unanswered hold of ``label``."""
        for held in self.held.get(label, []):
            if not held.answer.done():
                return held
        raise LookupError(f"no model call of {label!r} is held")

    # -- agents ------------------------------------------------------------------------------

    def agent(self, agent_id: str) -> Any:
        found = self.services.agents.get(agent_id)
        if found is None:
            raise LookupError(f"agent {agent_id!r} is not live on this host")
        return found

    def listen(self, agent: Any) -> None:
        """Record the outcome of every turn ``agent`` ends on this host."""
        if agent in self.listened:
            return
        self.listened.add(agent)
        rows = self.outcomes.setdefault(agent.id, [])
        agent.on_turn_end(lambda o: rows.append({"stop_reason": o.stop_reason, "error": o.error}))

    # -- commands ----------------------------------------------------------------------------

    async def run(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, f"op_{op}", None)
        if handler is None:
            raise ValueError(f"unknown op {op!r}")
        result: dict[str, Any] = await handler(**args)
        return result

    async def op_create_root(self, id: str) -> dict[str, Any]:
        agent = await self.services.agents.create(SessionHeader(id=id), label="root")
        self.listen(agent)
        return {}

    async def op_resume_root(self, id: str) -> dict[str, Any]:
        try:
            agent = await self.services.agents.resume(id, label="root")
        except HostError as error:
            return {"code": error.code, "message": error.message}
        self.listen(agent)
        return {"code": None}

    async def op_dispose(self, id: str) -> dict[str, Any]:
        await self.agent(id).dispose()
        return {}

    async def op_hold(self, label: str) -> dict[str, Any]:
        self.hold(label)
        return {}

    async def op_wait_entered(self, label: str) -> dict[str, Any]:
        await asyncio.wait_for(self.pending(label).entered.wait(), WAIT)
        return {}

    async def op_release(
        self, label: str, say: str | None = None, report: str | None = None
    ) -> dict[str, Any]:
        held = self.pending(label)
        if not held.entered.is_set():
            raise RuntimeError(f"the held call of {label!r} has not begun")
        held.answer.set_result(say_(say) if report is None else call("report", output=report))
        return {}

    async def op_start_child(self, parent: str, label: str, hold: bool = True) -> dict[str, Any]:
        held = self.hold(label) if hold else None
        started = await self.services.subagents.start_continuable(
            "spawn", ChildRequest(prompt=f"work as {label}"), parent=self.agent(parent), label=label
        )
        self.listen(self.agent(started.child_id))
        if held is not None:
            await asyncio.wait_for(held.entered.wait(), WAIT)
        return {"child_id": started.child_id, "message_id": started.message_id}

    async def op_send(
        self, parent: str, child: str, text: str, via: str = "service"
    ) -> dict[str, Any]:
        sender = self.agent(parent)
        out: dict[str, Any]
        if via == "tool":
            result = await call_tool(
                self.host, "send_message", {"subagent_id": child, "message": text}, agent=sender
            )
            structured = result.structured if isinstance(result.structured, dict) else {}
            out = {
                "is_error": result.is_error,
                "text": result.text,
                "message_id": structured.get("message_id"),
            }
        else:
            source = {"kind": "coordinator", "sender_session_id": parent}
            try:
                message_id = await self.services.subagents.followup(
                    sender, child, text, source=source
                )
            except HostError as error:
                return {"code": error.code, "message": error.message, "message_id": None}
            out = {"code": None, "message_id": message_id}
        live = self.services.agents.get(child)
        if live is not None:
            self.listen(live)
        return out

    async def op_list(self, parent: str, scope: str = "children") -> dict[str, Any]:
        result = await call_tool(
            self.host, "list_agents", {"scope": scope}, agent=self.agent(parent)
        )
        return {"is_error": result.is_error, "text": result.text, "rows": result.structured}

    async def op_events(self, id: str) -> dict[str, Any]:
        session = self.services.sessions.get(id)
        return {"events": None if session is None else encoded(session.events)}

    async def op_stored(self, id: str) -> dict[str, Any]:
        stored = await self.persistence.inspect(id)
        return {"events": encoded(stored.events)}

    async def op_status(self, id: str) -> dict[str, Any]:
        manager = self.services.subagents.manager()
        activation = manager.activation(id) if manager is not None else None
        return {
            "agent": self.services.agents.status(id),
            "resident": activation is not None,
            "outcomes": self.outcomes.get(id, []),
        }

    async def op_wait_idle(self, id: str) -> dict[str, Any]:
        await asyncio.wait_for(self.agent(id).wait_idle(), WAIT)
        return {}

    async def op_wait_settled(self, id: str) -> dict[str, Any]:
        manager = self.services.subagents.manager()
        activation = manager.activation(id) if manager is not None else None
        if activation is not None:
            await asyncio.wait_for(activation.wait_done(), WAIT)
        return {}

    async def op_requests(self, label: str) -> dict[str, Any]:
        return {
            "requests": [
                [[m.role, m.content] for m in request.messages]
                for request in self.model.requests_for(label)
            ]
        }

    async def op_log(self) -> dict[str, Any]:
        return {"records": CAPTURED.records}


def say_(text: str | None) -> Any:
    return say(text or "done")


CAPTURED = Captured()


def read_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
    """stdin lines into ``queue`` (None at end of input), from a daemon thread."""
    for line in sys.stdin:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, None)


async def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger().addHandler(CAPTURED)
    data_dir, schema, ttl = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    node = MultiHost(data_dir, schema, ttl)
    emit({"ready": True, "host_id": node.persistence.host_id, "pid": os.getpid()})
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(target=read_lines, args=(loop, queue), daemon=True).start()
    while (line := await queue.get()) is not None:
        if not line.strip():
            continue
        command = json.loads(line)
        op = command.pop("op")
        if op == "exit":
            break
        try:
            result = await node.run(op, command)
        except Exception as error:
            logging.getLogger("multi_host").exception("command %s failed", op)
            emit({"ok": False, "op": op, "error": f"{type(error).__name__}: {error}"})
            continue
        emit({"ok": True, "op": op, **result})
    try:
        await node.host.aclose()
    except Exception as error:
        emit({"ok": False, "op": "exit", "error": f"{type(error).__name__}: {error}"})
        return
    emit({"ok": True, "op": "exit"})


if __name__ == "__main__":
    asyncio.run(main())

"""Slash commands (``SlashCommands``) against a real host: the scripted model, real continuable
children on JSONL persistence. A mistake is one line, ``error=True``, and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from host.agents import Agent, ScriptedModel, call, say
from host.cli.slash import Reply, SlashCommands, is_command
from host.plugins.reload import ReloadOutcome
from host.sessions.model import MessageEvent, TurnEnd
from host.subagents.types import ChildRequest
from tests.scenarios import background_tool
from tests.subagents.harness import Env
from tests.support import Gate, bodies


class SlashWorld:
    """A root with ``research`` (answered and settled), ``mid`` (idle, waiting on its own
    child) and ``grand`` (mid's child, running: its model call held by ``gate``)."""

    def __init__(self, env: Env, root: Agent, research: str, mid: str, grand: str, gate: Gate):
        self.env, self.root, self.gate = env, root, gate
        self.research, self.mid, self.grand = research, mid, grand
        self.commands = SlashCommands(env.host, lambda: root)

    async def run(self, line: str) -> Reply:
        return await self.commands.run(line)


@pytest.fixture
async def world(env: Env) -> AsyncIterator[SlashWorld]:
    root = await env.root()
    env.add_tool(background_tool())
    env.model.script("research", say("found it"))
    research = await env.subagents.start_continuable(
        "spawn", ChildRequest("look"), parent=root, label="research"
    )
    await env.settled(research.child_id, root)
    gate = Gate()
    env.on_close(gate.open)  # a failing test must not hang the shutdown
    env.model.script("mid", call("background", text="grand"), say("mid waiting"))
    env.model.script("grand", gate.reply(say("grand done")))
    mid = await env.subagents.start_continuable(
        "spawn", ChildRequest("delegate"), parent=root, label="mid"
    )
    await gate.entered.wait()
    mid_agent = env.agents.get(mid.child_id)
    assert mid_agent is not None
    await mid_agent.wait_idle()
    activation = env.activation(mid.child_id)
    assert activation is not None
    (grand,) = activation.children
    yield SlashWorld(env, root, research.child_id, mid.child_id, grand, gate)


def lines(reply: Reply) -> list[str]:
    assert not reply.error, reply
    return list(reply.lines)


def mistake(reply: Reply) -> str:
    """The one line of a mistake."""
    assert reply.error and not reply.exit and reply.follow is None, reply
    (line,) = reply.lines
    return line


async def test_agents_is_the_tree_indented_by_depth_with_statuses(world: SlashWorld) -> None:
    assert lines(await world.run("/agents")) == [
        f"research  {world.research}  [ready]",
        f"mid  {world.mid}  [idle]",
        f"  grand  {world.grand}  [running]",
    ]
    world.gate.open()
    await world.env.settled(world.mid, world.root)
    assert lines(await world.run("/agents")) == [
        f"research  {world.research}  [ready]",
        f"mid  {world.mid}  [ready]",
        f"  grand  {world.grand}  [ready]",
    ]


async def test_agents_without_subagents(env: Env) -> None:
    root = await env.root()
    assert lines(await SlashCommands(env.host, lambda: root).run("/agents")) == ["(no subagents)"]


async def test_resolve_by_id_prefix_or_label(world: SlashWorld) -> None:
    resolve = world.commands.resolve
    assert await resolve(world.grand) == world.grand
    assert await resolve("research") == world.research
    assert await resolve("grand") == world.grand
    ids = [world.research, world.mid, world.grand]
    unique = next(
        world.mid[:n] for n in range(5, 40) if sum(i.startswith(world.mid[:n]) for i in ids) == 1
    )
    assert await resolve(unique) == world.mid
    both = await resolve("sub_")
    assert isinstance(both, Reply)
    assert mistake(both) == f"'sub_' names 3 agents: {', '.join(sorted(ids))}"
    unknown = await resolve("nobody")
    assert isinstance(unknown, Reply)
    assert mistake(unknown) == "no agent 'nobody' in this conversation (/agents lists them)"
    empty = await resolve("")
    assert isinstance(empty, Reply)
    assert mistake(empty) == "name an agent: an id or a label (/agents lists them)"


async def test_resolve_names_two_agents_sharing_a_prefix(env: Env) -> None:
    root, first = await env.settled_child("one")
    env.model.script("two", say("second"))
    second = await env.subagents.start_continuable(
        "spawn", ChildRequest("task"), parent=root, label="two"
    )
    await env.settled(second.child_id, root)
    shared = next(first[:n] for n in range(40, 0, -1) if second.child_id.startswith(first[:n]))
    found = await SlashCommands(env.host, lambda: root).resolve(shared)
    assert isinstance(found, Reply)
    assert mistake(found) == (
        f"{shared!r} names 2 agents: {', '.join(sorted([first, second.child_id]))}"
    )


async def test_show_of_a_running_child_follows_it_until_its_turn_ends(world: SlashWorld) -> None:
    shown = await world.run("/show grand")
    assert lines(shown) == [
        f"── grand ({world.grand}) · running ──",
        "user (task from mid): grand",
    ]
    assert shown.follow == world.grand
    world.gate.open()
    await world.env.settled(world.mid, world.root)
    shown = await world.run(f"/show {world.grand}")
    assert lines(shown) == [
        f"── grand ({world.grand}) · ready ──",
        "user (task from mid): grand",
        "assistant: grand done",
        "  [turn ended: completed]",
    ]
    assert shown.follow is None


async def test_show_of_an_idle_child_is_its_transcript_without_descriptors(world: SlashWorld) -> None:
    shown = await world.run("/show mid")
    assert lines(shown) == [
        f"── mid ({world.mid}) · idle ──",
        "user (task from you): delegate",
        '  → background {"text": "grand"}',
        f"  ← started subagent {world.grand}",
        "assistant: mid waiting",
        "  [turn ended: completed]",
    ]
    assert shown.follow is None
    research = lines(await world.run("/show research"))
    assert research[0] == f"── research ({world.research}) · ready ──"


def spoil(env: Env, session_id: str) -> int:
    """Write garbage into the stored log of ``session_id`` after its header line; where the
    damage starts."""
    path = env.log_path(session_id)
    header, events = path.read_bytes().split(b"\n", 1)
    path.write_bytes(header + b"\n\x00 not an event {]\n" + events)
    return len(header) + 1


async def test_show_of_a_child_whose_log_is_damaged_says_so(env: Env) -> None:
    root, child = await env.settled_child("research")
    damage = spoil(env, child)  # the identity index still lists it as a child
    before = env.session_files()
    commands = SlashCommands(env.host, lambda: root)
    assert lines(await commands.run("/agents")) == [f"research  {child}  [ready]"]
    assert mistake(await commands.run("/show research")) == (
        f"cannot show {child}: corrupt (damaged line at byte {damage} is followed by valid events)"
    )
    assert env.session_files() == before


async def test_show_of_a_child_the_listing_finds_corrupt_gives_its_diagnostic(env: Env) -> None:
    root, child = await env.settled_child("research")
    spoil(env, child)
    index = env.subagents.index()
    assert index is not None
    index.path.unlink()  # without the index the listing reads the log, and judges it
    before = env.session_files()
    commands = SlashCommands(env.host, lambda: root)
    assert lines(await commands.run("/agents")) == [f"{child}  [unavailable: corrupt]"]
    assert mistake(await commands.run(f"/show {child}")) == f"cannot show {child}: corrupt"
    assert env.session_files() == before


async def test_send_queues_a_turn_for_a_child_of_the_root(world: SlashWorld) -> None:
    world.env.model.script("research", say("more found"))
    assert lines(await world.run("/send research   look again  ")) == [
        f"message queued for {world.research}"
    ]
    await world.env.settled(world.research, world.root)
    stored = await world.env.stored_messages(world.research)
    assert [(m.role, m.content) for m in stored[-2:]] == [
        ("user", "look again"),
        ("assistant", "more found"),
    ]
    assert stored[-2].source == {"kind": "coordinator", "sender_session_id": world.root.id}


async def test_send_to_a_grandchild_is_refused_as_send_message_refuses_it(world: SlashWorld) -> None:
    assert mistake(await world.run("/send grand hello")) == (
        f'message was not delivered: subagent "{world.grand}" belongs to another parent session'
    )


async def test_interrupt_of_an_idle_root_has_nothing_to_stop(world: SlashWorld) -> None:
    reply = await world.run("/interrupt")
    assert (reply.lines, reply.error) == (("nothing to interrupt: the agent is idle",), False)


async def test_interrupt_stops_the_roots_turn_or_a_subagents(world: SlashWorld) -> None:
    held = Gate()
    world.env.on_close(held.open)
    world.env.model.script("root", held.reply(say("never said")))
    world.root.followup("work")
    await held.entered.wait()
    assert lines(await world.run("/interrupt")) == ["interrupting the current turn"]
    await world.root.wait_idle()
    assert bodies(world.root, TurnEnd)[-1].stop_reason == "interrupted"
    assert lines(await world.run("/interrupt grand")) == [f"interrupt requested for {world.grand}"]
    await world.env.settled(world.grand)
    grand = await world.env.stored_events(world.grand)
    assert [e.body.stop_reason for e in grand if isinstance(e.body, TurnEnd)] == ["interrupted"]


async def test_model_shows_and_switches_the_roots_model(world: SlashWorld) -> None:
    other = ScriptedModel()
    world.env.services.models.register("other", other, owner="test")
    assert lines(await world.run("/model")) == ["model: scripted (available: scripted, other)"]
    assert mistake(await world.run("/model gpt-9")) == (
        "no model 'gpt-9' (available: scripted, other)"
    )
    assert world.root.model is world.env.model
    assert lines(await world.run("/model other")) == ["the agent's next model call uses other"]
    assert world.root.model is other
    assert lines(await world.run("/model")) == ["model: other (available: scripted, other)"]


async def test_help_lists_the_commands_and_exit_ends(world: SlashWorld) -> None:
    shown = lines(await world.run("/help"))
    assert [line.split()[0] for line in shown[:-1]] == [
        "/agents",
        "/show",
        "/send",
        "/interrupt",
        "/plugins",
        "/model",
        "/help",
        "/exit",
    ]
    assert shown[1] == "/show ID         a subagent's transcript (followed live while it runs)"
    assert shown[-1] == "Anything else is a message for the agent (a steer while it is working)."
    assert await world.run("/exit") == Reply(exit=True)
    assert await world.run("  /exit  ") == Reply(exit=True)


async def test_plugins_is_the_plugin_table(world: SlashWorld) -> None:
    shown = lines(await world.run("/plugins"))
    assert shown[0].split() == ["plugin", "state", "from", "provides", "requires", "detail"]
    assert any(line.split()[:2] == ["subagents", "active"] for line in shown[2:])


async def test_reload_exists_only_in_dev_and_reports_the_outcome(env: Env) -> None:
    root = await env.root()
    reloaded: list[str] = []

    def reload(name: str) -> ReloadOutcome:
        reloaded.append(name)
        if name == "approvals":
            return ReloadOutcome(name, False, 0.0, "active", error="boom")
        return ReloadOutcome(name, True, 0.012, "active")

    plain = SlashCommands(env.host, lambda: root)
    assert mistake(await plain.run("/reload subagents")) == (
        "unknown command /reload (/help lists the commands)"
    )
    dev = SlashCommands(env.host, lambda: root, reload=reload)
    assert "/reload NAME" in "\n".join(lines(await dev.run("/help")))
    assert lines(await dev.run("/reload subagents")) == ["reloaded subagents in 12 ms"]
    failed = await dev.run("/reload approvals")
    assert failed.error
    assert failed.lines == ("reload of approvals failed, previous version kept: boom",)
    assert mistake(await dev.run("/reload nope")) == "no plugin 'nope' (/plugins lists them)"
    assert mistake(await dev.run("/reload")) == "usage: /reload NAME"
    assert reloaded == ["subagents", "approvals"]


MISTAKES = [
    ("/frobnicate now", "unknown command /frobnicate (/help lists the commands)"),
    ("/show", "name an agent: an id or a label (/agents lists them)"),
    ("/show nobody", "no agent 'nobody' in this conversation (/agents lists them)"),
    ("/show sub_", "'sub_' names 3 agents: {ids}"),
    ("/send research", "usage: /send ID text"),
    ("/send nobody hi", "no agent 'nobody' in this conversation (/agents lists them)"),
    (
        "/send grand hi",
        'message was not delivered: subagent "{grand}" belongs to another parent session',
    ),
    ("/interrupt nobody", "no agent 'nobody' in this conversation (/agents lists them)"),
    ("/model nope", "no model 'nope' (available: scripted)"),
]


async def test_every_mistake_is_one_line_and_changes_nothing(world: SlashWorld) -> None:
    env = world.env
    ids = ", ".join(sorted([world.research, world.mid, world.grand]))
    before = env.session_files()
    live = {
        agent_id: len(env.agents.get(agent_id).session.events)
        for agent_id in (world.mid, world.grand, world.root.id)
    }
    model = world.root.model
    for line, expected in MISTAKES:
        assert mistake(await world.run(line)) == expected.format(ids=ids, grand=world.grand), line
    assert env.session_files() == before
    assert {i: len(env.agents.get(i).session.events) for i in live} == live
    assert world.root.model is model
    assert world.root.status == "idle"
    assert bodies(env.agents.get(world.mid), MessageEvent)[-1].content == "mid waiting"


async def test_without_a_root_a_command_says_the_conversation_has_not_started(env: Env) -> None:
    commands = SlashCommands(env.host, lambda: None)
    assert mistake(await commands.run("/agents")) == "/agents: the conversation has not started"
    assert mistake(await commands.run("/model")) == "/model: the conversation has not started"
    assert lines(await commands.run("/help"))[0].startswith("/agents")


def test_a_command_is_a_slash_then_a_letter() -> None:
    assert is_command("/show x") and is_command("  /agents ")
    assert not is_command("/") and not is_command("/ hello") and not is_command("//x")
    assert not is_command("/1 is a fraction") and not is_command("a /show")

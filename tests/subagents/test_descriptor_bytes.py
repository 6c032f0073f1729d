"""A child's stored descriptor, tool filter included, is written byte for byte as before the
filter had one type, and what was written then loads as the same descriptor.

``descriptor_log.jsonl`` beside this module was written by ``write_log`` on the code from
before (where the filter was ``ToolFilterSpec``, with lists): every kind of filter a child
can record, through the real JSONL persistence.
"""

from __future__ import annotations

from pathlib import Path

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, SessionHeader, SubagentDescriptorEvent
from host.subagents.children import combine_filters, descriptor_event
from host.subagents.descriptors import (
    VERSION,
    ContinuableDescriptor,
    Descriptor,
    MemorySpec,
    OneShotDescriptor,
    parse_descriptor,
)
from host.subagents.types import ORIGIN
from host.tools.filter import SubPluginLimit, ToolFilter

FIXTURE = Path(__file__).with_name("descriptor_log.jsonl")
HEADER = SessionHeader(
    id="sub_fixture",
    parent_session="agent_parent",
    created_at=1732890000000000000,
    origin=ORIGIN,
    delegation_depth=1,
    label="worker",
)


def descriptors() -> list[Descriptor]:
    """One descriptor of each shape a child records (filters as the delegation tool makes
    them: a deployment's, a profile's, both combined, empty lists, no filter)."""
    deployment = ToolFilter(allow=["mcp.*", "read_file"], deny=["git__push"])
    profile = ToolFilter(
        allow=["time__*", "read_file"],
        deny=["shell"],
        sub_plugins=[SubPluginLimit("mcp", ["time", "git"])],
    )
    limits = [SubPluginLimit("mcp", ["git", "web"]), SubPluginLimit("x", ["y"])]
    filters = [
        deployment,
        combine_filters(deployment, profile),
        combine_filters(profile, ToolFilter(sub_plugins=limits)),
        ToolFilter(allow=[], deny=[]),
        ToolFilter(sub_plugins=[SubPluginLimit("mcp", [])]),
        ToolFilter(),
        None,
    ]
    made: list[Descriptor] = [OneShotDescriptor(VERSION, "one-shot", "spawn", label="once")]
    for index, tool_filter in enumerate(filters):
        made.append(
            ContinuableDescriptor(
                version=VERSION,
                mode="continuable",
                provider="spawn",
                label=f"child {index}",
                model="scripted",
                persona="You review.",
                tool_filter=tool_filter,
                max_steps=7,
                profile="reviewer",
                mcp_servers=["time"],
                memory=MemorySpec("project", "/work/memory/reviewer"),
            )
        )
    return made


def write_log(directory: Path, written: list[Descriptor]) -> bytes:
    """The bytes of a child's log holding ``written``, written by the JSONL persistence."""
    persistence = JsonlPersistence(directory)
    events = [Event(seq, descriptor_event(d)) for seq, d in enumerate(written)]
    persistence.open_writer(HEADER, create=True, events=events).close()
    return persistence.path_for(HEADER.id).read_bytes()


def test_a_descriptor_log_is_written_as_before(tmp_path: Path) -> None:
    assert write_log(tmp_path, descriptors()) == FIXTURE.read_bytes()


async def test_a_descriptor_log_written_before_loads_and_is_written_again_the_same(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / f"{HEADER.id}.jsonl").write_bytes(FIXTURE.read_bytes())
    stored = await JsonlPersistence(old).inspect(HEADER.id)
    assert stored.header == HEADER
    bodies = [e.body for e in stored.events if isinstance(e.body, SubagentDescriptorEvent)]
    loaded = [parse_descriptor(body.descriptor) for body in bodies]
    assert loaded == descriptors()
    written = [d for d in loaded if isinstance(d, OneShotDescriptor | ContinuableDescriptor)]
    assert write_log(tmp_path / "new", written) == FIXTURE.read_bytes()

"""Fresh ids (``host.sessions.model.new_id``: sessions, messages, turns — several per child)
are a random version-4 UUID's hex digits, made from 16 random bytes without building a ``UUID``
object or asking ``uuid.uuid4``."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from host.sessions.model import new_id, validate_session_id


def test_ids_are_random_version_4_uuids_in_hex(monkeypatch: pytest.MonkeyPatch) -> None:
    built: Counter[str] = Counter()
    real = uuid.uuid4

    def counting() -> uuid.UUID:
        built["uuid4"] += 1
        return real()

    monkeypatch.setattr(uuid, "uuid4", counting)
    ids = [new_id("agent_") for _ in range(500)]
    assert built == Counter()
    assert len(set(ids)) == 500
    for made in ids:
        assert validate_session_id(made) == made and made.startswith("agent_")
        value = uuid.UUID(hex=made.removeprefix("agent_"))
        assert value.hex == made.removeprefix("agent_")
        assert (value.version, value.variant) == (4, uuid.RFC_4122)
    assert len(new_id()) == 32

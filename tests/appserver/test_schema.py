"""``agent-host app-server schema --out DIR``: one JSON Schema per message, generated from the
classes the server encodes with, and as strict about params as the server is."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from host.appserver.schema import documents
from host.appserver.server import METHODS
from host.clients.events import EVENT_TYPES
from tests.appserver.client import Schemas


def test_the_files_are_the_generated_documents_for_every_message(schemas: Schemas) -> None:
    generated = documents()
    assert set(schemas.validators) == {name.replace("/", ".") for name in generated}
    for name, document in generated.items():
        assert schemas.validators[name.replace("/", ".")].schema == json.loads(json.dumps(document))
    names = set(generated)
    assert {f"{method}.params" for method in METHODS} <= names
    assert {f"{event.METHOD}.params" for event in EVENT_TYPES} <= names


@pytest.mark.parametrize(
    "params",
    [
        {"threadId": "t", "input": [{"type": "text", "text": "hi"}], "mood": "x"},
        {"threadId": 3, "input": [{"type": "text", "text": "hi"}]},
        {"threadId": "t", "input": [{"type": "image", "text": "hi"}]},
        {"input": [{"type": "text", "text": "hi"}]},
    ],
)
def test_params_the_server_refuses_do_not_fit_the_schema(schemas: Schemas, params) -> None:
    with pytest.raises(jsonschema.ValidationError):
        schemas.check("turn/start.params", params)


def test_a_notification_fits_its_schema(schemas: Schemas) -> None:
    delta = {"threadId": "t", "turnId": None, "itemId": "stream_1", "delta": "Hel"}
    schemas.check("item/agentMessage/delta.params", delta)
    with pytest.raises(jsonschema.ValidationError):
        schemas.check("item/agentMessage/delta.params", {**delta, "delta": 3})


def test_only_the_websocket_transport_imports_the_websocket_library() -> None:
    code = (
        "import sys, host.cli.main, host.appserver.server, host.appserver.stdio, "
        "host.appserver.schema; print('websockets' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "False\n"

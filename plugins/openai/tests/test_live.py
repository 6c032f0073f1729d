"""Opt-in: the ``models check`` probes against a real OpenAI-compatible server.

Set ``AGENT_HOST_TEST_OPENAI_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``) and
``AGENT_HOST_TEST_OPENAI_MODEL`` (and ``AGENT_HOST_TEST_OPENAI_API_KEY`` if the server wants
one) to run them; unset, they are skipped with that reason. CI sets neither: a real server is
not part of the suite. ``AGENT_HOST_TEST_OPENAI_TIMEOUT`` raises the per-phase timeout for slow servers.
"""

from __future__ import annotations

import os

import pytest
from agent_host_openai import OpenAIModel, Settings

from host.cli import probes

BASE_URL = os.environ.get("AGENT_HOST_TEST_OPENAI_BASE_URL", "")
MODEL = os.environ.get("AGENT_HOST_TEST_OPENAI_MODEL", "")

pytestmark = pytest.mark.skipif(
    not (BASE_URL and MODEL),
    reason="set AGENT_HOST_TEST_OPENAI_BASE_URL and AGENT_HOST_TEST_OPENAI_MODEL to probe a real server",
)


@pytest.mark.parametrize("probe", list(probes.PROBES))
async def test_probe_passes_against_the_real_server(probe):
    model = OpenAIModel(
        Settings(
            base_url=BASE_URL,
            model=MODEL,
            timeout=float(os.environ.get("AGENT_HOST_TEST_OPENAI_TIMEOUT", "120")),
            max_retries=1,
        ),
        api_key=os.environ.get("AGENT_HOST_TEST_OPENAI_API_KEY"),
    )
    try:
        result = await probes.run(probe, model)
    finally:
        await model.aclose()
    assert result.ok, result.line()

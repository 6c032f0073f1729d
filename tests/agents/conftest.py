"""Fixtures for the agent tests: a real session store on JSONL files, a scripted model, tools
(all from ``tests.fixtures``)."""

from tests.fixtures import *  # noqa: F403 - the store and registry fixtures

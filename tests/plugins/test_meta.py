"""Meta-tests: every hook is documented and every hook is exercised by a test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from host.app import Host
from host.plugins import hookspecs
from tests.plugins.hooks import ACTIVATION_ORDER, HOOKS, SPECS

TESTS = Path(__file__).resolve().parents[1]


def test_the_hook_list_matches_the_activation_order():
    assert sorted(ACTIVATION_ORDER + hookspecs.HANDOVER_HOOKS) == HOOKS


def test_the_plugin_system_knows_its_own_hooks_in_the_host_s_order():
    assert [hook for hook in ACTIVATION_ORDER if hook in hookspecs.ACTIVATION_ORDER] == list(
        hookspecs.ACTIVATION_ORDER
    )
    assert ACTIVATION_ORDER == (
        "register_services",
        "register_models",
        "register_prompt_sections",
        "register_profiles",
        "register_tools",
        "activate",
        "register_plugins",
    )


def test_every_hook_that_registers_is_checked_the_same_way_at_a_reload():
    host = Host()
    try:
        for entry in host.plugins.table.values():
            assert (entry.register is None) == (entry.check is None), entry.name
        assert [e.name for e in host.plugins.table.values() if e.register is None] == ["activate"]
    finally:
        host.close()


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented_in_one_sentence(hook):
    doc = inspect.getdoc(SPECS[hook])
    assert doc, f"{hook} has no documentation"
    assert "\n" not in doc and doc.endswith(".")


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_implemented_by_some_test(hook):
    pattern = re.compile(rf"@hookimpl\s*\n\s*def {hook}\(")
    sources = [p.read_text() for p in TESTS.rglob("test_*.py")]
    assert any(pattern.search(text) for text in sources), f"no test implements {hook}"

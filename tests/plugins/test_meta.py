"""Meta-tests: every hook is documented and every hook is exercised by a test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from host.plugins import hookspecs

HOOKS = sorted(
    name
    for name, value in vars(hookspecs).items()
    if callable(value) and hasattr(value, f"{hookspecs.PROJECT}_spec")
)
TESTS = Path(__file__).resolve().parents[1]


def test_the_hook_list_matches_the_activation_order():
    assert sorted(hookspecs.ACTIVATION_ORDER + hookspecs.HANDOVER_HOOKS) == HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented_in_one_sentence(hook):
    doc = inspect.getdoc(getattr(hookspecs, hook))
    assert doc, f"{hook} has no documentation"
    assert "\n" not in doc and doc.endswith(".")


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_implemented_by_some_test(hook):
    pattern = re.compile(rf"@hookimpl\s*\n\s*def {hook}\(")
    sources = [p.read_text() for p in TESTS.rglob("test_*.py")]
    assert any(pattern.search(text) for text in sources), f"no test implements {hook}"

"""Lazy module attributes (``host.lazy``) are imported once: the first read keeps the value on
the module, so the hooks and tools that read ``host.api`` names on every call (the delegation
tool reads several per child) make plain attribute reads, not an import-system lookup each."""

from __future__ import annotations

import importlib
import sys
import textwrap
import types
from collections import Counter

import pytest

import host.api
from host.lazy import lazy_attributes


def imports(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every ``importlib.import_module`` from now on, by the module asked for."""
    asked: Counter[str] = Counter()
    real = importlib.import_module

    def counting(name: str, package: str | None = None) -> types.ModuleType:
        asked[name] += 1
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", counting)
    return asked


def lazy_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A module ``lazy_probe`` re-exporting ``dedent`` (a source), ``host.api``'s ``__all__``
    and ``textwrap`` whole, each lazily."""
    module = types.ModuleType("lazy_probe")
    module.__getattr__ = lazy_attributes(  # type: ignore[method-assign]
        "lazy_probe",
        {"dedent": "textwrap"},
        exports_of="host.api",
        modules={"wrapping": "textwrap"},
    )
    monkeypatch.setitem(sys.modules, "lazy_probe", module)
    return module


def test_each_lazy_attribute_is_imported_once(monkeypatch: pytest.MonkeyPatch) -> None:
    module = lazy_module(monkeypatch)
    asked = imports(monkeypatch)
    for _ in range(5):
        assert module.dedent is textwrap.dedent
        assert module.ServiceContext is host.api.ServiceContext
        assert module.wrapping is textwrap
    assert asked == Counter({"textwrap": 2, "host.api": 2})  # the first read of each name
    assert {"dedent", "ServiceContext", "wrapping"} <= set(vars(module))


def test_an_unknown_name_stays_an_attribute_error(monkeypatch: pytest.MonkeyPatch) -> None:
    module = lazy_module(monkeypatch)
    for _ in range(2):
        with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
            module.nothing  # noqa: B018
    assert "nothing" not in vars(module)

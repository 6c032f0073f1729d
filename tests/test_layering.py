"""Layering (docs/architecture.md): the generic plugin system imports nothing of profiles or
subagents, and no module of ``host`` imports itself back at run time (a cycle of module-level
imports outside ``if TYPE_CHECKING:``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / "host"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in HOST.rglob("*.py")}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> Iterator[str]:
    """The modules an import statement names (a ``from x import name`` names ``x.name`` when
    that is a module of ``host``, else ``x``)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".") if package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def imports(module: str, *, runtime: bool) -> set[str]:
    """The ``host`` modules ``module`` imports: all of them, or (``runtime``) those at module
    level outside ``if TYPE_CHECKING:`` (what importing it imports at once)."""
    path = MODULES[module]
    package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.update(_imported(node, module, package))
            elif isinstance(node, ast.If):
                if not (runtime and _type_checking(node.test)):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    walk(block)
                for handler in node.handlers:
                    walk(handler.body)
            elif not runtime:
                walk([child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)])

    walk(tree.body)
    return {name for name in found if name in MODULES and name != module}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_plugin_system_imports_nothing_of_profiles_or_subagents() -> None:
    offending = {
        module: sorted(
            name
            for name in imports(module, runtime=False)
            if name.startswith(("host.profiles", "host.subagents"))
        )
        for module in MODULES
        if module.startswith("host.plugins")
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_no_runtime_import_cycle_in_host() -> None:
    graph = {module: imports(module, runtime=True) for module in MODULES}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_type_checking_imports_are_not_runtime_ones() -> None:
    assert "host.api" in imports("host.plugins.hookspecs", runtime=False)
    assert "host.api" not in imports("host.plugins.hookspecs", runtime=True)


def test_the_client_layer_and_the_app_server_import_nothing_of_the_cli() -> None:
    offending = {
        module: sorted(
            name for name in imports(module, runtime=False) if name.startswith("host.cli.")
        )
        for module in MODULES
        if module.startswith(("host.clients", "host.appserver"))
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_front_ends_hear_the_session_logs_only_through_the_feed() -> None:
    """The terminal client, the plain one and the app-server render the feed's events
    (``host.clients.feed``), not a second reading of ``SessionStore.observe``."""
    observing = {
        module
        for module, path in MODULES.items()
        if any(
            isinstance(node, ast.Attribute) and node.attr == "observe"
            and isinstance(node.value, ast.Attribute) and node.value.attr == "sessions"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert observing == {"host.clients.feed"}

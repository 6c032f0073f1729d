"""Layering (docs/architecture.md): the generic plugin system imports nothing of profiles or
subagents, no module of ``host`` imports itself back at run time (a cycle of module-level imports
outside ``if TYPE_CHECKING:``), ``host.api`` imports nothing at run time that imports it back,
and, every import counted (module level, inside functions, under ``TYPE_CHECKING``), no circle
of ``host`` and the first-party plugin packages is longer than two modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / "host"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in HOST.rglob("*.py")}

PACKAGES = [
    *sorted(path.parent for path in ROOT.glob("plugins/*/agent_host_*/__init__.py")),
    ROOT / "tool_subagent_control" / "tool_subagent_control",
    ROOT / "tool_subagent_report" / "tool_subagent_report",
]
"""The first-party plugin packages (their tests aside)."""


def _package_modules(package: Path) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        if "tests" not in path.relative_to(package).parts:
            parts = list(path.relative_to(package.parent).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


FIRST_PARTY = {
    **MODULES,
    **{name: path for package in PACKAGES for name, path in _package_modules(package).items()},
}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> Iterator[str]:
    """The modules an import statement names (a ``from x import name`` names ``x.name`` when
    that is a module of ``host`` or a first-party package, else ``x``)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".") if package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in FIRST_PARTY and not _binds(base, alias.name) else base


def _binds(package: str, name: str) -> bool:
    """Whether ``package``'s ``__init__`` binds ``name`` itself (``host.tools`` binds ``tool``,
    the decorator, over its submodule ``host.tools.tool``)."""
    path = FIRST_PARTY.get(package)
    if path is None or path.name != "__init__.py":
        return False
    return any(
        (alias.asname or alias.name) == name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    )


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


def every_import(module: str) -> set[str]:
    """The first-party modules ``module`` imports anywhere: at module level, inside functions and
    under ``if TYPE_CHECKING:`` (an import of a name a package re-exports counts as one of the
    package)."""
    path = FIRST_PARTY[module]
    package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _imported(node, module, package):
                while name and name not in FIRST_PARTY:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    found.add(name)
    return found


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


def test_the_api_imports_nothing_at_run_time_that_imports_it_back() -> None:
    """``host.api`` re-exports what lives below it; a module it loads never loads it again."""
    seen: set[str] = set()
    todo = sorted(imports("host.api", runtime=True))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(imports(module, runtime=True))
    assert "host.api" not in seen
    assert {"host.plugins.hookspecs", "host.profiles.library"} <= seen  # the Register* types


def test_the_schema_module_is_below_tools_and_plugins() -> None:
    """``host.schema`` checks tools' arguments, plugins' configs and the approval policy: it sits
    below all three, and the plugin system's config reading reaches it without ``host.tools``."""
    assert imports("host.schema", runtime=False) == set()
    assert "host.schema" in imports("host.plugins.config", runtime=False)
    assert not {name for name in imports("host.plugins.config", runtime=False)
                if name.startswith("host.tools")}


def test_no_import_circle_is_longer_than_two_modules() -> None:
    """Where two layers name each other's types, a protocol names what one uses of the other
    (``host.plugins.handles.Record``, ``host.plugins.registrations.Staged``,
    ``host.appserver.connection.Server``)."""
    graph = {module: every_import(module) for module in FIRST_PARTY}
    assert [circle for circle in cycles(graph) if len(circle) > 2] == []


DOOR = {"host", "host.api", "host.tools"}
"""What a first-party plugin package imports of the host (its tests may import more)."""


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.name)
def test_a_plugin_package_imports_the_host_only_through_its_door(package: Path) -> None:
    past = {
        name
        for module in _package_modules(package)
        for name in every_import(module)
        if name.startswith("host") and name not in DOOR
    }
    assert past == set()


def test_the_plugin_system_loads_nothing_of_the_tools_layer() -> None:
    """Nothing of ``host.tools`` at module level in ``host.plugins``; only the hookspecs name
    ``Tool`` (in ``RegisterTool``, for type checkers): the tool hook's entry of the registration
    table is ``host.hooks``, above the plugin layer."""
    loading = {
        module: sorted(
            name for name in imports(module, runtime=True) if name.startswith("host.tools")
        )
        for module in MODULES
        if module.startswith("host.plugins")
    }
    assert {module: names for module, names in loading.items() if names} == {}
    naming = {
        module
        for module in MODULES
        if module.startswith("host.plugins")
        and any(name.startswith("host.tools") for name in imports(module, runtime=False))
    }
    assert naming <= {"host.plugins.hookspecs"}

"""Mapping changed files to plugins and coalescing batches, with an injected change source."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from host.app import Host
from host.plugins.reload import ReloadOutcome
from host.plugins.watch import ReloadLoop, WatchMap, in_development, source_roots
from host.testing import call_tool
from tests.reload.support import Plugins, plugin_tools, tools_source

EVERYTHING: Callable[[Path], bool] = lambda path: True  # noqa: E731


class Changes:
    """An injected change source: batches put by the test, ended by ``end()``."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[list[Path] | None] = asyncio.Queue()

    def put(self, *paths: Path) -> None:
        self.queue.put_nowait(list(paths))

    def end(self) -> None:
        self.queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[list[Path]]:
        while (batch := await self.queue.get()) is not None:
            yield batch


class Recorder:
    """Stands in for ``reload_plugin``; ``during`` runs inside the first reload."""

    def __init__(self, during: Callable[[], None] = lambda: None) -> None:
        self.calls: list[str] = []
        self.during = during

    def __call__(self, name: str) -> ReloadOutcome:
        self.calls.append(name)
        if len(self.calls) == 1:
            self.during()
        return ReloadOutcome(name, True, 0.001, "active")


def two_plugins(plugins: Plugins, dev_host: Callable[..., Host]) -> Host:
    plugins.install("alpha", tools_source({"a": "a"}))
    plugins.install("beta", tools_source({"b": "b"}))
    return dev_host({"alpha", "beta"})


async def test_edits_during_a_reload_merge_into_one_next_round(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)
    alpha, beta = plugins.path("alpha"), plugins.path("beta")
    changes = Changes()

    def meanwhile() -> None:  # three more saves land while the first reload runs
        changes.put(alpha)
        changes.put(beta, alpha)
        changes.put(alpha)
        changes.end()

    reload = Recorder(meanwhile)
    lines: list[str] = []
    loop = ReloadLoop(WatchMap(host.plugins), lines.append, reload)
    changes.put(alpha)
    assert await loop.run(changes) is None
    assert reload.calls == ["alpha", "alpha", "beta"]
    assert [plan.reload for plan in loop.rounds] == [("alpha",), ("alpha", "beta")]
    assert lines == ["reloaded alpha in 1 ms", "reloaded alpha in 1 ms", "reloaded beta in 1 ms"]


async def test_two_quick_saves_make_one_reload(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)
    changes = Changes()
    changes.put(plugins.path("beta"))
    changes.put(plugins.path("beta"))
    changes.end()
    reload = Recorder()
    assert await ReloadLoop(WatchMap(host.plugins), print, reload).run(changes) is None
    assert reload.calls == ["beta"]


async def test_plugins_sharing_a_package_reload_once_each(
    site: Callable[..., str],
    tmp_path: Path,
    unique: Callable[[str], str],
    dev_host: Callable[..., Host],
) -> None:
    package = unique("shared")
    directory = tmp_path / "site" / package
    directory.mkdir(parents=True)
    (directory / "__init__.py").write_text("")
    (directory / "a.py").write_text(tools_source({"left": "left 1"}))
    (directory / "b.py").write_text(tools_source({"right": "right 1"}))
    eps = {"left_plugin": f"{package}.a", "right_plugin": f"{package}.b"}
    site(entry_points=eps, modules={})
    try:
        host = dev_host(set(eps))
        watch_map = WatchMap(host.plugins)
        assert watch_map.roots["left_plugin"] == (directory.resolve(),)
        assert directory.resolve() in watch_map.paths()

        (directory / "b.py").write_text(tools_source({"right": "right 2"}))
        changes = Changes()
        changes.put(directory / "b.py", directory / "a.py")
        changes.end()
        lines: list[str] = []
        assert await ReloadLoop(watch_map, lines.append).run(changes) is None
        assert [line.split(" in ")[0] for line in lines] == [
            "reloaded left_plugin",
            "reloaded right_plugin",
        ]
        result = await call_tool(host, "right", {}, agent=object())
        assert result.text == "right 2"
        assert plugin_tools(host, "right_plugin") == ["right"]
    finally:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


async def test_single_module_plugins_are_watched_through_their_directory(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)
    record = host.plugins.records["alpha"]
    assert source_roots(record) == (plugins.path("alpha").resolve(),)
    watch_map = WatchMap(host.plugins)
    assert plugins.directory.resolve() in watch_map.paths()
    assert watch_map.plan([plugins.directory / "unrelated.txt"]).empty


def test_installed_code_is_not_in_development(tmp_path: Path) -> None:
    import attrs

    assert not in_development(Path(attrs.__file__).parent)
    assert not in_development(Path(asyncio.__file__).parent)
    assert in_development(tmp_path)


async def test_service_providers_built_ins_and_stray_files_restart(
    plugins: Plugins, dev_host: Callable[..., Host], tmp_path: Path
) -> None:
    host = two_plugins(plugins, dev_host)
    config = tmp_path / "extra" / "agent-host.toml"
    data = tmp_path / "extra" / "data" / "s.jsonl"
    watch_map = WatchMap(
        host.plugins, extra=[tmp_path / "extra"], ignore=[data.parent], development=EVERYTHING
    )
    builtin = Path(sys.modules["host.builtins.sessions"].__file__ or "")
    assert watch_map.plan([builtin]).restart == "sessions provides services"
    core = Path(sys.modules["host.agents.agent"].__file__ or "")
    assert watch_map.plan([core]).restart == "host code changed (agent.py)"
    assert watch_map.plan([config]).restart == "agent-host.toml changed outside every plugin"
    assert watch_map.plan([data]).empty  # session logs are never changes
    assert watch_map.plan([plugins.path("alpha")]).reload == ("alpha",)


async def test_restart_mode_restarts_for_everything(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)
    watch_map = WatchMap(host.plugins, restart_always=True)
    changes = Changes()
    changes.put(plugins.path("alpha"))
    reload = Recorder()
    lines: list[str] = []
    reason = await ReloadLoop(watch_map, lines.append, reload).run(changes)
    assert reason == "alpha changed (--restart)"
    assert lines == ["restarting: alpha changed (--restart)"]
    assert reload.calls == []


async def test_blocked_plugins_are_not_watched(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)
    host.plugins.block("beta")
    assert "beta" not in WatchMap(host.plugins).roots
    assert WatchMap(host.plugins).plan([plugins.path("beta")]).empty


async def test_an_unexpected_reload_error_is_one_line_and_watching_goes_on(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = two_plugins(plugins, dev_host)

    def broken(name: str) -> ReloadOutcome:
        raise KeyError(name)

    lines: list[str] = []
    changes = Changes()
    changes.put(plugins.path("alpha"))
    changes.put(plugins.path("beta"))
    changes.end()
    assert await ReloadLoop(WatchMap(host.plugins), lines.append, broken).run(changes) is None
    assert lines == [
        "reload of alpha failed: KeyError: 'alpha'",
        "reload of beta failed: KeyError: 'beta'",
    ]


def test_a_changed_configuration_file_restarts(make_host, tmp_path: Path) -> None:
    host = make_host()
    config = tmp_path / "agent-host.toml"
    watch_map = WatchMap(host.plugins, config_files=[config, tmp_path / ".mcp.json"])
    assert watch_map.plan([tmp_path / "other.toml"]).empty
    assert watch_map.plan([config]).restart == "configuration changed (agent-host.toml)"
    assert watch_map.plan([str(tmp_path / ".mcp.json")]).restart == (
        "configuration changed (.mcp.json)"
    )

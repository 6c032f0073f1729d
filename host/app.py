"""The host: services, global tool and prompt registries, and the plugins that fill them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from host.builtins import builtin_candidates
from host.disposal import adispose_reversed
from host.errors import ConfigError
from host.hooks import hook_table
from host.naming import NamedRegistry, Owner
from host.plugins.config import CONFIG_FILE, plugin_tables, read_config_file
from host.plugins.discovery import PluginCandidate, discover
from host.plugins.lifecycle import PluginLifecycle, PluginStates
from host.plugins.record import DisposalFailure
from host.plugins.selection import Selection
from host.profiles.library import ProfileLibrary
from host.services import Services
from host.settings import DEFAULT_DATA_DIR, HostSettings
from host.tools.tool import Tool
from host.tools.workers import SERVICE as TOOL_WORKERS
from host.tools.workers import ToolWorkers

if TYPE_CHECKING:  # imported where used: prompt values by the first section, reload by ``dev``
    from host.agents.prompt import PromptSection
    from host.approvals.policy import Policy
    from host.plugins.reload import ReloadOutcome

class Host:
    """One running host. ``start`` activates what can activate; ``close`` disposes it all.

    Closing never raises what a plugin's disposal raised: ``close`` and ``aclose`` return those
    failures (each plugin is left ``failed``), and ``disposal_failures`` keeps every one so far.
    """

    def __init__(
        self,
        settings: HostSettings | None = None,
        *,
        selection: Selection = Selection(),
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings or HostSettings()
        if config and "tools" in config:
            from host.agents.tool_results import max_result_chars

            limit = max_result_chars(config)
            self.settings = attrs.evolve(self.settings, max_result_chars=limit)
        self.services = Services()
        self.tools = NamedRegistry[Tool]("tool")
        self.prompt_sections: NamedRegistry[PromptSection] = NamedRegistry("prompt section")
        self.profiles = ProfileLibrary(tools=self.tools)
        self.warnings: list[str] = []
        self.disposal_failures: list[DisposalFailure] = []
        self.services.register("settings", self.settings, owner="host")
        self.services.register("tools", self.tools, owner="host")
        self.services.register("prompt_sections", self.prompt_sections, owner="host")
        self.services.register("profiles", self.profiles, owner="host")
        self.tool_workers = ToolWorkers()
        self.services.register(TOOL_WORKERS, self.tool_workers, owner="host")
        self.plugins = PluginLifecycle(
            self.services,
            hook_table(self.tools, self.prompt_sections, self.profiles),
            selection=selection,
            config_tables=plugin_tables(dict(config or {})),
        )
        self.services.register("plugins", PluginStates(self.plugins), owner="host")

    def add_plugins(self, candidates: Iterable[PluginCandidate]) -> None:
        """Load candidates in order; a name already present is a warning, not a second copy."""
        for candidate in candidates:
            if candidate.name in self.plugins.records:
                self.warnings.append(f'plugin "{candidate.name}" is provided twice; kept the first')
                continue
            self.plugins.add(candidate)

    def start(self) -> Host:
        """Activate every plugin whose requirements are met; warn about unknown names."""
        self.plugins.reconcile()
        known = list(self.plugins.records)  # sub-plugins included: they exist once active
        self.warnings += self.plugins.selection.unknown_names(known)
        unknown_tables = sorted(set(self.plugins.config_tables) - set(known))
        self.warnings += [f'config for unknown plugin "{name}" ignored' for name in unknown_tables]
        return self

    def close(self) -> list[DisposalFailure]:
        """Deactivate every plugin; returns the plugins whose disposers raised (also added to
        ``disposal_failures``). A second call finds nothing left to dispose."""
        failures = self.plugins.close()
        self.tool_workers.close()
        self.disposal_failures += failures
        return failures

    async def aclose(self) -> list[DisposalFailure]:
        """Shut down asynchronously first (services with ``aclose``, newest first), then close.

        Live agents finish their shutdown (turns end, sessions flush) before plugins dispose.
        A service's ``aclose`` that raises counts as a disposal failure of the plugin that
        provides it; returns every failure, as ``close``.
        """

        async def shut_down(name: str) -> None:
            shutdown = getattr(self.services.built(name), "aclose", None)
            if shutdown is not None:
                await shutdown()

        failed = await adispose_reversed(self.services.names(), shut_down)
        failures = [DisposalFailure(self.services.provider(n) or n, e) for n, e in failed]
        closed = self.close()
        for failure in failures:  # marked after close: a failed plugin would not be disposed
            record = self.plugins.records.get(failure.plugin)
            if record is not None and record.state != "failed":
                record.fail(failure.error)
        self.disposal_failures += failures
        return failures + closed

    def reload(self, name: str, *, keep_services: bool = False) -> ReloadOutcome:
        """Reload one plugin's code in process; on failure the previous version keeps running.
        ``keep_services``: swap only a new version that provides the same services and takes
        over the state (else the outcome asks for a restart; ``host.plugins.reload``)."""
        from host.plugins.reload import reload_plugin

        return reload_plugin(self.plugins, name, keep_services=keep_services)

    def plugin_rows(self) -> list[dict[str, Any]]:
        """One row per plugin, as ``agent-host plugins --json`` prints them."""
        present = set(self.services.names())
        rows = [record.describe(present) for record in self.plugins.records.values()]
        for row in rows:  # a built-in standing aside for another provider serves nothing
            row["services"] = [
                n for n in row["services"] if self.services.provider(n) == row["name"]
            ]
        return rows

    def tool_rows(self) -> list[dict[str, Any]]:
        """One row per global tool: name, description, JSON Schema, owning plugin."""
        return [tool_row(tool, self.tools.owner(name)) for name, tool in self.tools.items()]

    def __enter__(self) -> Host:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def tool_row(tool: Tool, owner: Owner | str | None) -> dict[str, Any]:
    """The catalog row of one tool; ``owner`` as its registry recorded it."""
    return {
        "name": tool.name,
        "description": tool.describe(),
        "parameters": tool.parameters,
        "plugin": owner.plugin if isinstance(owner, Owner) else owner or "",
    }


def open_host(
    *,
    data_dir: Path | None = None,
    config_path: Path | None = None,
    no_plugin: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    debug: bool = False,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    tools_used: bool = True,
) -> Host:
    """A host configured the way the CLI does it: built-ins plus every installed plugin.

    Data directory: ``data_dir``, else ``AGENT_HOST_DATA_DIR``, else ``.agent-host``.
    Config: ``config_path`` (must exist), else ``agent-host.toml`` in the working directory;
    ``overrides`` maps plugin names to keys that replace those of their ``[plugins.<name>]``
    tables (``{"models": {"default": "scripted"}}`` makes the scripted model the default).
    ``tools_used=False`` (a command that calls no tool) starts no tool server.
    """
    env = os.environ if environ is None else environ
    explicit = config_path is not None
    path = config_path if config_path is not None else Path(CONFIG_FILE)
    refused: list[str] = []  # the project's own file, when refused, is skipped
    config = read_config_file(path, explicit=explicit, refused=None if explicit else refused)
    tables = config.setdefault("plugins", {})
    policy = _approval_policy(env, config, path, explicit)
    if tables.pop("approvals", None) is not None:  # the policy is [approvals], narrowed above
        policy = policy.with_warning(
            f"{path}: [plugins.approvals] is ignored: the approval policy is [approvals]"
        )
    if not policy.is_default():  # no table: no converter at start-up
        tables["approvals"] = policy.table()
    for name, keys in (overrides or {}).items():
        tables[name] = {**tables.get(name, {}), **keys}
    resolved_dir = data_dir or Path(env.get("AGENT_HOST_DATA_DIR") or DEFAULT_DATA_DIR)
    if resolved_dir.exists() and not resolved_dir.is_dir():
        raise ConfigError(f"data directory {resolved_dir} is not a directory")
    settings = HostSettings(
        data_dir=resolved_dir,
        config_path=path if path.exists() else None,
        debug=debug,
        project_dir=Path.cwd(),
        config_trusted=explicit,
        tools_used=tools_used,
    )
    host = Host(settings, selection=Selection.from_env(env, no_plugin), config=config)
    host.warnings += [*refused, *policy.warnings]
    host.add_plugins(builtin_candidates())
    host.add_plugins(discover())
    host.start()
    host.warnings += _unmatched_globs(host, policy)
    return host


def _unmatched_globs(host: Host, policy: Policy) -> list[str]:
    """The start-up warnings of the policy's globs that match no tool (``Policy.unmatched``)."""
    from host.tools.globs import plugins_by_tool

    tools = plugins_by_tool(host.tools)
    plugins = {name: r.state == "active" for name, r in host.plugins.records.items()}
    return policy.unmatched(tools, plugins)


def _approval_policy(
    env: Mapping[str, str], config: dict[str, Any], path: Path, explicit: bool
) -> Policy:
    """The ``[approvals]`` policy in effect: the user's (``--config``, else the user-level
    file), narrowed by the project's ``agent-host.toml`` when that is the config read."""
    from host.approvals.policy import effective, user_config_file

    if explicit:
        return effective(config.get("approvals"), None, user_where=str(path))
    user_file = user_config_file(env)
    user = read_config_file(user_file, explicit=False).get("approvals")
    return effective(
        user, config.get("approvals"), user_where=str(user_file), project_where=str(path)
    )

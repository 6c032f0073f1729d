"""The deployment's approval policy: ``[approvals]`` in ``agent-host.toml``.

::

    [approvals]
    mode = "ask"            # for tools that declare needs_approval: "ask" | "allow" | "deny"
    deny = ["shell"]        # tool-name globs: never run
    ask = ["mcp.*"]         # asked even when the tool does not declare needs_approval
    allow = ["git__*"]      # run without asking
    timeout = 120           # seconds a request may wait; then it is denied

A call is judged by the first rule that matches its tool: ``deny``, then ``ask``, then
``allow``; a tool no list names runs unless it declares ``needs_approval``, which ``mode``
then decides. A glob matches a tool's name or the plugin that registered it, nothing else
(``host.tools.globs``: ``mcp.*`` is every MCP server's tools; ``mcp`` none). The user-level
policy (``$AGENT_HOST_HOME/agent-host.toml``, else ``~/.agent-host/agent-host.toml``, and a
``--config`` file) is the base; the project's own ``agent-host.toml`` may only narrow it: a
stricter ``mode``, more ``deny`` and ``ask`` globs, a shorter ``timeout``. Its ``allow`` globs,
and a ``mode`` less strict than the user's, are ignored, with a warning.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

from host.errors import ConfigError
from host.schema import schema_for, validate
from host.tools.globs import matches, unmatched

ApprovalMode = Literal["ask", "allow", "deny"]
Verdict = Literal["run", "ask", "deny"]
_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_BY_MODE: dict[ApprovalMode, Verdict] = {"ask": "ask", "allow": "run", "deny": "deny"}
TABLE = "approvals"


class PolicyTable(TypedDict, total=False):
    """The keys of an ``[approvals]`` table, validated strictly (a ``TypedDict``: building a
    class at import would cost every command's start-up)."""

    mode: ApprovalMode
    allow: list[str]
    deny: list[str]
    ask: list[str]
    timeout: float


class Policy:
    """The policy in effect, and the warnings met while building it."""

    __slots__ = ("allow", "ask", "deny", "mode", "timeout", "warnings")

    def __init__(
        self,
        mode: ApprovalMode = "ask",
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        ask: tuple[str, ...] = (),
        timeout: float | None = None,
        warnings: tuple[str, ...] = (),
    ) -> None:
        self.mode: ApprovalMode = mode
        self.allow = allow
        self.deny = deny
        self.ask = ask
        self.timeout = timeout
        self.warnings = warnings

    @classmethod
    def from_table(cls, table: PolicyTable | dict[str, Any]) -> Policy:
        """The policy of a validated table (missing keys: the defaults)."""
        timeout = table.get("timeout")
        return cls(
            table.get("mode", "ask"),
            tuple(table.get("allow", ())),
            tuple(table.get("deny", ())),
            tuple(table.get("ask", ())),
            None if timeout is None else float(timeout),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return all(getattr(self, key) == getattr(other, key) for key in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, key) for key in self.__slots__))

    def __repr__(self) -> str:
        return f"Policy({self.table()!r})"

    def verdict(self, tool: str, needs_approval: bool, plugin: str | None = None) -> Verdict:
        """What a call of ``tool``, registered by ``plugin`` (None: by no plugin), gets before
        anyone is asked (module docstring)."""
        if matches(self.deny, tool, plugin):
            return "deny"
        if matches(self.ask, tool, plugin):
            return "ask"
        if matches(self.allow, tool, plugin) or not needs_approval:
            return "run"
        return _BY_MODE[self.mode]

    def narrowed_by(self, project: Policy, *, given: Collection[str] = ()) -> Policy:
        """This (user-level) policy narrowed by the project's; ``given`` names the keys the
        project wrote: its ``allow`` globs, and a ``mode`` less strict than this one's, are
        ignored, with a warning."""
        mode = max(self.mode, project.mode, key=_STRICTNESS.__getitem__)
        timeouts = [t for t in (self.timeout, project.timeout) if t is not None]
        warnings = list(self.warnings + project.warnings)
        if "mode" in given and mode != project.mode:
            warnings.append(
                f'[approvals] mode "{project.mode}" in the project\'s agent-host.toml is '
                f'ignored: it would loosen the user\'s mode "{self.mode}"'
            )
        if "allow" in given:
            warnings.append(
                "[approvals] allow in the project's agent-host.toml is ignored: "
                "only the user's configuration may allow"
            )
        return Policy(
            mode,
            self.allow,
            self.deny + project.deny,
            self.ask + project.ask,
            min(timeouts) if timeouts else None,
            tuple(warnings),
        )

    def with_warning(self, warning: str) -> Policy:
        """The same policy with one more warning."""
        return Policy(
            self.mode, self.allow, self.deny, self.ask, self.timeout, (*self.warnings, warning)
        )

    def is_default(self) -> bool:
        """Whether its rules are the defaults (warnings aside)."""
        return self.table() == Policy().table()

    def table(self) -> dict[str, Any]:
        """The policy as the ``approvals`` plugin's configuration table."""
        table: dict[str, Any] = {
            "mode": self.mode,
            "allow": list(self.allow),
            "deny": list(self.deny),
            "ask": list(self.ask),
        }
        if self.timeout is not None:
            table["timeout"] = self.timeout
        return table

    def unmatched(self, tools: Mapping[str, str | None], plugins: Mapping[str, bool]) -> list[str]:
        """One warning per glob that matches none of ``tools`` (each name → the plugin that
        registered it), by ``host.tools.globs.unmatched``: it matches no plugin either, or only
        running plugins that register no tool (``plugins``: each name → whether it runs; one
        that does not, a blocked or failed server ``mcp.<name>``, is a name the user may mean)."""
        return [
            f'[approvals] {key} glob "{glob}" {why}'
            for key in ("deny", "ask", "allow")
            for glob, why in unmatched(getattr(self, key), tools, plugins)
        ]


def parse(table: Any, where: str) -> Policy:
    """The policy of one ``[approvals]`` table; ``ConfigError`` naming ``where`` and the key."""
    if table is None:
        return Policy()
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [approvals] must be a table")
    problems = validate(schema_for(PolicyTable), table)
    if problems:
        raise ConfigError(f"{where}: [approvals] {problems[0]}")
    timeout = table.get("timeout")
    if timeout is not None and timeout <= 0:
        raise ConfigError(f"{where}: [approvals] timeout: must be a positive number of seconds")
    return Policy.from_table(table)


def user_config_file(environ: Any) -> Path:
    """``$AGENT_HOST_HOME/agent-host.toml``, else ``~/.agent-host/agent-host.toml``."""
    home = environ.get("AGENT_HOST_HOME")
    if home:
        return Path(home) / "agent-host.toml"
    base = environ.get("HOME")
    return (Path(base) if base else Path.home()) / ".agent-host" / "agent-host.toml"


def effective(
    user: Any, project: Any, *, user_where: str = "user", project_where: str = "project"
) -> Policy:
    """The user-level ``[approvals]`` table narrowed by the project's (either may be None)."""
    base = parse(user, user_where)
    if project is None:
        return base
    narrowing = parse(project, project_where)
    given = [key for key, value in project.items() if key != "allow" or value]
    return base.narrowed_by(narrowing, given=given)

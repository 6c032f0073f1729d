"""The typed author API (``host.api``): mypy --strict catches a plugin's wrong calls, the
Protocols match the callbacks the host really passes, and ``import host`` stays cheap."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import host
from host import api
from host.agents.models import ModelRegistry
from host.agents.registry import AgentRegistry
from host.approvals.service import ApprovalService
from host.naming import NamedRegistry
from host.plugins.hookspecs import hookimpl
from host.plugins.lifecycle import PluginStates
from host.profiles.library import ProfileLibrary
from host.sessions.projections import Projections
from host.sessions.store import SessionStore
from host.settings import HostSettings
from host.subagents.service import SubagentService
from host.tools import ToolExec, tool
from host.tools.workers import ToolWorkers
from tests.plugins.hooks import ACTIVATION_ORDER
from tests.support import NoArgs, in_checkout
from tests.typecheck import right_and_wrong

RIGHT = '''
"""A plugin that uses the author API correctly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from host.api import (
    PluginHandle,
    RegisterModel,
    RegisterPlugin,
    RegisterProfile,
    RegisterPromptSection,
    RegisterService,
    RegisterTool,
    Scope,
    ServiceContext,
    hookimpl,
)
from host.subagents.types import ChildRequest
from host.tools import ToolExec, ToolResult, tool

requires = ("subagents",)


@attrs.frozen
class Args:
    """Arguments of ``delegate``."""

    prompt: str


@tool("delegate", "Start a child.", Args)
async def delegate(args: Args, exec: ToolExec) -> ToolResult:
    run = await exec.ctx.subagents.start(
        "spawn", ChildRequest(args.prompt), parent=exec.agent, signal=exec.signal
    )
    return ToolResult(f"started {run.id}")


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext) -> None:
    register("notes", {"data_dir": ctx.settings.data_dir})


@hookimpl
def register_models(register: RegisterModel, ctx: ServiceContext) -> None:
    register("same", lambda: ctx.models.resolve("scripted"))


@hookimpl
def register_prompt_sections(register: RegisterPromptSection) -> None:
    register("style", "Answer briefly.", order=10)


@hookimpl
def register_profiles(register: RegisterProfile) -> None:
    register(Path(__file__).parent / "profiles")


@hookimpl
def register_tools(register: RegisterTool) -> None:
    take_back = register(delegate)
    take_back()


@hookimpl
def activate(ctx: ServiceContext, scope: Scope, plugin: PluginHandle) -> None:
    scope.add(ctx.subagents.register_continuable_setup(lambda setup: lambda: None))
    if not ctx.plugins.is_active("subagent_report"):
        plugin.fail("subagent_report is needed")


@hookimpl
def register_plugins(register: RegisterPlugin, config: Any) -> None:
    register("part", lambda: object(), blocked=None)
'''

WRONG = '''
"""The same plugin with one mistake on every line marked ``# wrong``."""

from __future__ import annotations

from typing import Any

import attrs

from host import (
    PluginHandle,
    RegisterModel,
    RegisterPlugin,
    RegisterPromptSection,
    RegisterTool,
    Scope,
    ServiceContext,
)
from host.api import hookimpl
from host.tools import ToolExec, ToolResult, tool


@attrs.frozen
class Args:
    """Arguments of ``delegate``."""

    prompt: str


@tool("delegate", "Start a child.", Args)
async def delegate(args: Args, exec: ToolExec) -> ToolResult:
    run = await exec.ctx.subagents.start("spawn", args.prompt, parent=exec.agent)  # wrong
    await exec.ctx.subagents.followup(exec.agent, run.id, "more")  # wrong
    return ToolResult(f"started {run.id}")


@hookimpl
def register_models(register: RegisterModel, ctx: ServiceContext) -> None:
    register("same", "scripted")  # wrong


@hookimpl
def register_prompt_sections(register: RegisterPromptSection) -> None:
    register("style", "Answer briefly.", order="first")  # wrong


@hookimpl
def register_tools(register: RegisterTool) -> None:
    register(42)  # wrong


@hookimpl
def activate(ctx: ServiceContext, scope: Scope, plugin: PluginHandle) -> None:
    ctx.subagent.interrupt("child", caller=None)  # wrong
    ctx.subagents.interrupt("child")  # wrong
    scope.add(42)  # wrong
    plugin.fail(RuntimeError("down"))  # wrong


@hookimpl
def register_plugins(register: RegisterPlugin, config: Any) -> None:
    register("part", lambda: object(), blocked=True)  # wrong
'''


@in_checkout
def test_mypy_strict_catches_each_wrong_call_and_passes_the_right_ones(tmp_path: Path) -> None:
    messages = "\n".join(right_and_wrong(tmp_path, "author", RIGHT, WRONG))
    assert '"ServiceContext" has no attribute "subagent"' in messages
    assert 'Argument 1 to "__call__" of "RegisterTool" has incompatible type "int"' in messages
    assert 'Missing named argument "source" for "followup" of "SubagentService"' in messages


# -- the Protocols match what the host passes ----------------------------------------------


class Recorder:
    """A plugin that keeps the ``register`` callback of every hook that has one."""

    name = "recorder"
    requires = ("models",)

    def __init__(self) -> None:
        self.registers: dict[str, Any] = {}

    @hookimpl
    def register_services(self, register: Any) -> None:
        self.registers["register_services"] = register

    @hookimpl
    def register_models(self, register: Any) -> None:
        self.registers["register_models"] = register

    @hookimpl
    def register_prompt_sections(self, register: Any) -> None:
        self.registers["register_prompt_sections"] = register

    @hookimpl
    def register_profiles(self, register: Any) -> None:
        self.registers["register_profiles"] = register

    @hookimpl
    def register_tools(self, register: Any) -> None:
        self.registers["register_tools"] = register

    @hookimpl
    def register_plugins(self, register: Any) -> None:
        self.registers["register_plugins"] = register


PROTOCOLS = {
    "register_services": api.RegisterService,
    "register_models": api.RegisterModel,
    "register_prompt_sections": api.RegisterPromptSection,
    "register_profiles": api.RegisterProfile,
    "register_tools": api.RegisterTool,
    "register_plugins": api.RegisterPlugin,
}


def parameters(function: Any) -> list[tuple[str, Any, Any]]:
    """Name, kind and default of each parameter (``self`` left out)."""
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(function).parameters.values()
        if p.name != "self"
    ]


def test_every_hook_with_a_register_callback_has_its_protocol() -> None:
    assert set(PROTOCOLS) == set(ACTIVATION_ORDER) - {"activate"}


@pytest.mark.parametrize("hook", sorted(PROTOCOLS))
def test_the_protocol_has_the_callbacks_parameters(make_host: Any, hook: str) -> None:
    recorder = Recorder()
    made = make_host(recorder)
    assert made.plugins.records["recorder"].state == "active"
    callback = recorder.registers[hook]
    assert parameters(callback) == parameters(PROTOCOLS[hook].__call__)


def test_the_register_tool_callback_returns_the_disposer(make_host: Any) -> None:
    recorder = Recorder()
    made = make_host(recorder)

    @tool("early", "Taken back early.", NoArgs)
    async def early(args: NoArgs, exec: ToolExec) -> str:
        return "ok"

    dispose = recorder.registers["register_tools"](early)
    assert "early" in made.tools
    dispose()
    assert "early" not in made.tools


# -- the typed services ----------------------------------------------------------------------

BUILT_IN = {  # the name of each typed service, and what the host serves under it
    "settings": HostSettings,
    "tools": NamedRegistry,
    "prompt_sections": NamedRegistry,
    "profiles": ProfileLibrary,
    "tool_workers": ToolWorkers,
    "plugins": PluginStates,
    "session_persistence": object,  # a Protocol (SessionPersistence): not checked at run time
    "projections": Projections,
    "sessions": SessionStore,
    "models": ModelRegistry,
    "agents": AgentRegistry,
    "subagents": SubagentService,
    "approvals": ApprovalService,
}


def typed_services() -> list[str]:
    return [name for name, value in vars(api.ServiceContext).items() if isinstance(value, property)]


def test_the_typed_services_are_the_ones_the_host_provides_itself(make_host: Any) -> None:
    made = make_host()
    assert sorted(typed_services()) == sorted(made.services.names()) == sorted(BUILT_IN)
    for name, cls in BUILT_IN.items():
        assert isinstance(getattr(made.services, name), cls), name


def test_each_typed_service_is_annotated_with_its_class() -> None:
    for name, cls in BUILT_IN.items():
        annotation = inspect.signature(getattr(api.ServiceContext, name).fget).return_annotation
        if cls is not object:
            assert annotation.split("[")[0] == cls.__name__, name


# -- import cost -----------------------------------------------------------------------------


def test_import_host_leaves_the_api_unimported_until_a_name_is_asked_for() -> None:
    code = textwrap.dedent(
        """
        import sys
        import host
        assert "host.api" not in sys.modules
        assert not hasattr(host, "no_such_name")
        from host import ServiceContext
        assert "host.api" in sys.modules
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_host_re_exports_the_api() -> None:
    for name in api.__all__:
        assert getattr(host, name) is getattr(api, name)

"""Tools: one declaration per tool, a JSON schema built from it, validation, layered scopes.

``ToolExec`` here is the one a tool author annotates: its ``agent`` is typed as an ``Agent`` and
its ``ctx`` as the ``ServiceContext`` (at run time it is ``host.tools.tool.ToolExec`` itself).
"""

from typing import TYPE_CHECKING

from host.tools.tool import Tool, ToolProgress, ToolResult, schema_tool, tool

if TYPE_CHECKING:
    from typing import TypeAlias

    from host.agents.agent import Agent
    from host.api import ServiceContext
    from host.tools.tool import ToolExec as _ToolExec

    ToolExec: TypeAlias = _ToolExec[Agent, ServiceContext]
else:
    from host.tools.tool import ToolExec

__all__ = ["Tool", "ToolExec", "ToolProgress", "ToolResult", "schema_tool", "tool"]

"""Tools: one declaration per tool, a JSON schema built from it, validation, layered scopes."""

from host.tools.tool import Tool, ToolExec, ToolProgress, ToolResult, schema_tool, tool

__all__ = ["Tool", "ToolExec", "ToolProgress", "ToolResult", "schema_tool", "tool"]

"""The report plugin (``subagent_report``): needs the ``subagents`` service."""

requires = ("subagents",)

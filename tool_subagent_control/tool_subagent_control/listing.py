"""The list plugin (``list_agents``): loadable on its own, needs ``subagents`` and ``agents``."""

requires = ("subagents", "agents")

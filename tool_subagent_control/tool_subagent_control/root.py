"""The root plugin (``subagent_control``): ``send_message`` and ``interrupt_agent``.

It needs only the ``subagents`` service; its tools are registered once, globally.
"""

requires = ("subagents",)

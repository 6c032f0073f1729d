"""``agent-host mcp serve``: this host's subagents as tools of any MCP client (the server side
of the ``mcp`` SDK; the rest of ``agent_host_mcp`` is its client side).

The MCP client acts as a root agent (``root``): a held root (it runs no model turn) whose
session is named by ``--root`` and resumed by the next server process. ``tools`` serves the
root's own ``subagent``, ``send_message``, ``interrupt_agent`` and ``list_agents`` (the
texts of docs/subagents.md, the user's configuration) and ``read_agent_messages`` (``mailbox``: the
reports and settlement notices the root's log holds). Requests to the user from anywhere
below the root go to the client through elicitation (``asking``); a foreground ``subagent``
call streams progress (``progress``); each subagent's transcript is a resource
(``resources``). ``main`` runs it over stdio or streamable HTTP. Everything goes through the
client-facing layer ``host.clients``.
"""

"""``agent-host app-server``: the host driven by other programs over JSON-RPC 2.0 (stdio, or
WebSocket), a front end over the client-facing layer (``host.clients``). See
docs/app-server.md."""

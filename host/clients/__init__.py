"""The client-facing layer: what every front end (the terminal client, ``app-server``) drives
the host through. ``commands`` acts (start or resume a root, send, steer, interrupt, list the
tree, read a transcript from a ``seq``); ``feed`` tells what happens, derived from the session
logs (``events``: turns, ``items``, the subagent ``tree``, approvals, streamed text)."""

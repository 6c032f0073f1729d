"""The terminal client of ``chat`` and ``dev``: prompt_toolkit reads, rich prints.

``front`` runs it (on the client feed, ``host.clients.feed``, whose tree gives the status line);
``lines`` renders the root's events and streamed text; ``asker`` asks approval requests at the
prompt; ``completion`` completes slash commands (``host.cli.slash``) and their arguments.
Imported only when stdin and stdout are terminals, so other commands never load the two
libraries.
"""

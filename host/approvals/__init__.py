"""Approvals: a tool that needs consent asks the root's user, from any depth, durably.

``policy`` reads the deployment's ``[approvals]`` rules; ``service`` routes, records and
answers requests (the ``approvals`` service), and its ``check`` is where a tool call meets them
(called by ``host.tools.execute.run_tool``); ``requests`` is what a front end sees of a
request, ``records`` what the logs say of them, ``resume`` how calls left open by a crash get
their results. The guide is ``docs/approvals.md``.
"""

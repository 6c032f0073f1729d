"""Approvals: a tool that needs consent asks the root's user, from any depth, durably.

``policy`` reads the deployment's ``[approvals]`` rules; ``service`` routes, records and
answers requests (the ``approvals`` service); ``gate`` is where a tool call meets them.
"""

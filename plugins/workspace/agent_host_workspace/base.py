"""What the tools' declarations need at start-up: the refusal and the defaults of their
arguments (the modules doing the work load at a tool's first call)."""

from __future__ import annotations

DEFAULT_LINES = 2000
"""Lines ``read_file`` returns when ``limit`` is not given."""
DEFAULT_TIMEOUT = 120
"""Seconds ``run_command`` lets a command run when ``timeout`` is not given."""


class Refused(Exception):
    """A call a tool will not carry out; ``str()`` is the one line the model is given."""

"""The ``agent-host`` command line."""

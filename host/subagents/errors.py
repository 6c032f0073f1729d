"""``SubagentError``: the one error type of the subagent service, with stable codes."""

from __future__ import annotations

from typing import Literal

from host.errors import HostError

SubagentErrorCode = Literal[
    "UNAUTHORIZED",
    "NOT_RESUMABLE",
    "ACTIVATION_CLOSING",
    "PARENT_UNAVAILABLE",
    "DRAINING",
    "CANCELLED",
    "CONTINUATION_UNAVAILABLE",
    "PERSISTENCE_UNAVAILABLE",
    "NO_PROVIDER",
    "DUPLICATE_PROVIDER",
    "DUPLICATE_CHILD",
    "DEPTH_EXCEEDED",
    "ACTIVATION_SETUP_REVOKED",
    "ACTIVATION_SETUP_RELEASE_FAILED",
    "SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE",
    "SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE",
    "LOCKED",
    "UNAVAILABLE",
]


class SubagentError(HostError):
    """A subagent service failure; ``code`` is one of ``SubagentErrorCode``."""

    def __init__(self, code: SubagentErrorCode, message: str) -> None:
        super().__init__(code, message)

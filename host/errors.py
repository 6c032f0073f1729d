"""The one shape every service error takes: an exception with a stable ``code``."""

from __future__ import annotations

import logging
import sys


class HostError(Exception):
    """Base of every error the host raises on purpose: a stable ``code`` and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class ConfigError(HostError):
    """Bad configuration: the message is one line naming what is wrong and where."""

    def __init__(self, message: str) -> None:
        super().__init__("CONFIG", message)


def log_failure(logger: logging.Logger, message: str, *args: object) -> None:
    """Log the exception being handled under ``message`` (%-style ``args``).

    A ``HostError``, or a group of them, is one line, ``message: text (CODE)`` (distinct texts
    joined by ``; ``): the host raised it on purpose and its text says all there is (a lost
    lease, a full disk). Anything else keeps its traceback.
    """
    error = sys.exc_info()[1]
    members = error.exceptions if isinstance(error, BaseExceptionGroup) else (error,)
    readable = [member for member in members if isinstance(member, HostError)]
    if readable and len(readable) == len(members):
        texts = dict.fromkeys(f"{member.message} ({member.code})" for member in readable)
        logger.error(message + ": %s", *args, "; ".join(texts))
    else:
        logger.exception(message, *args)

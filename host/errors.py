"""The one shape every service error takes: an exception with a stable ``code``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator


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

    A ``HostError``, or a group (nested or not) of only them, is one line, ``message: text
    (CODE)`` with distinct texts joined by ``; ``: the host raised it on purpose and its text
    says what happened (a lost lease, a full disk); its traceback is added only while ``logger``
    is enabled for DEBUG. Anything else always keeps its traceback.
    """
    error = sys.exc_info()[1]
    if error is None:
        logger.error(message, *args)
        return
    leaves = list(_leaves(error))
    readable = [leaf for leaf in leaves if isinstance(leaf, HostError)]
    if len(readable) == len(leaves):
        texts = dict.fromkeys(f"{leaf.message} ({leaf.code})" for leaf in readable)
        debug = logger.isEnabledFor(logging.DEBUG)
        logger.error(message + ": %s", *args, "; ".join(texts), exc_info=debug)
    else:
        logger.exception(message, *args)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions in ``error``: itself, or every member of a group, groups flattened."""
    if isinstance(error, BaseExceptionGroup):
        for member in error.exceptions:
            yield from _leaves(member)
    else:
        yield error

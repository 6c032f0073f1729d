"""The reliability suite: property tests, fault injection, the authorization audit, crash
trials and a small load run. Counts scale up in the slow profile (``--slow`` or
``AGENT_HOST_SLOW=1``; see ``tests.reliability.support.scale``)."""

from __future__ import annotations

import pytest

from tests.conftest import slow_enabled
from tests.reliability import support


def pytest_configure(config: pytest.Config) -> None:
    support.SLOW = slow_enabled(config)

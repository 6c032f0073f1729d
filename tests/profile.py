"""The slow profile: the long trials at full counts (no tests here).

On with ``--slow`` or ``AGENT_HOST_SLOW=1``; any other value of the variable (``0``, empty,
``yes``) leaves it off. The repository's ``conftest.py`` settles ``SLOW`` in
``pytest_configure``, before any test module is imported, so module-level counts may use ``scale``. A test whose counts
scale is marked ``@pytest.mark.slow``: ``-m slow`` selects the long trials, e.g.
``AGENT_HOST_SLOW=1 .venv/bin/python -m pytest -m slow`` runs them at full counts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV = "AGENT_HOST_SLOW"


def requested(option: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the slow profile is selected: the ``--slow`` option or ``AGENT_HOST_SLOW=1``."""
    return option or environ.get(ENV) == "1"


SLOW = requested(False)
"""The slow profile (the environment alone until ``pytest_configure`` adds ``--slow``)."""


def scale(default: int, slow: int) -> int:
    """``default`` in the default run, ``slow`` in the slow profile."""
    return slow if SLOW else default

"""The one cattrs converter through which every JSON value crosses the host's boundary.

Modules that own a type register its hooks here at import time; nobody builds a second
converter. ``to_json`` writes a typed value as JSON; ``structure`` builds one from parsed data.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from cattrs.preconf.json import make_converter

T = TypeVar("T")

converter = make_converter(forbid_extra_keys=True, omit_if_default=False)


def unstructure(value: Any) -> Any:
    """Turn an attrs value into plain JSON-compatible data."""
    return converter.unstructure(value)


def structure(data: Any, cls: type[T]) -> T:
    """Build a typed value from plain data; raises cattrs errors on a mismatch."""
    return converter.structure(data, cls)


def to_json(value: Any) -> str:
    """Serialize an attrs value to one compact JSON line (no newline)."""
    return json.dumps(converter.unstructure(value), separators=(",", ":"), ensure_ascii=False)

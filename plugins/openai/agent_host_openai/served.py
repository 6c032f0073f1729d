"""Which models the server says it serves (``GET {base_url}/models``), for ``models check``.

Single-model servers (llama.cpp's ``llama-server``, llama-cpp-python with one model) answer
every request with their one model whatever id is sent, so a mistyped ``model`` goes unseen
until the answers look wrong; ``mismatch`` says so in one line.
"""

from __future__ import annotations

from typing import Any

import httpx


async def served_ids(
    client: httpx.AsyncClient, base_url: str, headers: dict[str, str]
) -> list[str] | None:
    """The model ids the server lists, or None when it lists none or cannot be asked."""
    try:
        response = await client.get(f"{base_url}/models", headers=headers)
        data: Any = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    return ids or None


def mismatch(model: str, ids: list[str] | None) -> str | None:
    """One line when ``model`` is not among the served ``ids``; None when it is (or unknown)."""
    if ids is None or model in ids:
        return None
    if len(ids) == 1:
        return (
            f"the server serves {ids[0]!r}, not the configured model {model!r} "
            "(a single-model server answers with its model whatever the id)"
        )
    return f"the server does not list the configured model {model!r} (it lists {', '.join(ids)})"

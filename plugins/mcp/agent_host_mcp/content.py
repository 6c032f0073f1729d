"""What a tool result holds, as text for the model — text as is, everything else one line — and
what of its ``structuredContent`` the session log keeps: data, not media, and not the text again.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types

_MEDIA_TYPES = ("image/", "audio/", "video/")
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)(?:;[\w.+=-]*)*?;base64,")


def render_content(blocks: list[types.ContentBlock]) -> str:
    """Text blocks as they are; images, audio and resources as one placeholder line each."""
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            lines.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            lines.append(_media_line(block.mime_type, block.data))
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                size = len(resource.text.encode())
            else:
                size = _b64_size(resource.blob)
            mime = f"{resource.mime_type}, " if resource.mime_type else ""
            lines.append(f"[resource: {resource.uri}, {mime}{size} bytes]")
        elif isinstance(block, types.ResourceLink):
            extra = "".join(
                f", {part}"
                for part in (block.mime_type, None if block.size is None else f"{block.size} bytes")
                if part
            )
            lines.append(f"[resource link: {block.uri}{extra}]")
        else:
            lines.append(f"[{getattr(block, 'type', 'content')}]")
    return "\n".join(lines)


def logged_structured(text: str, structured: Any) -> Any:
    """What the log keeps of a result's ``structured`` next to its rendered ``text``: its media
    as placeholders (``without_media``); None when it then only repeats the text (``repeats``)."""
    if structured is None:
        return None
    kept = without_media(structured)
    return None if repeats(text, kept) else kept


def without_media(value: Any) -> Any:
    """``value`` with each base64 media string replaced by the placeholder a content block of it
    gets (``[image/png, 12345 bytes]``): a ``data`` next to an image, audio or video
    ``mimeType`` (an image or audio block's shape), a resource's ``blob``, and a whole
    ``data:<mime>;base64,`` URI."""
    if isinstance(value, list):
        return [without_media(item) for item in value]
    if isinstance(value, str):
        uri = _DATA_URI.match(value)
        return value if uri is None else _media_line(uri.group(1), value[uri.end() :])
    if not isinstance(value, dict):
        return value
    mime = value.get("mimeType")
    mime = mime if isinstance(mime, str) else None
    media = mime is not None and mime.startswith(_MEDIA_TYPES)
    return {
        key: _media_line(mime or "binary", item)
        if isinstance(item, str) and (key == "blob" or (key == "data" and media))
        else without_media(item)
        for key, item in value.items()
    }


def repeats(text: str, structured: Any) -> bool:
    """Whether ``structured`` says nothing ``text`` does not: it is the JSON value the text
    holds, or an object of one entry whose value is the text or its JSON value (SDK servers
    send ``{"result": <the text>}``, the filesystem server ``{"content": <the text>}``)."""
    candidates = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        candidates.extend(structured.values())
    if any(candidate == text for candidate in candidates if isinstance(candidate, str)):
        return True
    try:
        held = _canonical(json.loads(text))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python parses
        return False
    return any(_canonical(candidate) == held for candidate in candidates)


def _canonical(value: Any) -> str:
    """One spelling of a JSON value (so that ``1`` and ``true`` stay different)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _media_line(mime: str, data: str) -> str:
    return f"[{mime}, {_b64_size(data)} bytes]"


def _b64_size(data: str) -> int:
    return len(data.strip().rstrip("=")) * 3 // 4

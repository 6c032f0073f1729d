"""What a tool result holds, as text for the model — text as is, everything else one line — and
what of its ``structuredContent`` the session log keeps: data, not media, and not the text again.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import mcp_types as types

MEDIA_CHARS = 1024
"""The shortest string of base64 that the log takes for media (768 bytes once decoded)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_HEX = re.compile(r"[0-9A-Fa-f]+")
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)(?:;[\w.+=-]*)*?;base64,([A-Za-z0-9+/]*={0,2})")
_TEXTUAL = re.compile(
    r"text/.*|application/(?:[\w.-]+\+)?(?:json|xml|javascript|ecmascript|yaml)", re.IGNORECASE
)
_SIGNATURES = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
)


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
    """What the log keeps of a result's ``structured`` next to its rendered ``text``: None when
    it only repeats the text (``repeats``, as sent or without its media), else it without its
    media (``without_media``)."""
    if structured is None or repeats(text, structured):
        return None
    kept = without_media(structured)
    if kept == structured:  # no media: ``repeats`` said no already (no text parsed twice)
        return kept
    return None if repeats(text, kept) else kept


def without_media(value: Any) -> Any:
    """``value`` with its media replaced by the placeholder a content block of it gets
    (``[image/png, 12345 bytes]``): each ``data:<mime>;base64,…`` URI within a string whose mime
    is not textual (``text/*`` and JSON, XML, JavaScript, YAML ``application/*`` stay), and each
    string of at least ``MEDIA_CHARS`` characters of strict base64 (``is_base64_media``) under
    any key, named by its object's ``mimeType`` under ``data`` or ``blob``, else by its first
    bytes (``binary`` when unknown). Shorter strings, URLs and hex digests stay as they are."""
    if isinstance(value, list):
        return [without_media(item) for item in value]
    if isinstance(value, str):
        return _without_media_text(value, None)
    if not isinstance(value, dict):
        return value
    mime = value.get("mimeType")
    named = mime if isinstance(mime, str) and mime else None
    return {
        key: _without_media_text(item, named if key in ("data", "blob") else None)
        if isinstance(item, str)
        else without_media(item)
        for key, item in value.items()
    }


def is_base64_media(text: str) -> bool:
    """Whether ``text`` is at least ``MEDIA_CHARS`` characters of strict base64 (the standard
    alphabet, no whitespace, padded to a multiple of 4) and not hexadecimal digits only."""
    return (
        len(text) >= MEDIA_CHARS
        and len(text) % 4 == 0
        and _BASE64.fullmatch(text) is not None
        and _HEX.fullmatch(text) is None
    )


def _without_media_text(text: str, mime: str | None) -> str:
    """``text`` as ``without_media`` keeps it; ``mime``: its object's, for ``data``/``blob``."""
    if is_base64_media(text):
        return _media_line(mime or _sniffed(text), text)
    return _DATA_URI.sub(_uri_placeholder, text) if "data:" in text else text


def _uri_placeholder(uri: re.Match[str]) -> str:
    mime = uri.group(1)
    return uri.group(0) if _TEXTUAL.fullmatch(mime) else _media_line(mime, uri.group(2))


def _sniffed(data: str) -> str:
    """The media type the first bytes of base64 ``data`` show, else ``binary``."""
    head = base64.b64decode(data[:16])
    return next((mime for magic, mime in _SIGNATURES if head.startswith(magic)), "binary")


def repeats(text: str, structured: Any) -> bool:
    """Whether ``structured`` says nothing ``text`` does not: it is the text, or the JSON value
    the text holds, or an object of the one entry ``result`` or ``content`` whose value is
    either (SDK servers send ``{"result": <the text>}``, the filesystem server ``{"content":
    <the text>}``); any other key says something."""
    candidates = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        candidates.extend(v for k, v in structured.items() if k in ("result", "content"))
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

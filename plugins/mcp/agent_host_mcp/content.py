"""What a tool result holds, as text for the model: text as is, everything else one line."""

from __future__ import annotations

import mcp_types as types


def render_content(blocks: list[types.ContentBlock]) -> str:
    """Text blocks as they are; images, audio and resources as one placeholder line each."""
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            lines.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            lines.append(f"[{block.mime_type}, {_b64_size(block.data)} bytes]")
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


def _b64_size(data: str) -> int:
    return len(data.strip().rstrip("=")) * 3 // 4

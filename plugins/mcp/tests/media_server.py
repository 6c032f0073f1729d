"""An MCP server (the SDK's ``MCPServer``, stdio) whose results repeat themselves in
``structuredContent``, the way real servers do, for the tests of what the session log keeps.

``picture`` answers an image both as content and inside ``structuredContent`` (as the
filesystem server's ``read_media_file`` does), with a thumbnail as a data URI; ``big`` answers
``--size`` bytes of text and ``{"content": <the same text>}``; ``listing`` answers a dict (the
SDK sends its JSON as text and the dict as structured); ``counted`` answers data of its own.
"""

import argparse
import base64
import hashlib
import json

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(3000)).decode()
PDF = base64.b64encode(b"%PDF-1.7\n" + bytes(3000)).decode()
MANIFEST = base64.b64encode(json.dumps({"pages": 3}).encode()).decode()


def main() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, ImageContent, TextContent

    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1000)
    size = parser.parse_args().size
    server = MCPServer("media")

    @server.tool()
    def picture() -> CallToolResult:
        """An image, as content and again inside the structured result."""
        block = {"type": "image", "data": PNG, "mimeType": "image/png"}
        return CallToolResult(
            content=[ImageContent(type="image", data=PNG, mime_type="image/png")],
            structured_content={
                "content": [block],
                "path": "/photos/cat.png",
                "thumbnail": f"data:image/png;base64,{PNG}",
            },
        )

    @server.tool()
    def big() -> CallToolResult:
        """A large text, and the same text as the structured result."""
        text = ("0123456789abcdef" * (size // 16 + 1))[:size]
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content={"content": text}
        )

    @server.tool()
    def listing() -> dict[str, list[str]]:
        """A dict: its JSON as text, the dict itself as structured."""
        return {"files": ["a.txt", "b.txt"]}

    @server.tool()
    def counted() -> CallToolResult:
        """A text and structured data that says more than it."""
        return CallToolResult(
            content=[TextContent(type="text", text="2 files")],
            structured_content={"files": ["a.txt", "b.txt"], "total": 2},
        )

    @server.tool()
    def document() -> CallToolResult:
        """A PDF as structured data, with a preview, an image URL and a digest."""
        return CallToolResult(
            content=[TextContent(type="text", text="report.pdf, 3 pages")],
            structured_content={
                "name": "report.pdf",
                "mimeType": "application/pdf",
                "data": PDF,
                "screenshot": PNG,
                "cover": {"mimeType": "image/png", "data": "https://example.org/cover.png"},
                "sha256": hashlib.sha256(base64.b64decode(PDF)).hexdigest(),
                "head_hex": base64.b64decode(PDF)[:640].hex(),  # 1,280 hex digits
            },
        )

    @server.tool()
    def page() -> CallToolResult:
        """HTML holding an image as a data URI, and a JSON manifest as another."""
        html = f'<p>A cat:</p><img src="data:image/png;base64,{PNG}" alt="cat"><p>The end.</p>'
        return CallToolResult(
            content=[TextContent(type="text", text="a page")],
            structured_content={
                "html": html,
                "manifest": f"data:application/json;base64,{MANIFEST}",
            },
        )

    server.run()


if __name__ == "__main__":
    main()

"""An MCP server for the connection tests, built on the SDK's ``MCPServer``; argv picks its faults.

    fault_server.py [--noise] [--stubborn] [--cancel-log PATH] [--pid-file PATH] [--http PORT]
    fault_server.py --silent [--stubborn]

``--silent`` is a plain script that reads stdin and never answers ``initialize``;
``--stubborn`` ignores SIGTERM and outlives its stdin closing; ``--noise`` writes stderr
lines at startup; ``--cancel-log`` makes ``slow`` record its start and cancellation there (``nap`` and
``doze`` their start and end);
``--pid-file`` has the server write its pid there as it starts;
``--http`` serves streamable HTTP on 127.0.0.1:PORT instead of stdio.
"""

import argparse
import base64
import os
import signal
import sys
import time
from typing import Any


def _stubborn() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _sleep_forever() -> None:
    while True:
        time.sleep(60)


def _silent(stubborn: bool) -> None:
    print("silent server: reading stdin, answering nothing", file=sys.stderr, flush=True)
    for _line in sys.stdin:
        pass
    if stubborn:
        _sleep_forever()


def _record(path: str | None, line: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def _serve(args: argparse.Namespace) -> None:
    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import ImageContent, ResourceLink, TextContent, ToolAnnotations

    server = MCPServer("fault")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def crash() -> str:
        """Exit with status 3 in the middle of the call."""
        print("fatal: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, recording the start and a cancellation in --cancel-log."""
        _record(args.cancel_log, "started")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            _record(args.cancel_log, "cancelled")
            raise
        return "slept"

    @server.tool()
    def busy(seconds: float) -> str:
        """Work (sleep) without looking up, recording the start in --cancel-log: nothing, not
        even the end of its input, stops the server before the work is done."""
        _record(args.cancel_log, "started")
        time.sleep(seconds)
        return "worked"

    @server.tool()
    def bad_schema() -> str:
        """Listed with an input schema that is not a valid JSON Schema."""
        return "unreachable"

    @server.tool()
    def fail() -> str:
        """Always fails (isError)."""
        raise ValueError("it failed")

    @server.tool()
    def media() -> list[TextContent | ImageContent | ResourceLink]:
        """Text, an image and a resource link."""
        png = base64.b64encode(b"\x89PNG" + bytes(96)).decode()
        return [
            TextContent(type="text", text="a picture"),
            ImageContent(type="image", data=png, mime_type="image/png"),
            ResourceLink(type="resource_link", name="doc", uri="file:///tmp/doc.txt"),
        ]

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool ``added`` and tell the client the list changed."""
        server.add_tool(lambda: "added here", name="added", description="Added at runtime.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    churning = {"lists": 0}
    first_listed, second_listed = anyio.Event(), anyio.Event()
    listed = server.list_tools

    async def list_tools() -> list[Any]:
        """The tools; while ``churn`` runs, its first listing answers (stale) only after a
        second one was answered, or after 3 s when no second comes while it is pending."""
        tools, count = await listed(), churning["lists"]
        churning["lists"] += bool(count)
        if count == 1:
            first_listed.set()
            with anyio.move_on_after(3):
                await second_listed.wait()
                await anyio.sleep(0.5)  # the second answer reaches the client first
        elif count == 2:
            second_listed.set()
        return tools

    server.list_tools = list_tools  # type: ignore[method-assign]

    @server.tool()
    async def churn(ctx: Context) -> str:
        """Add ``first`` and say the list changed, then (once it is listed) add ``second``
        and say it again."""
        churning["lists"] = 1
        server.add_tool(lambda: "first here", name="first", description="Added first.")
        await ctx.session.send_tool_list_changed()
        await first_listed.wait()
        server.add_tool(lambda: "second here", name="second", description="Added second.")
        await ctx.session.send_tool_list_changed()
        return "churned"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def nap(seconds: float) -> str:
        """Sleep (annotated read-only: calls of one step may run together), recording its
        start and end in --cancel-log."""
        return await _doze(seconds)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=True))
    async def doze(seconds: float) -> str:
        """``nap``, but annotated destructive as well (so not run together)."""
        return await _doze(seconds)

    async def _doze(seconds: float) -> str:
        _record(args.cancel_log, "started")
        await anyio.sleep(seconds)
        _record(args.cancel_log, "ended")
        return "rested"

    @server.tool()
    async def wait_for(path: str, ctx: Context) -> str:
        """Report progress every 0.2 s until the file ``path`` exists, then answer."""
        ticks = 0
        while not os.path.exists(path):
            ticks += 1
            await ctx.report_progress(ticks, None, f"waiting for {os.path.basename(path)}")
            await anyio.sleep(0.2)
        return "found"

    @server.tool()
    async def stray(count: int, ctx: Context) -> str:
        """Send ``count`` progress notifications for a token no request gave, then answer."""
        for index in range(count):
            await ctx.session.send_progress_notification("nobody", index + 1, count, "stray")
        return "strayed"

    @server.tool()
    def big(chars: int) -> str:
        """Return ``chars`` characters of text: digits, a newline after every 99."""
        line = "0123456789" * 9 + "012345678\n"
        return (line * (chars // len(line) + 1))[:chars]

    @server.tool()
    async def flood(count: int, ctx: Context) -> str:
        """Send ``count`` progress notifications as fast as it can, then answer."""
        for index in range(count):
            await ctx.report_progress(index + 1, count, f"step {index + 1} of {count}")
        return "flooded"

    tool = server._tool_manager.get_tool("bad_schema")
    assert tool is not None
    tool.parameters = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}

    if args.pid_file:
        _record(args.pid_file, str(os.getpid()))
    if args.noise:
        for index in range(3):
            print(f"noise line {index}", file=sys.stderr, flush=True)
    if args.stubborn:
        _stubborn()
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
    if args.stubborn:
        _sleep_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--cancel-log")
    parser.add_argument("--pid-file")
    parser.add_argument("--http", type=int)
    args = parser.parse_args()
    if args.silent:
        if args.stubborn:
            _stubborn()
        _silent(args.stubborn)
    else:
        _serve(args)


if __name__ == "__main__":
    main()

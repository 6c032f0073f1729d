"""A stdio server's process, supervised: spawned through the SDK's ``stdio_client`` with its
stderr read line by line, its exit status and last stderr line made into the death line, and
its stop escalated (stdin closed, a grace period, SIGTERM to its process group, another grace
period, SIGKILL) so that no process is left behind.

This module imports the SDK; import it only when a server is configured.
"""

from __future__ import annotations

import signal
from contextlib import AsyncExitStack, suppress
from typing import Any

from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_host_mcp.process import StderrLines, sdk_process, signal_group, wait_exit
from agent_host_mcp.session import ConnectionSpec, McpError

EXIT_WAIT = 2.0
"""How long a server whose output ended gets to exit before it counts as hung."""

STDERR_WAIT = 0.5
"""How long to wait for the last stderr bytes of a server that exited."""


class StdioServer:
    """The process of one stdio server; ``open`` spawns it within an exit stack whose exit
    stops it."""

    def __init__(self, spec: ConnectionSpec, grace: float) -> None:
        self.spec = spec
        self.name = spec.name
        self.grace = grace
        self.process: Any = None
        self.stderr: StderrLines | None = None

    @property
    def exited(self) -> bool:
        """True once the spawned process has exited."""
        return self.process is not None and self.process.returncode is not None

    async def open(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        """Spawn the server; its read and write streams. ``McpError`` when it cannot start."""
        spec = self.spec
        if not spec.command:
            raise McpError(f'MCP server "{self.name}" could not start: no command')
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )
        self.stderr = stderr = StderrLines(self.name)
        stack.callback(stderr.close)
        errlog = stderr.writer()
        transport = stdio_client(params, errlog=errlog)
        try:
            read, write = await stack.enter_async_context(transport)
        except OSError as error:
            reason = error.strerror or str(error)
            command = spec.as_written().command  # as written: a ${VAR} in it may be a secret
            message = f'MCP server "{self.name}" could not start: {reason}: {command}'
            raise McpError(message) from None
        except ValueError as error:
            raise McpError(f'MCP server "{self.name}" could not start: {error}') from None
        finally:
            errlog.close()
        self.process = sdk_process(transport)
        if self.process is not None:
            # Runs before the SDK's own teardown (LIFO), which then finds the server gone.
            stack.push_async_callback(self.stop)
        return read, write

    async def stop(self) -> None:
        """Close stdin, wait ``grace``, SIGTERM the group, wait ``grace``, SIGKILL the group."""
        process = self.process
        if process.returncode is None:
            with suppress(Exception):
                await process.stdin.aclose()
            if not await wait_exit(process, self.grace):
                signal_group(process.pid, signal.SIGTERM)
                if not await wait_exit(process, self.grace):
                    signal_group(process.pid, signal.SIGKILL)
                    await wait_exit(process, EXIT_WAIT)
        else:
            # The leader is gone; what it left in its group goes too.
            signal_group(process.pid, signal.SIGKILL)

    async def exit_message(self) -> str:
        """``MCP server "<name>" exited (status N): <last stderr line>`` once the exit is known
        (bounded by ``EXIT_WAIT``)."""
        process = self.process
        status: str = "unknown"
        if process is not None:
            if await wait_exit(process, EXIT_WAIT):
                code = int(process.returncode)
                status = f"status {code}" if code >= 0 else f"signal {-code}"
            else:
                status = "still running, output closed"
        tail = ""
        if self.stderr is not None:
            await self.stderr.wait_closed(STDERR_WAIT)
            tail = self.stderr.last_line
        return f'MCP server "{self.name}" exited ({status})' + (f": {tail}" if tail else "")

"""The stdio transport: one JSON-RPC message per line on stdin and stdout.

stdout carries protocol messages only. A daemon thread reads stdin (so exit never waits on
it); a line over ``MAX_MESSAGE_BYTES`` is skipped to its end and answered with an invalid
request. The connection ends when stdin closes: then the server closes the host as ``/exit``
does (turns end interrupted) and the command exits 0.
"""

from __future__ import annotations

import asyncio
import threading
from typing import IO, TYPE_CHECKING

from host.appserver import rpc
from host.appserver.connection import Connection

if TYPE_CHECKING:
    from host.appserver.server import AppServer

TOO_LARGE = b"\x00too-large"


def _read(stream: IO[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes]) -> None:
    """Hand each line of ``stream`` to ``lines`` (b"" at its end)."""
    while True:
        line = stream.readline(rpc.MAX_MESSAGE_BYTES + 1)
        if len(line) > rpc.MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the long line
                line = stream.readline(rpc.MAX_MESSAGE_BYTES)
            line = TOO_LARGE
        try:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        except RuntimeError:  # the loop closed: nobody reads any more
            return
        if not line:
            return


async def serve(server: AppServer, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Serve one connection on ``stdin``/``stdout`` until stdin ends."""
    connection = Connection(server)
    server.connect(connection)
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(
        target=_read, args=(stdin, loop, lines), name="agent-host-app-server-stdin", daemon=True
    ).start()
    writer = loop.create_task(_write(connection, stdout))
    try:
        while line := await lines.get():
            if line == TOO_LARGE:
                connection.send(rpc.TOO_LARGE.response(None))
            elif line.strip():
                connection.receive(line)
        await connection.finish()
    finally:
        connection.close()
        await writer


async def _write(connection: Connection, stdout: IO[bytes]) -> None:
    """Write what the connection queues, everything queued so far in one write."""
    while True:
        batch = await connection.take()
        lines = [text + b"\n" for text in batch if text is not None]
        if lines:
            stdout.write(b"".join(lines))
            stdout.flush()
        if None in batch:
            return

"""One client's connection: the handshake, requests dispatched to the methods, the threads it
follows, and the requests the server sends it (approvals, questions).

A transport hands each message it reads to ``receive`` and writes what ``send`` queues (UTF-8
JSON), in order (``take``); past ``MAX_UNREAD`` bytes queued and not yet taken, the connection
closes (``overflowed``) and the transport's ``hangup`` is called. Requests run as tasks, so
an answer to the server's request is read while a method waits; at most ``MAX_IN_FLIGHT``
at a time (more: ``OVERLOADED``). An error never ends the connection: it is answered, with
``id: null`` when the message had no usable id.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import cattrs

from host import __version__
from host.appserver import rpc
from host.appserver.protocol import (
    PROTOCOL_VERSION,
    Capabilities,
    InitializeParams,
    InitializeResult,
    ServerInfo,
)
from host.errors import HostError
from host.serialization import structure, unstructure
from host.sessions.codec import encode_json

if TYPE_CHECKING:
    from host.clients.events import ClientEvent
    from host.disposal import Disposer

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 64
"""Requests a connection may have running at once; more are refused (``OVERLOADED``)."""
MAX_UNREAD = 64 * 1024 * 1024
"""Bytes of messages queued for a client and not yet written (64 MiB): more close the
connection, so a client that stops reading cannot grow the server without bound."""
TOO_SLOW = "a client left over 64 MiB of messages unread"
"""Said on stderr, and as the WebSocket close reason (1008), when a client overflows."""

_ids = itertools.count(1)

Handler = Callable[["Connection", Any], Awaitable[Any]]
"""A method's handler: the connection that asked, and the method's params structured."""


class Server(Protocol):
    """What a connection uses of its server (``host.appserver.server.AppServer``, which
    imports this module): the methods it dispatches to, and being told the client left."""

    @property
    def methods(self) -> Mapping[str, tuple[type, Handler]]:
        """Each method's params class and handler, by name."""
        ...

    def gone(self, connection: Connection) -> None:
        """The client of ``connection`` left."""
        ...


class Connection:
    """One client (module docstring)."""

    def __init__(self, server: Server, hangup: Callable[[], None] = lambda: None) -> None:
        """``hangup``: how the transport drops a client that overflowed."""
        self.server = server
        self.hangup = hangup
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.unread = 0
        self.overflowed = False
        self.capabilities = Capabilities()
        self.state = "new"  # new → initializing → ready → closed
        self.follows: dict[str, Disposer] = {}
        self._asked: dict[str, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, message: dict[str, Any]) -> None:
        """Queue ``message``, as UTF-8 JSON, for the transport (nothing once closed)."""
        if self.state == "closed":
            return
        text = encode_json(message)
        self.unread += len(text)
        if self.unread > MAX_UNREAD:
            print(f"agent-host: {TOO_SLOW}: closed", file=sys.stderr)
            self.overflowed = True
            self.close()
            self.hangup()
            return
        self.outbox.put_nowait(text)

    async def take(self) -> list[bytes | None]:
        """The messages queued (waiting for one); None last once the connection closed."""
        taken = [await self.outbox.get()]
        while not self.outbox.empty():
            taken.append(self.outbox.get_nowait())
        self.unread -= sum(len(text) for text in taken if text is not None)
        return taken

    def notify(self, event: ClientEvent) -> None:
        """Send a feed event as its notification."""
        self.send(rpc.notification(event.METHOD, unstructure(event)))

    def receive(self, text: str | bytes) -> None:
        """Act on one message read."""
        try:
            message = rpc.parse(text)
        except rpc.RpcError as error:
            self.send(error.response(error.request_id))
            return
        if message.method is None:
            self._answered(message)
        elif not message.has_id:
            self._notified(message)
        elif message.method == "initialize":
            self._initialize(message)
        elif len(self._tasks) >= MAX_IN_FLIGHT:
            refusal = rpc.RpcError.of("OVERLOADED", "too many requests in flight; retry later")
            self.send(refusal.response(message.id))
        else:
            task = asyncio.get_running_loop().create_task(self._request(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _notified(self, message: rpc.Message) -> None:
        if message.method == "initialized" and self.state == "initializing":
            self.state = "ready"

    def _initialize(self, message: rpc.Message) -> None:
        """The handshake's request, answered at once (so that ``initialized``, read next,
        finds it done)."""
        try:
            if self.state != "new":
                raise rpc.RpcError(
                    rpc.INVALID_REQUEST, "initialize was already called", "INVALID_REQUEST"
                )
            params: InitializeParams = self._params(message.params, InitializeParams)
        except rpc.RpcError as error:
            self.send(error.response(message.id))
            return
        self.capabilities = params.capabilities
        self.state = "initializing"
        info = InitializeResult(ServerInfo("agent-host", __version__), PROTOCOL_VERSION)
        self.send(rpc.result(message.id, unstructure(info)))

    @staticmethod
    def _params(params: Any, kind: type) -> Any:
        try:
            return structure(params, kind)
        except (cattrs.BaseValidationError, TypeError, ValueError) as error:
            raise rpc.RpcError(rpc.INVALID_PARAMS, _params_line(error), "INVALID_PARAMS") from None

    async def _request(self, message: rpc.Message) -> None:
        assert message.method is not None
        try:
            value = await self._dispatch(message.method, message.params)
        except rpc.RpcError as error:
            self.send(error.response(message.id))
        except HostError as error:
            self.send(rpc.RpcError.of(error.code, error.message).response(message.id))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.exception("app-server: %s failed", message.method)
            failure = rpc.RpcError(
                rpc.INTERNAL_ERROR, f"internal error: {type(error).__name__}", "INTERNAL"
            )
            self.send(failure.response(message.id))
        else:
            self.send(rpc.result(message.id, unstructure(value)))

    async def _dispatch(self, method: str, params: Any) -> Any:
        found = self.server.methods.get(method)
        if found is None:
            raise rpc.RpcError(
                rpc.METHOD_NOT_FOUND, f"unknown method {method!r}", "METHOD_NOT_FOUND"
            )
        if self.state != "ready":
            raise rpc.RpcError(
                rpc.NOT_INITIALIZED,
                "not initialized: send initialize, then the initialized notification",
                "NOT_INITIALIZED",
            )
        kind, handler = found
        return await handler(self, self._params(params, kind))

    # -- the server's requests -------------------------------------------------------------

    async def ask(self, method: str, params: Any) -> Any:
        """Send the server's request; the client's result (``RpcError`` for its error,
        ``ConnectionError`` when the connection closes first)."""
        request_id = f"srv-{next(_ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._asked[request_id] = future
        self.send(rpc.request(request_id, method, unstructure(params)))
        try:
            return await future
        finally:
            self._asked.pop(request_id, None)

    def _answered(self, message: rpc.Message) -> None:
        future = self._asked.get(message.id) if isinstance(message.id, str) else None
        if future is None or future.done():
            return  # an answer nobody waits for (late, or never asked): ignored
        if message.error is not None:
            future.set_exception(rpc.RpcError(rpc.HOST_ERROR, str(message.error), "CLIENT_ERROR"))
        else:
            future.set_result(message.result)

    async def finish(self) -> None:
        """The client sent its last message (stdin ended): what it asked is still answered,
        what the server asked it fails, then the connection closes."""
        self._fail_asked()
        if self._tasks:
            await asyncio.wait(list(self._tasks))
        self.close()

    def close(self) -> None:
        """The client is gone: stop following, fail what it was asked. Its requests still
        running finish (a resume is not cut in half); their answers go nowhere."""
        if self.state == "closed":
            return
        self.state = "closed"
        for stop in self.follows.values():
            stop()
        self.follows.clear()
        self._fail_asked()
        self.outbox.put_nowait(None)
        self.server.gone(self)

    def _fail_asked(self) -> None:
        for future in self._asked.values():
            if not future.done():
                future.set_exception(ConnectionError("the client disconnected"))


def _params_line(error: Exception) -> str:
    """One line saying what is wrong with the params."""
    if isinstance(error, cattrs.BaseValidationError):
        return "invalid params: " + "; ".join(cattrs.transform_error(error))
    return f"invalid params: {error}"

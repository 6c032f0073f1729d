"""A TCP forwarder that adds a fixed delay each way: a database one network hop away.

Run as its own process (so its threads do not share the measured process's interpreter
lock): ``python bench/pg/delay_proxy.py HOST PORT DELAY_MS``. It prints the port it listens
on, then forwards every connection to ``HOST:PORT``, holding each chunk ``DELAY_MS / 2`` in
each direction (so a request and its answer take ``DELAY_MS`` more), until killed.
"""

from __future__ import annotations

import socket
import sys
import threading
import time


def pump(source: socket.socket, sink: socket.socket, delay: float) -> None:
    """Forward ``source`` to ``sink``, each chunk ``delay`` seconds after it arrived."""
    try:
        while data := source.recv(65536):
            due = time.perf_counter() + delay
            while (left := due - time.perf_counter()) > 0:
                time.sleep(left)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            end.close()


def main() -> None:
    host, port, delay_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    half = delay_ms / 2000
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection((host, port))
        for end in (client, server):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, server, half), daemon=True).start()
        threading.Thread(target=pump, args=(server, client, half), daemon=True).start()


if __name__ == "__main__":
    main()

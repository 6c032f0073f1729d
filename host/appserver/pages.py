"""The web console's static files (``app-server --listen ws://… --web``), served over the
WebSocket's own port by its ``process_request`` hook.

The files ship inside the package (``host/appserver/web``: plain JavaScript modules, CSS and
one HTML page, no build step) and hold no data: everything the page shows comes over the
protocol, with the token the URL's fragment carried. They are answered without a token,
with headers that keep the page to its own origin (a content security policy allowing only
its own scripts, styles and connections) and out of frames.
"""

from __future__ import annotations

from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class Pages:
    """The console's files by URL path (``/`` is ``index.html``), read once at start."""

    def __init__(self) -> None:
        folder = resources.files("host.appserver") / "web"
        self.files: dict[str, tuple[bytes, str]] = {}
        for entry in folder.iterdir():
            kind = TYPES.get("." + entry.name.rpartition(".")[2])
            if kind is not None:
                self.files["/" + entry.name] = (entry.read_bytes(), kind)
        self.files["/"] = self.files["/index.html"]

    def answer(self, request: Request) -> Response | None:
        """The file a plain ``GET`` asks for; None for a WebSocket upgrade (the gate decides)
        and 404 for anything else."""
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return None
        found = self.files.get(request.path.partition("?")[0])
        if found is None:
            return _response(404, "Not Found", b"not found\n", "text/plain; charset=utf-8")
        body, kind = found
        return _response(200, "OK", body, kind)


def _response(status: int, reason: str, body: bytes, kind: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", kind),
            ("Content-Length", str(len(body))),
            ("Content-Security-Policy", POLICY),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status, reason, headers, body)

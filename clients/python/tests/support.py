"""Loopback servers the tests play the network with: a proxy in front of the service that can cut
or answer requests itself, a webhook receiver, and a server answering canned errors."""

from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union
from urllib.parse import urlsplit

#: What the proxy does with a request: pass it on ("pass"), pass it on and cut the connection
#: before the answer reaches the client ("drop-response"), pass it to another path of the service
#: ("to:/v1/..."), hang without answering ("hang"), or answer (status, headers, body) itself.
Decision = Union[str, Tuple[int, Dict[str, str], Any]]
_L = TypeVar("_L", bound="Loopback")


class Seen:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Loopback:
    """A threaded HTTP server on 127.0.0.1; ``handle(handler, seen)`` answers each request."""

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler, Seen], None]) -> None:
        self.seen: List[Seen] = []
        self.stopping = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                outer.seen.append(seen)
                handle(self, seen)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self: _L) -> _L:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def answer(handler: BaseHTTPRequestHandler, status: int, headers: Dict[str, str], body: Any) -> None:
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    handler.send_response(status)
    sent = {"content-type": "application/json", **headers}
    for name, value in sent.items():
        handler.send_header(name, value)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()


def proxy(target: str, rule: Callable[[Seen, int], Decision]) -> Loopback:
    """A proxy to ``target``; ``rule(request, n)`` decides, ``n`` counting requests of the same method and path from 1."""
    counts: Dict[str, int] = {}
    lock = threading.Lock()
    upstream = urlsplit(target)
    box: List[Loopback] = []

    def handle(handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        with lock:
            key = f"{seen.method} {seen.path}"
            counts[key] = counts.get(key, 0) + 1
            n = counts[key]
        decision = rule(seen, n)
        if isinstance(decision, tuple):
            answer(handler, *decision)
            return
        if decision == "hang":
            box[0].stopping.wait(30)
            handler.close_connection = True
            return
        connection = http.client.HTTPConnection(upstream.hostname or "127.0.0.1", upstream.port, timeout=60)
        headers = {k: v for k, v in seen.headers.items() if k not in ("host", "connection", "accept-encoding")}
        target_path = decision[3:] if decision.startswith("to:") else seen.path
        connection.request(seen.method, target_path, body=seen.body or None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        if decision == "drop-response":
            # The service did the work; the client never hears of it.
            handler.close_connection = True
            handler.connection.close()
            return
        passed = {k: v for k, v in response.getheaders() if k.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding")}
        answer(handler, response.status, passed, data)

    server = Loopback(handle)
    box.append(server)
    return server


class Receiver(Loopback):
    """A webhook receiver: keeps each message's raw body and headers, answers 204."""

    def __init__(self) -> None:
        self.messages: List[Seen] = []

        def handle(handler: BaseHTTPRequestHandler, seen: Seen) -> None:
            self.messages.append(seen)
            answer(handler, 204, {}, None)

        super().__init__(handle)

    def received(self, count: int, timeout: float = 20.0) -> List[Seen]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the receiver got {len(self.messages)} of {count} messages within {timeout} s")
            time.sleep(0.05)
        return self.messages[:count]


def canned(status: int, headers: Dict[str, str], body: Any) -> Loopback:
    """A server answering every request with the same answer."""
    return Loopback(lambda handler, _seen: answer(handler, status, headers, body))


def wait_for(check: Callable[[], Optional[Any]], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)

"""Issue 31 and 26 on the Python side: what a caller sends is not lost, no run outlives its
deadline, a failure stays the cause of what its handling raised, a breaker's canary always ends,
and long calls let other threads run."""

from __future__ import annotations

import threading
import time

import retrypolicy as rp


def test_a_long_storm_releases_the_gil_so_another_thread_keeps_running() -> None:
    # 10^5 requests with a retried reason: the core runs for a while; a thread that ticks (and
    # yields at each tick) must advance during the call. With the GIL held it ticks at most once.
    scenario = {
        "request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
        "reason": "KV_TEMPORARY_FAILURE",
        "requests_per_second": 1000,
        "duration_ms": 100_000,
        "latency_ms": 10,
    }
    ticks, stop = [0], threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        while ticks[0] == 0:
            time.sleep(0.001)
        before = ticks[0]
        report = rp.simulate_storm(scenario)
        during = ticks[0] - before
    finally:
        stop.set()
        thread.join()
    assert report["requests"] == 100_000
    assert during > 50, f"the ticking thread advanced {during} times during the storm"


# ---- the httpx transports --------------------------------------------------------------------------

import asyncio  # noqa: E402
import socket  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import pytest  # noqa: E402

from retrypolicy.httpx import AsyncRetryTransport, RetryTransport  # noqa: E402
from test_httpx_server import Handler, Script, Server  # noqa: E402


class QuickHandler(Handler):
    """The local server's handler with TCP_NODELAY: its headers and body leave at once (no 40 ms
    delayed-ACK stall per keep-alive request)."""

    disable_nagle_algorithm = True


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    srv = Server(("127.0.0.1", 0), QuickHandler)
    srv.script = Script()
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/", srv.script
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


@pytest.mark.parametrize("status", [600, 999])
def test_a_status_past_599_is_returned_and_100_of_them_leave_the_pool_free(server: tuple[str, Script], status: int) -> None:
    url, script = server
    script.answers = [status]
    pool = httpx.HTTPTransport(limits=httpx.Limits(max_connections=1))
    with httpx.Client(transport=RetryTransport(pool), timeout=httpx.Timeout(10.0, pool=2.0)) as client:
        for _ in range(100):
            response = client.get(url)
            assert response.status_code == status  # the server's answer, not an OutOfRangeError
    assert len(script.arrivals) == 100  # final: never retried


def test_a_status_past_599_reaches_the_async_caller(server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = [999]

    async def main() -> list[int]:
        pool = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1))
        async with httpx.AsyncClient(transport=AsyncRetryTransport(pool), timeout=httpx.Timeout(10.0, pool=2.0)) as client:
            return [(await client.get(url)).status_code for _ in range(100)]

    assert asyncio.run(main()) == [999] * 100
    assert len(script.arrivals) == 100


def test_a_response_dropped_by_a_raising_hook_is_closed(
    server: tuple[str, Script],
) -> None:
    url, script = server
    script.answers = [503]

    def give_up(step: Any, result: Any) -> None:
        raise RuntimeError("hook failed")

    pool = httpx.HTTPTransport(limits=httpx.Limits(max_connections=1))
    transport = RetryTransport(pool, max_attempts=1, on_give_up=give_up)
    with httpx.Client(transport=transport, timeout=httpx.Timeout(10.0, pool=2.0)) as client:
        for _ in range(20):  # one connection: a response left open would starve the next request
            with pytest.raises(RuntimeError, match="hook failed"):
                client.get(url)
    assert len(script.arrivals) == 20


class Dribbler:
    """A server on 127.0.0.1 that answers each request by sending its status line and headers one
    byte every ``gap`` seconds; records, per connection, whether it sent them all."""

    RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"x" * 40 + b"\r\nContent-Length: 2\r\n\r\nok"

    def __init__(self, gap: float = 0.2) -> None:
        self.gap = gap
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.finished: list[bool] = []
        self.handlers: list[threading.Thread] = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            handler = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.handlers.append(handler)
            handler.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)  # the request (small, one read)
            try:
                for i in range(len(self.RESPONSE)):
                    conn.sendall(self.RESPONSE[i : i + 1])
                    time.sleep(self.gap)
            except OSError:  # the client closed the connection
                self.finished.append(False)
                return
            self.finished.append(True)

    def close(self) -> None:
        self.sock.close()
        for h in list(self.handlers):
            h.join(60)


@pytest.fixture
def dribbler() -> Iterator[Dribbler]:
    d = Dribbler()
    try:
        yield d
    finally:
        d.close()


def test_sync_a_server_dribbling_its_headers_is_cut_at_the_deadline(dribbler: Dribbler) -> None:
    started = time.monotonic()
    with httpx.Client(transport=RetryTransport(deadline=1.0)) as client:
        with pytest.raises(httpx.TimeoutException):
            client.get(dribbler.url)
    assert time.monotonic() - started >= 0.9  # a lower bound only: it did wait for the deadline
    dribbler.close()
    assert dribbler.finished and not any(dribbler.finished)  # every connection closed mid-headers


def test_async_a_server_dribbling_its_headers_is_cut_at_the_deadline(dribbler: Dribbler) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(transport=AsyncRetryTransport(deadline=1.0)) as client:
            with pytest.raises(httpx.TimeoutException):
                await client.get(dribbler.url)

    asyncio.run(main())
    dribbler.close()
    assert dribbler.finished and not any(dribbler.finished)

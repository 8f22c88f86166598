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


# ---- the runners -----------------------------------------------------------------------------------

from retrypolicy.run import AsyncRetrying, Retrying, RetryTimeoutError, retry  # noqa: E402

from test_run import FakeTime  # noqa: E402

GET = rp.Operation.kv("get")
BREAKER = {"volume_threshold": 4, "error_threshold_percentage": 50, "sleep_window_ms": 1000, "canary_timeout_ms": 500}


def half_open(t: FakeTime) -> rp.CircuitBreaker:
    """A breaker tripped by four failures, its sleep window over: the next attempt is its canary."""
    breaker = rp.CircuitBreaker(BREAKER)
    for _ in range(4):
        breaker.record(int(t.now * 1000), "failure")
    t.now += 1.5  # past the 1 s sleep window
    return breaker


def canary_free(breaker: rp.CircuitBreaker, t: FakeTime) -> bool:
    """Whether the breaker lets a canary through now (none is left in flight)."""
    verdict = breaker.permit(int(t.now * 1000))
    return verdict.permitted and verdict.canary


class Hanging:
    """An attempt that never settles until its ``n``-th call (then "ok"); counts calls and the
    cancellations it received."""

    def __init__(self, settles_at: int = 10**9) -> None:
        self.settles_at, self.calls, self.cancelled = settles_at, 0, 0
        self.started = asyncio.Event()

    async def __call__(self) -> str:
        self.calls += 1
        self.started.set()
        if self.calls >= self.settles_at:
            return "ok"
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return "never"


def test_async_an_attempt_that_never_settles_is_cancelled_at_the_deadline() -> None:
    fn = Hanging()
    with pytest.raises(RetryTimeoutError) as info:
        asyncio.run(AsyncRetrying(GET, timeout=0.05)(fn))
    assert fn.calls >= 1 and fn.cancelled == fn.calls  # every attempt cut, none left pending
    assert info.value.step.end == "timed_out"
    assert isinstance(info.value.__cause__, TimeoutError)


def test_async_an_attempt_past_its_attempt_timeout_is_cancelled_and_retried() -> None:
    fn = Hanging(settles_at=2)
    assert asyncio.run(AsyncRetrying(GET, timeout=60.0, attempt_timeout=0.02)(fn)) == "ok"
    assert (fn.calls, fn.cancelled) == (2, 1)


def test_async_the_callers_cancellation_cancels_the_run_and_releases_the_canary() -> None:
    t, fn = FakeTime(), Hanging()
    breaker = half_open(t)

    async def main() -> None:
        task = asyncio.create_task(AsyncRetrying(GET, timeout=60.0, clock=t.clock, breaker=breaker)(fn))
        await fn.started.wait()
        assert not canary_free(breaker, t)  # the attempt out is the canary
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert fn.cancelled == 1
    assert canary_free(breaker, t)


def test_sync_a_canary_ending_in_a_final_error_closes_the_breaker() -> None:
    t = FakeTime()
    breaker = half_open(t)

    def fn() -> None:
        raise ValueError("the server said no")  # the default classifier: final

    with pytest.raises(ValueError):
        Retrying(GET, timeout=2.5, clock=t.clock, sleep=t.sleep, breaker=breaker)(fn)
    assert breaker.state(int(t.now * 1000)) == "closed"


@pytest.mark.parametrize("escape", ["keyboard_interrupt", "classifier_raises"])
def test_sync_a_canary_that_escapes_the_run_is_released(escape: str) -> None:
    t = FakeTime()
    breaker = half_open(t)

    def fn() -> None:
        if escape == "keyboard_interrupt":
            raise KeyboardInterrupt
        raise ConnectionResetError("reset")

    def classify(exc: Exception) -> None:
        raise RuntimeError("classifier bug")

    with pytest.raises((KeyboardInterrupt, RuntimeError)):
        Retrying(GET, timeout=2.5, clock=t.clock, sleep=t.sleep, breaker=breaker, classify=classify)(fn)
    assert canary_free(breaker, t)  # not left half-open with a canary that never ends


def test_async_a_canary_whose_classifier_raises_is_released() -> None:
    t = FakeTime()
    breaker = half_open(t)

    async def fn() -> None:
        raise ConnectionResetError("reset")

    def classify(exc: Exception) -> None:
        raise RuntimeError("classifier bug")

    with pytest.raises(RuntimeError):
        asyncio.run(AsyncRetrying(GET, timeout=2.5, clock=t.clock, sleep=t.asleep, breaker=breaker, classify=classify)(fn))
    assert canary_free(breaker, t)


class ClockBreaksAfterFailure(FakeTime):
    """A clock that raises once told to, as a clock going wrong mid-run."""

    broken = False

    def clock(self) -> float:
        if self.broken:
            raise OSError("clock failed")
        return self.now

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        self.broken = True


def _hook_raises(decision: Any, exc: Exception) -> None:
    raise RuntimeError("hook failed")


def _classifier_raises(exc: Exception) -> None:
    raise RuntimeError("classifier failed")


@pytest.mark.parametrize("where", ["classifier", "on_give_up", "on_retry", "clock"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_error_raised_while_handling_a_failure_carries_it(where: str, mode: str) -> None:
    t = ClockBreaksAfterFailure()
    failure = ConnectionResetError("the attempt's failure")
    options: dict[str, Any] = {"clock": t.clock}
    if where == "classifier":
        options["classify"] = _classifier_raises
    elif where == "on_give_up":
        options["max_attempts"] = 1
        options["on_give_up"] = _hook_raises
    elif where == "on_retry":
        options["on_retry"] = _hook_raises

    def fn() -> None:
        raise failure

    async def afn() -> None:
        raise failure

    with pytest.raises((RuntimeError, OSError)) as info:
        if mode == "sync":
            Retrying(GET, timeout=2.5, sleep=t.sleep, **options)(fn)
        else:
            asyncio.run(AsyncRetrying(GET, timeout=2.5, sleep=t.asleep, **options)(afn))
    assert info.value is not failure
    assert info.value.__context__ is failure


def test_retry_refuses_generators_and_takes_async_call_objects_as_async() -> None:
    def gen() -> Iterator[int]:
        yield 1

    async def agen() -> Any:
        yield 1

    for fn, kind in ((gen, "a generator"), (agen, "an async generator")):
        with pytest.raises(TypeError, match=kind):
            retry(GET, timeout=2.5)(fn)

    class Gen:
        def __call__(self) -> Iterator[int]:
            yield 1

    with pytest.raises(TypeError, match="a generator"):
        retry(GET, timeout=2.5)(Gen())

    class Flaky:
        def __init__(self) -> None:
            self.calls = 0

        async def __call__(self) -> str:
            self.calls += 1
            if self.calls < 3:
                raise ConnectionResetError("reset")
            return "ok"

    flaky = Flaky()
    wrapped = retry(GET, timeout=60.0, sleep=FakeTime().asleep)(flaky)
    assert asyncio.run(wrapped()) == "ok"
    assert flaky.calls == 3

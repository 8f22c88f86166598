"""The retry runners (retrypolicy.run): decorator and call forms, sync and asyncio, giving up,
hooks, logging, the testing switch, the ready classifiers; all with a fake clock and fake sleep."""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import urllib.error
from typing import Any

import httpx
import pytest

import retrypolicy as rp
from retrypolicy import Decision, Operation, RetryReason
from retrypolicy.run import (
    AsyncRetrying,
    Retrying,
    RetryTimeoutError,
    decision_of,
    first_of,
    http_status_errors,
    network_errors,
    retry,
    instant_sleeps,
)

GET, UPSERT = Operation.kv("get"), Operation.kv("upsert")


class FakeTime:
    """A monotonic clock that only sleeps move (plus each call's cost), recording the sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def failing(*errors: Exception, result: Any = "done") -> tuple[Any, list[int]]:
    """A function raising ``errors`` in turn, then returning ``result``; and its call counter."""
    calls = [0]

    def fn(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] <= len(errors):
            raise errors[calls[0] - 1]
        return (result, args, kwargs)

    return fn, calls


def test_call_form_retries_until_success_with_the_core_delays() -> None:
    t = FakeTime()
    fn, calls = failing(ConnectionResetError(), ConnectionResetError(), ConnectionRefusedError())
    runner = Retrying(GET, timeout=2.5, clock=t.clock, sleep=t.sleep)
    assert runner(fn, 1, key="k") == ("done", (1,), {"key": "k"})
    assert calls[0] == 4
    assert t.sleeps == [0.001, 0.002, 0.004]  # RFC 0049 best effort: 1, 2, 4 ms


def test_decorator_keeps_the_function_and_works_async() -> None:
    t = FakeTime()
    sync_fn, sync_calls = failing(TimeoutError())

    @retry(GET, timeout=1.0, clock=t.clock)
    def wrapped(x: int) -> Any:
        """Doc."""
        return sync_fn(x)

    async_fn, async_calls = failing(ConnectionResetError())

    @retry(GET, timeout=1.0)
    async def awrapped(x: int) -> Any:
        await asyncio.sleep(0)
        return async_fn(x)

    assert wrapped.__name__ == "wrapped" and wrapped.__doc__ == "Doc."
    assert wrapped(3)[1] == (3,) and sync_calls[0] == 2
    assert asyncio.run(awrapped(4))[1] == (4,) and async_calls[0] == 2


def test_an_error_classify_rejects_is_raised_at_once_untouched(caplog: pytest.LogCaptureFixture) -> None:
    error = ValueError("bad input")
    fn, calls = failing(error)
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), pytest.raises(ValueError) as info:
        Retrying(GET, timeout=1.0)(fn)
    assert info.value is error and calls[0] == 1
    assert decision_of(error) is None and not getattr(error, "__notes__", None)
    assert not [r for r in caplog.records if r.name == "retrypolicy"]


def test_not_idempotent_gives_up_with_the_last_error_and_its_decision() -> None:
    t = FakeTime()
    given_up: list[tuple[Decision, Exception]] = []
    error = ConnectionResetError("in flight")
    fn, calls = failing(error)
    runner = Retrying(UPSERT, timeout=1.0, clock=t.clock, sleep=t.sleep, on_give_up=lambda d, e: given_up.append((d, e)))
    with pytest.raises(ConnectionResetError) as info:
        runner(fn)
    assert info.value is error and calls[0] == 1 and t.sleeps == []
    decision = decision_of(error)
    assert decision is not None and decision.cause == "not_idempotent" and decision.attempts == 0
    assert given_up == [(decision, error)]
    if sys.version_info >= (3, 11):
        assert error.__notes__ == [f"retrypolicy: {decision}"]


def test_not_idempotent_with_a_reason_that_allows_it_is_retried() -> None:
    t = FakeTime()
    fn, calls = failing(ConnectionRefusedError())  # not sent: SOCKET_NOT_AVAILABLE
    assert Retrying(UPSERT, timeout=1.0, clock=t.clock, sleep=t.sleep)(fn)[0] == "done"
    assert calls[0] == 2
    fn, calls = failing(ConnectionResetError())
    assert Retrying(UPSERT, timeout=1.0, idempotent=True, clock=t.clock, sleep=t.sleep)(fn)[0] == "done"


def test_out_of_time_raises_retry_timeout_error_from_the_last_error() -> None:
    t = FakeTime()
    errors = [ConnectionResetError(str(i)) for i in range(50)]
    fn, calls = failing(*errors)
    with pytest.raises(RetryTimeoutError) as info:
        Retrying(GET, timeout=0.05, clock=t.clock, sleep=t.sleep)(fn)
    assert isinstance(info.value, TimeoutError)
    decision = decision_of(info.value)
    assert decision is not None and decision.then_cancel and decision.attempts == calls[0] - 1
    assert info.value.__cause__ is errors[calls[0] - 1] is info.value.last_error
    assert decision_of(errors[calls[0] - 1]) is decision
    assert sum(t.sleeps) < 0.05  # 1+2+4+8+16 = 31 ms slept; the next 32 ms would reach 50


def test_deadline_passed_during_a_call_raises_retry_timeout_error() -> None:
    t = FakeTime()

    def slow() -> None:
        t.now += 2.0
        raise TimeoutError("no reply")

    with pytest.raises(RetryTimeoutError) as info:
        Retrying(GET, timeout=1.0, clock=t.clock, sleep=t.sleep)(slow)
    decision = decision_of(info.value)
    assert decision is not None and decision.cause == "deadline_passed" and t.sleeps == []


def test_hooks_logs_and_jitter_draws() -> None:
    t = FakeTime()
    retried: list[tuple[int | None, str]] = []
    policy = rp.policy_from_dict({"backoff": {"kind": "exponential", "min_ms": 100, "max_ms": 1000}, "jitter": "full"})
    fn, _ = failing(ConnectionResetError("a"), ConnectionResetError("b"))
    stream = io.StringIO()
    logger = logging.getLogger("retrypolicy.test_run")
    logger.addHandler(logging.StreamHandler(stream))
    logger.setLevel(logging.INFO)
    runner = Retrying(
        GET,
        timeout=5,
        policy=policy,
        random=lambda: 0.5,
        clock=t.clock,
        sleep=t.sleep,
        on_retry=lambda d, e: retried.append((d.delay_ms, str(e))),
        logger=logger,
        log_level=logging.INFO,
    )
    runner(fn)
    assert retried == [(50, "a"), (100, "b")]  # full jitter at 0.5 of 100 ms, then of 200 ms
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert "failing.<locals>.fn: attempt 1 failed (ConnectionResetError): retry 1 after 50 ms" in lines[0]
    assert "failing.<locals>.fn: attempt 2 failed (ConnectionResetError): retry 2 after 100 ms" in lines[1]


def test_every_decision_is_logged_on_the_retrypolicy_logger(caplog: pytest.LogCaptureFixture) -> None:
    t = FakeTime()
    fn, _ = failing(ConnectionResetError(), ConnectionResetError())
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), pytest.raises(ConnectionResetError):
        Retrying(UPSERT, timeout=1, clock=t.clock, sleep=t.sleep)(failing(ConnectionResetError())[0])
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"):
        Retrying(GET, timeout=1, clock=t.clock, sleep=t.sleep)(fn)
    records = [r for r in caplog.records if r.name == "retrypolicy"]
    assert [getattr(r, "retry_attempts") for r in records] == [0, 0, 1]
    assert [getattr(r, "retry_rule") for r in records] == ["best_effort_not_idempotent", "best_effort_backoff", "best_effort_backoff"]
    assert [getattr(r, "retry_delay_ms") for r in records] == [None, 1, 2]


def test_testing_switch_makes_sleeps_instant_but_keeps_decisions() -> None:
    t = FakeTime()
    seen: list[int | None] = []
    fn, calls = failing(ConnectionResetError(), ConnectionResetError())
    with instant_sleeps():
        Retrying(GET, timeout=1, clock=t.clock, sleep=t.sleep, on_retry=lambda d, e: seen.append(d.delay_ms))(fn)
    assert t.sleeps == [] and seen == [1, 2] and calls[0] == 3
    fn, _ = failing(ConnectionResetError())
    Retrying(GET, timeout=1, clock=t.clock, sleep=t.sleep)(fn)
    assert t.sleeps == [0.001]


def test_testing_switch_runs_a_call_failing_until_its_deadline_as_a_real_run() -> None:
    # Exponential 100, 200, 400, 800 ms, no jitter, a 2 s deadline: attempts at 0, 100, 300, 700
    # and 1500 ms; the next wait (1600 ms) would end at 3100, past the deadline: timed out after 5
    # attempts, 1.5 s waited (worked by hand). A skipped wait moves the run's clock by its length.
    policy = rp.Policy.from_json('{"backoff": {"kind": "exponential", "min_ms": 100, "max_ms": 10000, "factor": 2}}')

    def attempts(**options: Any) -> tuple[int, Any, str | None]:
        calls = [0]

        def fn() -> None:
            calls[0] += 1
            raise ConnectionResetError() if calls[0] <= 100 else ValueError("runaway")  # ValueError: final

        runner = Retrying(GET, timeout=2, policy=policy, **options)
        with pytest.raises((RetryTimeoutError, ValueError)):
            runner(fn)
        stats = runner.statistics
        assert stats is not None
        return calls[0], stats.waited_ms, stats.end

    by_hand = (5, 1500, "timed_out")
    with instant_sleeps():
        assert attempts() == by_hand  # the real clock plus the skipped waits (no real 500 ms passes)
        t = FakeTime()
        assert attempts(clock=t.clock, sleep=t.sleep) == by_hand  # the call's sleep skipped, its clock moved
        assert (t.sleeps, t.now) == ([], 100.0)

        async def main() -> tuple[int, Any, str | None]:
            calls = [0]

            async def afn() -> None:
                calls[0] += 1
                raise ConnectionResetError() if calls[0] <= 100 else ValueError("runaway")

            runner = AsyncRetrying(GET, timeout=2, policy=policy, clock=t.clock, sleep=t.asleep)
            with pytest.raises((RetryTimeoutError, ValueError)):
                await runner(afn)
            assert runner.statistics is not None
            return calls[0], runner.statistics.waited_ms, runner.statistics.end

        assert asyncio.run(main()) == by_hand
    real = FakeTime()
    assert attempts(clock=real.clock, sleep=real.sleep) == by_hand
    assert real.sleeps == [0.1, 0.2, 0.4, 0.8]


def test_testing_switch_runs_the_httpx_transports_to_their_deadline_as_a_real_run() -> None:
    # Always 503, a fixed 300 ms backoff, a 2 s deadline, no cap: attempts at 0, 300, ..., 1800 ms
    # (7); the next would start at 2100, past the deadline: deadline_before_retry after 1800 ms of
    # waits (worked by hand). Before, a skipped wait left the clock where it was: no end.
    from retrypolicy.httpx import AsyncRetryTransport, RetryTransport

    def options(t: FakeTime, hits: list[int]) -> dict[str, Any]:
        def server(request: httpx.Request) -> httpx.Response:
            hits[0] += 1
            if hits[0] > 100:
                raise RuntimeError("runaway")
            return httpx.Response(503)

        return {"transport": httpx.MockTransport(server), "clock": t.clock, "deadline": 2, "max_attempts": None,
                "backoff": {"kind": "fixed", "delay_ms": 300}}

    by_hand = (7, "deadline_before_retry", 1800)
    with instant_sleeps():
        t, hits = FakeTime(), [0]
        with httpx.Client(transport=RetryTransport(sleep=t.sleep, **options(t, hits))) as client:
            r = client.get("http://127.0.0.1/x")
        assert (hits[0], r.extensions["retrypolicy"]["rule"], r.extensions["retrypolicy_stats"].waited_ms) == by_hand
        assert t.sleeps == []

        async def main() -> tuple[int, str, int]:
            t, hits = FakeTime(), [0]
            async with httpx.AsyncClient(transport=AsyncRetryTransport(sleep=t.asleep, **options(t, hits))) as client:
                r = await client.get("http://127.0.0.1/x")
            return hits[0], r.extensions["retrypolicy"]["rule"], r.extensions["retrypolicy_stats"].waited_ms

        assert asyncio.run(main()) == by_hand
    t, hits = FakeTime(), [0]
    with httpx.Client(transport=RetryTransport(sleep=t.sleep, **options(t, hits))) as client:
        r = client.get("http://127.0.0.1/x")
    assert (hits[0], r.extensions["retrypolicy"]["rule"], r.extensions["retrypolicy_stats"].waited_ms) == by_hand
    assert t.sleeps == [0.3] * 6


def test_async_sleeps_through_the_injected_sleep_and_lets_cancellation_through() -> None:
    t = FakeTime()

    async def main() -> None:
        fn, calls = failing(ConnectionResetError(), ConnectionResetError())

        async def afn() -> Any:
            return fn()

        assert (await AsyncRetrying(GET, timeout=1, clock=t.clock, sleep=t.asleep)(afn))[0] == "done"
        assert t.sleeps == [0.001, 0.002]

        classified: list[BaseException] = []

        def spy(exc: Exception) -> Any:
            classified.append(exc)
            return network_errors(exc)

        started = asyncio.Event()

        async def hangs() -> None:
            started.set()
            await asyncio.sleep(60)

        task = asyncio.create_task(AsyncRetrying(GET, timeout=120, classify=spy)(hangs))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert classified == []

        async def fails() -> None:
            raise ConnectionResetError()

        slow = AsyncRetrying(GET, timeout=120, policy=rp.policy_from_dict({"backoff": {"kind": "fixed", "delay_ms": 60_000}}))
        task = asyncio.create_task(slow(fails))
        await asyncio.sleep(0.05)  # now in the 60 s asyncio.sleep
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_ready_classifiers() -> None:
    request = httpx.Request("GET", "http://127.0.0.1/")

    def status_error(code: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
        response = httpx.Response(code, request=request, headers=headers)
        return httpx.HTTPStatusError("x", request=request, response=response)

    assert network_errors(ConnectionRefusedError()) == {"kind": "network", "sent": False}
    assert network_errors(BrokenPipeError()) == {"kind": "network"}  # maybe sent
    assert network_errors(TimeoutError()) == {"kind": "timeout"}
    assert network_errors(RetryTimeoutError.__new__(RetryTimeoutError)) is None  # an inner run's
    assert network_errors(ValueError()) is None
    assert http_status_errors(status_error(503)) == {"kind": "http", "status": 503}
    assert http_status_errors(status_error(429, {"Retry-After": "1"})) == {"kind": "http", "status": 429, "retry_after": "1"}
    assert http_status_errors(status_error(101)) is None  # not a final status
    urllib_error = urllib.error.HTTPError("u", 502, "bad gateway", {"Retry-After": "2"}, None)  # type: ignore[arg-type]
    assert http_status_errors(urllib_error) == {"kind": "http", "status": 502, "retry_after": "2"}

    class RequestsLike(Exception):
        """What requests raises: ``exc.response.status_code`` and ``.headers``."""

        def __init__(self) -> None:
            self.response = type("R", (), {"status_code": 503, "headers": {"retry-after": "3"}})()

    assert http_status_errors(RequestsLike()) == {"kind": "http", "status": 503, "retry_after": "3"}
    both = first_of(network_errors, http_status_errors)
    assert both(status_error(500)) == {"kind": "http", "status": 500} and both(OSError()) is None


def test_http_status_errors_are_retried_by_default_with_their_retry_after() -> None:
    t = FakeTime()
    request = httpx.Request("GET", "http://127.0.0.1/")

    def status_error(code: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
        return httpx.HTTPStatusError("x", request=request, response=httpx.Response(code, request=request, headers=headers))

    fn, calls = failing(status_error(503), status_error(429, {"Retry-After": "1"}))
    assert Retrying(GET, timeout=5, clock=t.clock, sleep=t.sleep)(fn)[0] == "done"
    assert calls[0] == 3 and t.sleeps == [0.001, 1.0]  # best effort's 1 ms, then the server's 1 s
    not_found = status_error(404)
    fn, calls = failing(not_found)
    with pytest.raises(httpx.HTTPStatusError) as info:
        Retrying(GET, timeout=5, clock=t.clock, sleep=t.sleep)(fn)
    assert info.value is not_found and calls[0] == 1 and decision_of(not_found) is None


def test_max_attempts_caps_the_run() -> None:
    t = FakeTime()
    errors = [ConnectionResetError(str(i)) for i in range(10)]
    fn, calls = failing(*errors)
    with pytest.raises(ConnectionResetError) as info:
        Retrying(GET, timeout=60, max_attempts=3, clock=t.clock, sleep=t.sleep)(fn)
    assert calls[0] == 3 and info.value is errors[2] and len(t.sleeps) == 2


def test_an_inner_runs_timeout_is_not_retried_by_an_outer_run() -> None:
    t = FakeTime()
    inner_calls = [0]

    def inner() -> None:
        inner_calls[0] += 1
        t.now += 2.0
        raise TimeoutError("no reply")

    inner_run = Retrying(GET, timeout=1.0, clock=t.clock, sleep=t.sleep)
    outer = Retrying(GET, timeout=60.0, clock=t.clock, sleep=t.sleep)
    with pytest.raises(RetryTimeoutError):
        outer(inner_run, inner)
    assert inner_calls[0] == 1 and t.sleeps == []


def test_async_attempt_timeout_cuts_a_hanging_attempt() -> None:
    async def main() -> list[int]:
        calls = [0]

        async def hangs_once() -> str:
            calls[0] += 1
            if calls[0] == 1:
                await asyncio.sleep(60)
            return "ok"

        runner = AsyncRetrying(GET, timeout=60, attempt_timeout=0.01)
        assert await runner(hangs_once) == "ok"
        return calls

    assert asyncio.run(main()) == [2]


def test_bad_inputs_raise_typed_errors_at_construction() -> None:
    with pytest.raises(rp.InvalidDurationError):
        Retrying(GET, timeout=-1)
    with pytest.raises(rp.InvalidTypeError):
        Retrying(GET, timeout="2s")  # type: ignore[arg-type]
    with pytest.raises(rp.InvalidTypeError):
        AsyncRetrying("get", timeout=1)  # type: ignore[arg-type]


def test_a_misspelled_option_is_a_type_error_naming_it_not_ignored() -> None:
    from retrypolicy.httpx import AsyncRetryTransport, RetryTransport

    options: dict[str, Any] = {"on_retyr": print}
    for make, where in [
        (lambda: Retrying(GET, timeout=1, **options), "Retrying"),
        (lambda: AsyncRetrying(GET, timeout=1, **options), "AsyncRetrying"),
        (lambda: retry(GET, timeout=1, **options), "retry"),
        (lambda: RetryTransport(**options), "RetryTransport"),
        (lambda: AsyncRetryTransport(**options), "AsyncRetryTransport"),
    ]:
        with pytest.raises(TypeError, match=rf"^{where}\(\) got an unexpected keyword argument 'on_retyr'$"):
            make()
    # Every option the runners document is taken.
    Retrying(GET, timeout=1, on_retry=print, on_breaker_wait=print, on_give_up=print, max_attempts=2, log_level=10)

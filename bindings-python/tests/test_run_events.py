"""What runs and breakers report (issue 27): a breaker's state changes (``on_state_change`` and the
``retrypolicy.breaker`` logger), a run's statistics (``Run.stats``, the runners' ``statistics``,
the give-up error's ``retry_stats``), and the runners' structured log records. Expected values are
worked out by hand from the breaker's and the run's rules."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import httpx
import pytest

import retrypolicy as rp
from conftest import MsClock
from retrypolicy import mongodb
from retrypolicy.httpx import RetryTransport
from retrypolicy.run import AsyncRetrying, CircuitOpenError, Retrying, RetryTimeoutError, retry, stats_of

KV_GET = rp.Operation.kv("get")
KV_UPSERT = rp.Operation.kv("upsert")
SMALL = {"volume_threshold": 1, "sleep_window_ms": 100}


def failing(*errors: Exception) -> Any:
    """A function raising ``errors`` in turn, then returning ``"done"``."""
    left = list(errors)

    def fn() -> str:
        if left:
            raise left.pop(0)
        return "done"

    return fn


# ---- breaker state changes ------------------------------------------------------------------------


def test_direct_calls_report_each_change_once_with_its_rule() -> None:
    seen: list[tuple[str, str, str]] = []
    b = rp.CircuitBreaker({**SMALL, "canary_timeout_ms": 50}, on_state_change=lambda *c: seen.append(c))
    b.record(0, "failure")  # volume 1, 100 % failures: trips
    assert b.permit(50).permitted is False  # within the window: no change
    assert b.permit(101).canary  # 101 ms after opening: the canary
    b.record(110, "success")
    b.record(111, "success")  # closed already: no change
    assert seen == [
        ("closed", "open", "breaker_tripped"),
        ("open", "half_open", "breaker_canary"),
        ("half_open", "closed", "canary_succeeded"),
    ]
    assert b.last_changes == []  # the last call changed nothing


def test_one_call_that_makes_two_changes_reports_both_in_order() -> None:
    """The canary sent at 101 times out at 151 (open again); at 252, 101 ms into that window, the
    same ``permit`` finds it failed and sends the next canary: two changes, two callbacks, two log
    records, in order."""
    seen: list[tuple[str, str, str]] = []
    b = rp.CircuitBreaker({**SMALL, "canary_timeout_ms": 50}, on_state_change=lambda *c: seen.append(c))
    b.record(0, "failure")
    assert b.permit(101).canary
    seen.clear()
    assert b.permit(252).canary
    assert seen == [("half_open", "open", "canary_timed_out"), ("open", "half_open", "breaker_canary")]
    assert [(c.from_state, c.to_state, c.rule) for c in b.last_changes] == seen


def test_a_change_a_callback_makes_during_a_call_that_made_two_is_reported_after_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On the first of ``permit(252)``'s two changes (the canary timed out) the callback records the
    new canary's failure at 253: that third change is reported after the call's second."""
    seen: list[tuple[str, str, str]] = []
    b: rp.CircuitBreaker

    def callback(old: str, new: str, rule: str) -> None:
        seen.append((old, new, rule))
        if rule == "canary_timed_out":
            b.record(253, "failure")

    b = rp.CircuitBreaker({**SMALL, "canary_timeout_ms": 50}, on_state_change=callback)
    b.record(0, "failure")
    assert b.permit(101).canary
    seen.clear()
    with caplog.at_level(logging.INFO, logger="retrypolicy.breaker"):
        assert b.permit(252).canary
    expected = [
        ("half_open", "open", "canary_timed_out"),
        ("open", "half_open", "breaker_canary"),
        ("half_open", "open", "canary_failed"),
    ]
    assert seen == expected
    assert [(r.breaker_from, r.breaker_to, r.breaker_rule) for r in caplog.records] == expected
    assert b.state(253) == "open"


def test_a_run_step_that_makes_two_changes_reports_both_in_order(caplog: pytest.LogCaptureFixture) -> None:
    """A breaker restored half-open (a canary sent at 0, never answered): the run's start at 200
    finds it timed out at 50 and, its 100 ms window over, sends this attempt as the next canary."""
    seen: list[tuple[str, str, str]] = []
    b = rp.CircuitBreaker.restore(
        {**SMALL, "canary_timeout_ms": 50},
        {"version": 1, "state": "half_open", "since_ms": 0, "window_start_ms": None, "total": 0, "failures": 0},
        on_state_change=lambda *c: seen.append(c),
    )
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 10_000}, breaker=b)
    with caplog.at_level(logging.INFO, logger="retrypolicy.breaker"):
        step = run.start(200)
    expected = [("half_open", "open", "canary_timed_out"), ("open", "half_open", "breaker_canary")]
    assert [(c.from_state, c.to_state, c.rule) for c in step.breaker_changes] == expected
    assert seen == expected
    records = [r for r in caplog.records if r.name == "retrypolicy.breaker"]
    assert [(r.breaker_from, r.breaker_to, r.breaker_rule) for r in records] == expected  # type: ignore[attr-defined]


def test_last_changes_are_typed_and_equal_by_value() -> None:
    b = rp.CircuitBreaker(SMALL)
    assert b.last_changes == [] and b.on_state_change is None
    b.record(0, "failure")
    [change] = b.last_changes
    assert (change.from_state, change.to_state, change.rule) == ("closed", "open", "breaker_tripped")
    assert change.to_json() == '{"from":"closed","to":"open","rule":"breaker_tripped"}'
    other = rp.CircuitBreaker(SMALL)
    other.record(5, "failure")
    assert other.last_changes == [change]


def test_a_run_reports_the_changes_its_steps_made_with_no_lock_held() -> None:
    """The callback reads the breaker itself: it runs after the lock is released (a held lock
    would deadlock here). The run trips the breaker (KV 0x86 at 10), waits for its window,
    sends the canary at 111, which succeeds at 120."""
    seen: list[tuple[str, str, str, str]] = []

    def on_change(old: str, new: str, rule: str) -> None:
        seen.append((old, new, rule, b.snapshot()["state"]))

    b = rp.CircuitBreaker(SMALL, on_state_change=on_change)
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 10_000}, breaker=b)
    steps = [run.start(0), run.attempt_ended({"kind": "kv", "status": 0x86}, 10), run.wait_ended(11), run.wait_ended(111)]
    run.succeeded(120)
    assert [[c.rule for c in s.breaker_changes] for s in steps] == [[], ["breaker_tripped"], [], ["breaker_canary"]]
    assert [s.signal for s in steps] == ["none", "retry", "breaker_wait", "none"]  # the breaker's wait is no retry
    assert seen == [  # the breaker's own state, read in the callback, is already the new one
        ("closed", "open", "breaker_tripped", "open"),
        ("open", "half_open", "breaker_canary", "half_open"),
        ("half_open", "closed", "canary_succeeded", "closed"),
    ]


def test_a_cancelled_canary_is_reported_released() -> None:
    seen: list[tuple[str, str, str]] = []
    b = rp.CircuitBreaker.restore(
        SMALL,
        {"version": 1, "state": "open", "since_ms": 0, "window_start_ms": 0, "total": 1, "failures": 1},
        on_state_change=lambda *c: seen.append(c),
    )
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 10_000}, breaker=b)
    run.start(200)
    step = run.cancel(210)
    assert [c.rule for c in step.breaker_changes] == ["canary_released"]
    assert seen == [("open", "half_open", "breaker_canary"), ("half_open", "open", "canary_released")]


def test_a_runner_reports_changes_through_the_callback_and_the_breaker_logger(caplog: pytest.LogCaptureFixture) -> None:
    t = MsClock()
    seen: list[tuple[str, str, str]] = []
    b = rp.CircuitBreaker(SMALL, on_state_change=lambda *c: seen.append(c))
    runner = Retrying(KV_GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=b)
    with caplog.at_level(logging.INFO, logger="retrypolicy.breaker"):
        assert runner(failing(ConnectionResetError())) == "done"
    expected = [("closed", "open", "breaker_tripped"), ("open", "half_open", "breaker_canary"), ("half_open", "closed", "canary_succeeded")]
    assert seen == expected
    records = [r for r in caplog.records if r.name == "retrypolicy.breaker"]
    assert [(r.levelno, r.breaker_from, r.breaker_to, r.breaker_rule) for r in records] == [(logging.INFO, *c) for c in expected]  # type: ignore[attr-defined]
    assert all(getattr(r, "breaker") is b for r in records)
    assert records[0].getMessage() == "circuit breaker closed -> open (breaker_tripped)"


def test_a_callback_that_raises_is_logged_and_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """The change stands, the call returns normally, the run goes on and succeeds; the error is
    logged at ERROR with its traceback on ``retrypolicy.breaker``."""

    def boom(old: str, new: str, rule: str) -> None:
        raise ValueError(f"callback failed on {rule}")

    t = MsClock()
    b = rp.CircuitBreaker(SMALL, on_state_change=boom)
    with caplog.at_level(logging.INFO, logger="retrypolicy.breaker"):
        b.record(0, "failure")
        assert b.state(0) == "open" and len(b.last_changes) == 1
        t.ms = 200
        runner = Retrying(KV_GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=b)
        assert runner(failing()) == "done"  # canary out and back: two more changes, two more errors
    assert b.state(t.ms) == "closed"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 3 and all(r.exc_info and isinstance(r.exc_info[1], ValueError) for r in errors)
    assert [r.breaker_rule for r in errors] == ["breaker_tripped", "breaker_canary", "canary_succeeded"]  # type: ignore[attr-defined]


def test_a_base_exception_in_the_callback_propagates_after_the_change() -> None:
    def interrupt(old: str, new: str, rule: str) -> None:
        raise KeyboardInterrupt

    b = rp.CircuitBreaker(SMALL, on_state_change=interrupt)
    with pytest.raises(KeyboardInterrupt):
        b.record(0, "failure")
    assert b.state(0) == "open"
    assert b.permit(0).permitted is False  # still usable: no lock left held


def test_a_callback_that_is_not_callable_is_a_typed_error() -> None:
    with pytest.raises(rp.InvalidTypeError, match="on_state_change"):
        rp.CircuitBreaker(SMALL, on_state_change="print")  # type: ignore[arg-type]
    with pytest.raises(rp.InvalidTypeError, match="on_state_change"):
        rp.CircuitBreaker.restore(SMALL, rp.CircuitBreaker(SMALL).snapshot(), on_state_change=3)  # type: ignore[arg-type]


def test_a_callback_referring_to_its_breaker_is_collected() -> None:
    import gc
    import weakref

    class Owner:
        def __init__(self) -> None:
            self.breaker = rp.CircuitBreaker(SMALL, on_state_change=self.changed)

        def changed(self, old: str, new: str, rule: str) -> None:
            pass

    owner = Owner()
    ref = weakref.ref(owner)
    del owner
    gc.collect()
    assert ref() is None


# ---- run statistics -------------------------------------------------------------------------------


def test_run_stats_count_what_the_run_did() -> None:
    """KV GET: a failure at 10 (retry after 1 ms, best effort), success at 12."""
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 10_000})
    assert run.stats.last_rule is None and run.stats.attempts == 0
    run.start(0)
    run.attempt_ended({"kind": "kv", "status": 0x86}, 10)
    run.wait_ended(11)
    run.succeeded(12)
    s = run.stats
    assert (s.attempts, s.retries, s.waited_ms, s.elapsed_ms, s.end, s.last_rule) == (2, 1, 1, 12, "succeeded", "attempt_succeeded")
    assert s.last_reason is rp.RetryReason.KV_TEMPORARY_FAILURE
    assert (s.budget_refusals, s.breaker_rejections, s.last_budget, s.last_breaker) == (0, 0, None, None)
    assert s == run.stats


def test_the_give_up_error_carries_the_statistics() -> None:
    t = MsClock()
    runner = Retrying(KV_UPSERT, timeout=5, clock=t.clock, sleep=t.sleep)  # not idempotent: no retry
    with pytest.raises(ConnectionResetError) as info:
        runner(failing(ConnectionResetError()))
    stats = stats_of(info.value)
    assert stats is not None and (stats.attempts, stats.retries, stats.end, stats.last_rule) == (1, 0, "gave_up", "best_effort_not_idempotent")
    assert runner.statistics == stats


def test_the_timeout_and_circuit_open_errors_carry_the_statistics() -> None:
    t = MsClock()

    def slow() -> None:
        t.ms += 600
        raise ConnectionResetError()

    with pytest.raises(RetryTimeoutError) as timed_out:
        Retrying(KV_GET, timeout=0.5, clock=t.clock, sleep=t.sleep)(slow)
    stats = timed_out.value.retry_stats
    assert stats is not None and (stats.attempts, stats.end) == (1, "timed_out") and stats_of(timed_out.value) == stats
    b = rp.CircuitBreaker({"volume_threshold": 1})  # opens for 5 s
    b.record(0, "failure")
    with pytest.raises(CircuitOpenError) as held:  # fail fast: no wait for the breaker
        Retrying(KV_GET, timeout=0.5, clock=lambda: 0.0, sleep=t.sleep, breaker=b, strategy=rp.FailFast())(failing())
    stats = stats_of(held.value)
    assert stats is not None and (stats.attempts, stats.breaker_rejections, stats.end) == (0, 1, "gave_up")


def test_a_final_failure_is_raised_untouched() -> None:
    error = ValueError("not retryable")
    heard: list[str] = []
    with pytest.raises(ValueError) as info:
        Retrying(
            KV_GET, timeout=1, sleep=lambda s: None, on_retry=lambda d, e: heard.append("retry"),
            on_breaker_wait=lambda step: heard.append("breaker_wait"), on_give_up=lambda d, e: heard.append("give_up"),
        )(failing(error))
    assert info.value is error and not hasattr(error, "retry_stats")
    assert heard == []  # a final failure is no give-up: no hook fires


def test_statistics_are_per_thread() -> None:
    t = MsClock()
    runner = Retrying(KV_GET, timeout=5, clock=t.clock, sleep=t.sleep)
    assert runner.statistics is None
    runner(failing(ConnectionResetError(), ConnectionResetError()))
    seen: list[Any] = []
    thread = threading.Thread(target=lambda: (seen.append(runner.statistics), runner(failing()), seen.append(runner.statistics)))
    thread.start()
    thread.join()
    assert seen[0] is None and seen[1] is not None and seen[1].attempts == 1
    assert runner.statistics is not None and runner.statistics.attempts == 3


def test_the_decorator_exposes_its_runner_and_async_statistics() -> None:
    t = MsClock()
    fn = failing(ConnectionResetError())

    @retry(KV_GET, timeout=5, clock=t.clock, sleep=t.asleep)
    async def call() -> str:
        return str(fn())

    async def main() -> Any:
        assert await call() == "done"
        return getattr(call, "runner").statistics

    stats = asyncio.run(main())
    assert stats is not None and (stats.attempts, stats.retries, stats.waited_ms) == (2, 1, 1)
    assert isinstance(getattr(call, "runner"), AsyncRetrying)


# ---- structured logging ---------------------------------------------------------------------------


def test_retries_log_at_debug_and_the_give_up_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """KV GET: two network failures retried (1 ms, 2 ms), then a budget-less give-up by
    ``max_attempts`` 3 on the third failure."""
    t = MsClock()
    runner = Retrying(KV_GET, timeout=5, clock=t.clock, sleep=t.sleep, max_attempts=3)
    fn = failing(ConnectionResetError(), ConnectionResetError(), ConnectionAbortedError())
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), pytest.raises(ConnectionAbortedError):
        runner(fn)
    records = [r for r in caplog.records if r.name == "retrypolicy"]
    fields = ("levelno", "retry_function", "retry_error_type", "retry_reason", "retry_rule", "retry_delay_ms", "retry_attempt", "retry_end")
    name = "test_run_events.failing.<locals>.fn"
    assert [tuple(getattr(r, f) for f in fields) for r in records] == [
        (logging.DEBUG, name, "ConnectionResetError", "SOCKET_CLOSED_WHILE_IN_FLIGHT", "best_effort_backoff", 1, 1, None),
        (logging.DEBUG, name, "ConnectionResetError", "SOCKET_CLOSED_WHILE_IN_FLIGHT", "best_effort_backoff", 2, 2, None),
        (logging.INFO, name, "ConnectionAbortedError", "SOCKET_CLOSED_WHILE_IN_FLIGHT", "max_attempts_reached", None, 3, "gave_up"),
    ]
    assert [getattr(r, "retry_attempts") for r in records] == [0, 1, 2]


def test_at_info_only_the_give_up_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    t = MsClock()
    with caplog.at_level(logging.INFO, logger="retrypolicy"), pytest.raises(ConnectionResetError):
        Retrying(KV_GET, timeout=5, clock=t.clock, sleep=t.sleep, max_attempts=2)(failing(ConnectionResetError(), ConnectionResetError()))
    records = [r for r in caplog.records if r.name == "retrypolicy"]
    assert [(r.levelno, getattr(r, "retry_end")) for r in records] == [(logging.INFO, "gave_up")]
    assert "gave up (gave_up, last error ConnectionResetError)" in records[0].getMessage()


def test_the_http_transport_logs_retries_and_the_give_up(caplog: pytest.LogCaptureFixture) -> None:
    """503 twice with max_attempts 2: one retry (100 ms), then the give-up at INFO."""
    t = MsClock()
    transport = RetryTransport(
        httpx.MockTransport(lambda request: httpx.Response(503)), clock=t.clock, sleep=t.sleep, random=lambda: 0.0, max_attempts=2
    )
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), httpx.Client(transport=transport) as client:
        response = client.get("http://example.test/a")
    assert response.status_code == 503
    records = [r for r in caplog.records if r.name == "retrypolicy"]
    fields = ("levelno", "retry_function", "retry_error_type", "retry_http_status", "retry_delay_ms", "retry_attempt", "retry_end")
    assert [tuple(getattr(r, f) for f in fields) for r in records] == [
        (logging.DEBUG, "GET http://example.test/a", None, 503, 100, 1, None),
        (logging.INFO, "GET http://example.test/a", None, 503, None, 2, "gave_up"),
    ]
    stats = rp.httpx.stats_of(response)
    assert stats is not None and (stats.attempts, stats.retries, stats.end) == (2, 1, "gave_up")


class LabelledError(Exception):
    """pymongo-shaped: an error with labels."""

    def __init__(self, labels: list[str]) -> None:
        super().__init__("transaction failed")
        self.error_labels = labels


class Session:
    """Just what run_transaction asks of a session."""

    def __init__(self) -> None:
        self.in_transaction = False

    def start_transaction(self) -> None:
        self.in_transaction = True

    def commit_transaction(self) -> None:
        self.in_transaction = False

    def abort_transaction(self) -> None:
        self.in_transaction = False


def test_run_transaction_logs_its_retry_at_debug_and_its_give_up_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """The callback fails with TransientTransactionError (the transaction is retried), then with an
    unlabelled error (raised as is: the give-up)."""
    errors = [LabelledError(["TransientTransactionError"]), LabelledError([])]

    def callback(session: Session) -> None:
        raise errors.pop(0)

    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), pytest.raises(LabelledError):
        mongodb.run_transaction(Session(), callback, sleep=lambda s: None, random=lambda: 0.0)
    records = [(r.levelno, r.retry_error_type, r.retry_end) for r in caplog.records if r.name == "retrypolicy"]  # type: ignore[attr-defined]
    assert records == [
        (logging.DEBUG, None, None),  # start_transaction after begin
        (logging.DEBUG, "test_run_events.LabelledError", None),  # retry_transaction
        (logging.INFO, "test_run_events.LabelledError", "gave_up"),  # raise
    ]
    assert {getattr(r, "retry_function") for r in caplog.records if r.name == "retrypolicy"} == {
        "test_run_events.test_run_transaction_logs_its_retry_at_debug_and_its_give_up_at_info.<locals>.callback"
    }

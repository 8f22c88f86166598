"""The runners with a retry budget and a circuit breaker (``budget=``, ``breaker=``), on a fake clock:
a budget stops a retry storm, a breaker opens and lets one canary through after its sleep window."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import retrypolicy as rp
from retrypolicy.run import AsyncRetrying, CircuitOpenError, Retrying, RetryTimeoutError, decision_of

from test_run import FakeTime

GET = rp.Operation.kv("get")
GRPC_A6 = {"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}
BREAKER = {"volume_threshold": 4, "error_threshold_percentage": 50, "sleep_window_ms": 1000, "canary_timeout_ms": 500}


class Server:
    """A call that fails ``failures`` times (``ConnectionResetError``, so it may have been sent and
    the core retries the idempotent get), then returns "ok"; counts the attempts that reached it."""

    def __init__(self, failures: int = 10**9) -> None:
        self.failures = failures
        self.attempts = 0

    def __call__(self) -> str:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise ConnectionResetError("down")
        return "ok"

    async def call_async(self) -> str:
        return self()


def storm(budget: rp.RetryBudget | None, requests: int) -> tuple[Server, list[BaseException]]:
    """``requests`` calls against a server that always fails, each through its own runner."""
    t, server, errors = FakeTime(), Server(), []
    for _ in range(requests):
        with pytest.raises(Exception) as info:
            Retrying(GET, timeout=2.5, clock=t.clock, sleep=t.sleep, random=lambda: 0.5, budget=budget)(server)
        errors.append(info.value)
    return server, errors


def test_a_token_bucket_stops_a_retry_storm() -> None:
    unbounded, _ = storm(None, 20)
    server, errors = storm(rp.RetryBudget(GRPC_A6), 20)
    # 10 tokens, one per failure, no retry at or below 5: the first request sends 5 attempts (9,
    # 8, 7, 6 tokens left after the first four), every later one only its first.
    assert server.attempts == 5 + 19
    assert unbounded.attempts > 10 * server.attempts
    decisions = [decision_of(e) for e in errors]
    assert all(d is not None and d.cause == "budget_exhausted" for d in decisions)
    assert {d.rule for d in decisions if d is not None} == {"token_bucket_at_or_below_half"}
    assert all(isinstance(e, ConnectionResetError) for e in errors)  # a give-up re-raises the last error


def test_a_budget_refusal_goes_to_the_give_up_hook_and_the_log(caplog: pytest.LogCaptureFixture) -> None:
    budget = rp.RetryBudget.restore(GRPC_A6, {"kind": "token_bucket", "balance": 6000})
    given_up: list[rp.Decision] = []
    runner = Retrying(GET, timeout=2.5, budget=budget, on_give_up=lambda d, e: given_up.append(d), sleep=lambda s: None)
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"), pytest.raises(ConnectionResetError):
        runner(Server())
    assert [d.cause for d in given_up] == ["budget_exhausted"]
    assert given_up[0].budget is not None and given_up[0].budget.balance == 5000
    assert "budget exhausted" in caplog.text


def test_the_budget_hears_of_requests_and_refunds_a_retry_that_succeeded() -> None:
    budget = rp.RetryBudget({"kind": "retry_quota"})
    t = FakeTime()
    assert Retrying(GET, timeout=2.5, clock=t.clock, sleep=t.sleep, budget=budget)(Server(failures=1)) == "ok"
    assert budget.snapshot()["balance"] == 500  # 5 taken for the retry, returned when it succeeded


def test_a_breaker_opens_after_its_volume_and_lets_one_canary_through_after_the_sleep_window() -> None:
    t, server = FakeTime(), Server(failures=4)
    breaker = rp.CircuitBreaker(BREAKER)
    reasons: list[rp.RetryReason] = []
    waits: list[rp.RunStep] = []
    runner = Retrying(
        GET, timeout=2.5, clock=t.clock, sleep=t.sleep, random=lambda: 0.5, breaker=breaker,
        on_retry=lambda d, e: reasons.append(d.reason), on_breaker_wait=waits.append,
    )
    assert runner(server) == "ok"
    # Four failures trip it (4 outcomes, 100% failed); refused attempts wait without reaching the
    # server until the sleep window has passed; the fifth attempt is the canary, and it succeeds.
    # on_retry hears of the four failures' retries; the one wait for the breaker's window is the
    # machine's own (it never spins), after which the canary goes out.
    assert server.attempts == 5
    assert reasons == [rp.RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT] * 4
    stats = runner.statistics
    assert stats is not None and stats.retries == len(reasons)  # on_retry fires on the core's retry signal alone
    # The wait for the breaker's window goes to on_breaker_wait (the core's breaker_wait signal).
    assert [(w.signal, w.rule, w.reason, w.delay_ms) for w in waits] == [
        ("breaker_wait", "breaker_wait", rp.RetryReason.CIRCUIT_BREAKER_OPEN, round(t.sleeps[4] * 1000))
    ]
    assert t.sleeps[:4] == [0.001, 0.002, 0.004, 0.008] and len(t.sleeps) == 5
    assert t.sleeps[4] + 0.008 >= 1.0  # opened at the fourth failure, the canary goes out after 1 s
    assert breaker.state(int(t.now * 1000)) == "closed"


def test_an_open_breaker_keeps_every_attempt_from_the_server_until_time_runs_out() -> None:
    t, server = FakeTime(), Server()
    breaker = rp.CircuitBreaker.restore(BREAKER, {"state": "open", "since_ms": 100_000, "total": 4, "failures": 4, "window_start_ms": 100_000})
    given_up: list[tuple[rp.Decision, Exception]] = []
    with pytest.raises(RetryTimeoutError) as info:
        Retrying(GET, timeout=0.5, clock=t.clock, sleep=t.sleep, breaker=breaker, on_give_up=lambda d, e: given_up.append((d, e)))(server)
    # A give-up with no attempt sent: the hook gets the error the run raises.
    assert given_up == [(info.value.retry_decision, info.value)]
    # The window (1 s) outlasts the run (0.5 s): it ends at once, timed out, never spinning.
    assert server.attempts == 0 and t.sleeps == []
    assert info.value.__cause__ is None and info.value.reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN
    assert info.value.step.rule == "breaker_open_at_deadline" and info.value.step.breaker.rule == "breaker_open"
    assert info.value.retry_decision.reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN


def test_a_fail_fast_strategy_gives_up_on_an_open_breaker_with_circuit_open_error() -> None:
    t, server = FakeTime(), Server()
    breaker = rp.CircuitBreaker.restore(BREAKER, {"state": "open", "since_ms": 100_000, "total": 4, "failures": 4, "window_start_ms": 100_000})
    given_up: list[Exception] = []
    with pytest.raises(CircuitOpenError) as info:
        Retrying(
            GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=breaker, strategy=rp.FailFast(),
            on_give_up=lambda d, e: given_up.append(e),
        )(server)
    assert given_up == [info.value]
    assert server.attempts == 0 and t.sleeps == [] and info.value.reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN


OPEN = {"state": "open", "since_ms": 100_000, "total": 4, "failures": 4, "window_start_ms": 100_000}


class DeclinesAnOpenBreaker:
    """A host strategy: no retry while the circuit is open, RFC 0049's best effort otherwise. It
    records each reason it is asked about with the shared breaker's state, read from inside the
    strategy (no lock is held while Python runs)."""

    def __init__(self, breaker: rp.CircuitBreaker) -> None:
        self.breaker = breaker
        self.asked: list[tuple[rp.RetryReason, str]] = []

    def retry_after(self, request: rp.Request, reason: rp.RetryReason) -> Any:
        self.asked.append((reason, self.breaker.snapshot()["state"]))
        return None if reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN else rp.BestEffort().retry_after(request, reason)


def test_a_host_strategy_declining_an_open_breaker_gives_up_instead_of_waiting() -> None:
    t, server = FakeTime(), Server()
    waited = rp.CircuitBreaker.restore(BREAKER, OPEN)
    with pytest.raises(RetryTimeoutError):
        Retrying(GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=waited)(server)
    assert t.sleeps[0] > 1.0  # without the host strategy the run waits for the breaker's window
    t, server = FakeTime(), Server()
    breaker = rp.CircuitBreaker.restore(BREAKER, OPEN)
    strategy = DeclinesAnOpenBreaker(breaker)
    with pytest.raises(CircuitOpenError) as info:
        Retrying(GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=breaker, strategy=strategy)(server)
    assert server.attempts == 0 and t.sleeps == [] and strategy.asked == [(rp.RetryReason.CIRCUIT_BREAKER_OPEN, "open")]
    assert (info.value.step.end, info.value.step.rule) == ("gave_up", "custom_strategy")
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 5000},
                 breaker=breaker, strategy=strategy)
    step = run.start(100_000)
    assert (step.action, step.end, step.reason, run.phase) == ("done", "gave_up", rp.RetryReason.CIRCUIT_BREAKER_OPEN, "done")


def test_a_host_strategy_declining_a_breaker_that_opened_during_the_run_gives_up_after_the_wait() -> None:
    t, server = FakeTime(), Server()
    breaker = rp.CircuitBreaker({**BREAKER, "volume_threshold": 1})  # the first failure opens it
    strategy = DeclinesAnOpenBreaker(breaker)
    with pytest.raises(ConnectionResetError) as info:
        Retrying(GET, timeout=5, clock=t.clock, sleep=t.sleep, breaker=breaker, strategy=strategy)(server)
    assert server.attempts == 1 and len(t.sleeps) == 1  # the backoff after the failure; no breaker wait
    assert strategy.asked == [
        (rp.RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT, "closed"),
        (rp.RetryReason.CIRCUIT_BREAKER_OPEN, "open"),
    ]
    decision = decision_of(info.value)
    assert decision is not None and decision.reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN and decision.rule == "custom_strategy"


def test_the_async_runner_asks_the_host_strategy_on_an_open_breaker_too() -> None:
    t, server = FakeTime(), Server()
    breaker = rp.CircuitBreaker.restore(BREAKER, OPEN)
    strategy = DeclinesAnOpenBreaker(breaker)
    runner = AsyncRetrying(GET, timeout=5, clock=t.clock, sleep=t.asleep, breaker=breaker, strategy=strategy)
    with pytest.raises(CircuitOpenError):
        asyncio.run(runner(server.call_async))
    assert server.attempts == 0 and t.sleeps == [] and strategy.asked == [(rp.RetryReason.CIRCUIT_BREAKER_OPEN, "open")]


def test_the_async_runner_takes_a_budget_and_a_breaker() -> None:
    t, server = FakeTime(), Server()
    budget, breaker = rp.RetryBudget(GRPC_A6), rp.CircuitBreaker({"volume_threshold": 100})
    runner = AsyncRetrying(GET, timeout=2.5, clock=t.clock, sleep=t.asleep, budget=budget, breaker=breaker)
    with pytest.raises(ConnectionResetError) as info:
        asyncio.run(runner(server.call_async))
    assert server.attempts == 5
    assert decision_of(info.value) is not None
    assert breaker.snapshot()["failures"] == 5


def test_retry_decorator_passes_them_on() -> None:
    budget = rp.RetryBudget.restore(GRPC_A6, {"kind": "token_bucket", "balance": 5000})
    server = Server()

    @rp.run.retry(GET, timeout=2.5, budget=budget, sleep=lambda s: None)
    def call() -> Any:
        return server()

    with pytest.raises(ConnectionResetError):
        call()
    assert server.attempts == 1


def test_attempts_the_breaker_holds_back_cost_the_budget_nothing() -> None:
    t, server = FakeTime(), Server()
    budget = rp.RetryBudget({"kind": "retry_quota"})
    breaker = rp.CircuitBreaker.restore(BREAKER, {"state": "open", "since_ms": 100_000, "total": 4, "failures": 4, "window_start_ms": 100_000})
    with pytest.raises(RetryTimeoutError):
        Retrying(GET, timeout=0.5, clock=t.clock, sleep=t.sleep, budget=budget, breaker=breaker)(server)
    assert server.attempts == 0
    assert budget.snapshot()["balance"] == 500


def test_the_httpx_transport_holds_requests_back_while_the_breaker_is_open() -> None:
    import httpx

    from retrypolicy.httpx import CircuitOpenError as HttpCircuitOpenError, RetryTransport

    t, status, hits = FakeTime(), [503], [0]

    def server(request: httpx.Request) -> httpx.Response:
        hits[0] += 1
        return httpx.Response(status[0])

    breaker = rp.CircuitBreaker({"volume_threshold": 2, "sleep_window_ms": 1000})
    heard: list[tuple[str, Any]] = []
    hooks: Any = {
        "on_retry": lambda step, r: heard.append(("retry", step["delay_ms"])),
        "on_breaker_wait": lambda step: heard.append((step.signal, step.delay_ms)),
        "on_give_up": lambda step, r: heard.append(("give_up", None if step is None else step["rule"])),
    }
    transport = RetryTransport(httpx.MockTransport(server), clock=t.clock, sleep=t.sleep, max_attempts=4, breaker=breaker, **hooks)
    with httpx.Client(transport=transport) as client:
        response = client.get("http://127.0.0.1/x")
        # Two 503s trip it; attempts 3 and 4 each wait for the breaker's window, go out as its
        # canary, get a 503 and open it again; the fourth 503 is returned.
        assert response.status_code == 503 and hits[0] == 4
        assert response.extensions["retrypolicy"]["rule"] == "max_attempts_reached"
        assert t.sleeps == [0.1, 0.2, 0.801, 0.4, 0.601]  # backoff, then the rest of the 1 s window
        # Each hook on its signal: the breaker's waits are no retries.
        assert heard == [
            ("retry", 100), ("retry", 200), ("breaker_wait", 801), ("retry", 400), ("breaker_wait", 601),
            ("give_up", "max_attempts_reached"),
        ]
        t.now += 2.0
        status[0] = 200
        assert client.get("http://127.0.0.1/x").status_code == 200  # the canary
        assert hits[0] == 5 and breaker.state(int(t.now * 1000)) == "closed"
    # A breaker whose window outlasts the deadline: nothing is sent, CircuitOpenError is raised.
    heard.clear()
    held = RetryTransport(httpx.MockTransport(server), clock=t.clock, sleep=t.sleep, deadline=0.5, breaker=breaker, **hooks)
    breaker.record(int(t.now * 1000), "failure")
    breaker.record(int(t.now * 1000), "failure")
    with httpx.Client(transport=held) as client, pytest.raises(HttpCircuitOpenError) as info:
        client.get("http://127.0.0.1/x")
    assert hits[0] == 5 and isinstance(info.value, httpx.TransportError) and isinstance(info.value, CircuitOpenError)
    assert heard == [("give_up", None)]  # the breaker ended the run: no HTTP step


def test_the_httpx_transport_raises_a_timeout_when_the_breaker_ends_the_run_after_a_wait() -> None:
    import httpx

    from retrypolicy.httpx import RetryTimeoutError as HttpRetryTimeoutError, RetryTransport, stats_of, step_of

    t = FakeTime()
    breaker = rp.CircuitBreaker({"volume_threshold": 1, "sleep_window_ms": 60_000})
    heard: list[tuple[Any, int, bool]] = []
    transport = RetryTransport(
        httpx.MockTransport(lambda request: httpx.Response(503, stream=httpx.ByteStream(b"busy"))),
        clock=t.clock, sleep=t.sleep, random=lambda: 0.5, deadline=5.0, breaker=breaker,
        on_give_up=lambda step, r: heard.append((step, getattr(r, "status_code", 0), getattr(r, "is_closed", False))),
    )
    with httpx.Client(transport=transport) as client, pytest.raises(HttpRetryTimeoutError) as info:
        client.get("http://127.0.0.1/x")
    # The 503 trips the breaker; after the retry's wait its 60 s window outlasts the deadline, so
    # the run ends there. The 503 was closed before the wait (its connection back in the pool), so
    # the timeout is raised, naming it (it was returned closed: reading it raised httpx.StreamClosed).
    error = info.value
    assert isinstance(error, httpx.TimeoutException) and isinstance(error, RetryTimeoutError)
    stats = stats_of(error)
    assert stats is not None and stats.end == "timed_out" and stats.attempts == 1
    assert error.response.status_code == 503 and error.response.is_closed
    retry_step = step_of(error)
    assert error.step.rule == "breaker_open_at_deadline" and retry_step is not None and retry_step["action"] == "retry"
    assert heard == [(None, 503, True)]  # no HTTP decision ended the run; the hook gets the last response


def test_the_give_up_hook_hears_a_deadline_that_passed_during_a_wait() -> None:
    t = FakeTime()
    given_up: list[tuple[rp.Decision | None, str]] = []

    def overshoot(seconds: float) -> None:
        t.now += seconds + 5.0  # the process stalled: the wait ends past the 2 s deadline

    with pytest.raises(RetryTimeoutError) as info:
        Retrying(
            GET, timeout=2, clock=t.clock, sleep=overshoot, random=lambda: 0.5,
            on_give_up=lambda d, e: given_up.append((d, type(e).__name__)),
        )(Server())
    # The core ends the run at wait_ended (deadline_passed, signal give_up) with no decision.
    assert info.value.step.rule == "deadline_passed" and info.value.step.signal == "give_up"
    assert given_up == [(None, "ConnectionResetError")]  # the last failure, as for every give-up after an attempt


def test_the_httpx_transport_calls_no_give_up_hook_for_a_final_response() -> None:
    import httpx

    from retrypolicy.httpx import RetryTransport

    heard: list[str] = []
    transport = RetryTransport(
        httpx.MockTransport(lambda request: httpx.Response(404)), sleep=lambda s: None,
        on_retry=lambda step, r: heard.append("retry"), on_breaker_wait=lambda step: heard.append("breaker_wait"),
        on_give_up=lambda step, r: heard.append("give_up"),
    )
    with httpx.Client(transport=transport) as client:
        response = client.get("http://127.0.0.1/x")
    # A 404 is the server's final answer (the core's end "final", signal none): nothing gave up.
    assert response.status_code == 404 and response.extensions["retrypolicy"]["rule"] != "max_attempts_reached"
    assert heard == []


def test_the_httpx_transports_tell_the_budget_and_refund_a_retry_that_succeeded() -> None:
    import httpx

    from retrypolicy.httpx import AsyncRetryTransport, CircuitOpenError as HttpCircuitOpenError, RetryTransport

    t, answers = FakeTime(), ["timeout", 200]

    def server(request: httpx.Request) -> httpx.Response:
        if answers.pop(0) == "timeout":
            raise httpx.ReadTimeout("stalled", request=request)
        return httpx.Response(200)

    quota = rp.RetryBudget({"kind": "retry_quota"})
    balances: list[int] = []
    transport = AsyncRetryTransport(
        httpx.MockTransport(server), clock=t.clock, sleep=t.asleep, budget=quota,
        on_retry=lambda step, result: balances.append(quota.snapshot()["balance"]),
    )

    async def get() -> int:
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get("http://127.0.0.1/x")).status_code

    assert asyncio.run(get()) == 200
    # The AWS quota: a retry of a timeout costs 10 (500 -> 490), its success returns them.
    assert balances == [490] and quota.snapshot()["balance"] == 500
    # Attempts an open breaker holds back are not sent, and cost the budget nothing.
    breaker = rp.CircuitBreaker.restore(BREAKER, {"state": "open", "since_ms": 100_000, "total": 4, "failures": 4, "window_start_ms": 100_000})
    held = RetryTransport(httpx.MockTransport(server), clock=t.clock, sleep=t.sleep, deadline=0.5, budget=quota, breaker=breaker)
    with httpx.Client(transport=held) as client, pytest.raises(HttpCircuitOpenError):
        client.get("http://127.0.0.1/x")
    assert quota.snapshot()["balance"] == 500  # (a sent attempt would have found no answer left)

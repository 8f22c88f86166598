"""httpx transports that retry by the core's HTTP rules (``pip install 'retrypolicy[httpx]'``).

``RetryTransport`` (sync) and ``AsyncRetryTransport`` wrap another transport and run each request
through the core's run machine (``retrypolicy.Run``, rules ``{"http": {"method": ..., "idempotent":
...}}``): it alone decides the status class (5xx, 408, 429 transient; 2xx-4xx final),
``Retry-After`` in seconds or as an HTTP date, the backoff, the attempt limit, the deadline (no
attempt starts at or after it; a wait that would reach it stops the run), RFC 9110's method rule,
the shared ``budget`` and ``breaker`` (a refused attempt waits for the breaker's window). The
transport only sends, sleeps, logs, calls the hooks, and says what each attempt produced: a
response, a connection that failed before the request left (``ConnectError``, ``ConnectTimeout``,
``PoolTimeout``: not sent), a ``TimeoutException`` (the attempt timed out), or any other
``TransportError`` (may have been sent). Each attempt ends within the step's timeout (the time
left, or the attempt timeout), in total, not per read: the async transport cancels the attempt at
it; the sync one bounds every socket operation of an ``httpx.HTTPTransport`` (the default) by what
is left of it (a server that sends its headers a byte at a time is cut at the deadline, and the
connection closed), and cuts any other transport's own timeouts to it. A response whose status is
outside 200-599 (600, 999) is the server's answer: it ends the run as a final response, returned.

When the run stops, the last response is returned (``response.extensions["retrypolicy"]`` holds
the HTTP loop's last step, ``["retrypolicy_stats"]`` the run's ``RunStats``) or the last transport
error is raised (its ``retry_step`` and ``retry_stats`` attributes, and a note on Python 3.11+);
``CircuitOpenError`` when the breaker kept every attempt back, ``RetryTimeoutError`` (an
``httpx.TimeoutException``) when the run ended at its deadline after the wait that followed a
response it had discarded (closed before the wait, so its connection went back to the pool).
``step_of`` and ``stats_of`` read them back. The request body is read into memory before the first attempt so that it can be sent
again; every discarded response is closed.

Hooks fire on the core's ``step.signal``: ``on_retry(step, result)`` on ``retry``,
``on_breaker_wait(run_step)`` on ``breaker_wait`` and ``on_give_up(step, result)`` on ``give_up``
(gave up or timed out; not on a final response).

Logging, on ``logger`` (``retrypolicy``): each retry, breaker wait and the end of a run that did not give up at
``log_level`` (DEBUG), a give-up or timeout at ``give_up_log_level`` (INFO), with the runners'
record attributes (``retry_function`` is ``"GET https://..."``, ``retry_error_type`` the transport
error's class or None for a response) and ``retry_http_status``. When ``retrypolicy.otel`` is
instrumented, each step records its OpenTelemetry signals (a retry's event with
``http.request.resend_count``).
"""

from __future__ import annotations

import asyncio
import logging
import random as _random
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict, Union, cast

import httpx

from . import _observe
from . import http as _http
from ._classify import FINAL, MAYBE_SENT, NOT_SENT, TIMEOUT, Outcome
from ._ending import CircuitOpenError as _CircuitOpenError
from ._ending import RetryTimeoutError as _RetryTimeoutError
from ._ending import abandon
from ._httpx_deadline import bound, send, send_async
from ._log import LOGGER, log_step, type_name
from ._lowlevel import CircuitBreaker, RetryBudget, Run, RunConfig, RunStats, RunStep
from .run import _Skipped, is_testing, _only_known

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "AsyncRetryTransport",
    "BreakerWaitHook",
    "CircuitOpenError",
    "RetryStepHook",
    "RetryTimeoutError",
    "RetryTransport",
    "StepHook",
    "TransportOptions",
    "stats_of",
    "step_of",
]

Result = Union[httpx.Response, httpx.TransportError]
"""What one attempt produced."""
StepHook = Callable[[Union[_http.Step, None], Result], None]
"""``on_give_up``: called with the core's HTTP step that ended the run (``http.Step``, a dict; None
when the run ended without an HTTP decision: the breaker's refusal, or the deadline passing during
a wait) and the last response or error (the ``CircuitOpenError`` when no attempt was sent; a
response the run discarded before a wait after which it ended is closed: its status and headers
remain)."""
RetryStepHook = Callable[[_http.RetryStep, Result], None]
"""``on_retry``: called with the step to retry (its ``delay_ms`` an int) and the attempt's result."""
BreakerWaitHook = Callable[[RunStep], None]
"""``on_breaker_wait``: called with the run's step that waits for the breaker's window."""


class CircuitOpenError(_CircuitOpenError, httpx.TransportError):
    """The run gave up before any attempt was sent (the breaker kept each back): an
    ``httpx.TransportError`` for httpx clients, and the runners' ``run.CircuitOpenError``."""


class RetryTimeoutError(_RetryTimeoutError, httpx.TimeoutException):
    """The run ended at its deadline after a wait that followed a response it discarded (closed):
    an ``httpx.TimeoutException`` for httpx clients, and the runners' ``run.RetryTimeoutError``;
    ``response`` is that last response (its status and headers; its body was not read),
    ``retry_step`` the HTTP step that decided the retry, ``retry_stats`` what the run did."""

    response: httpx.Response
    retry_step: _http.Step | None


class TransportOptions(TypedDict, total=False):
    """The transports' inputs (all keyword-only)."""

    deadline: float | timedelta
    max_attempts: int | None
    backoff: _http.Backoff | None
    jitter: _http.Jitter | None
    idempotent: bool | None
    clock: Callable[[], float]
    now: Callable[[], float]
    random: Callable[[], float]
    on_retry: RetryStepHook | None
    on_breaker_wait: BreakerWaitHook | None
    on_give_up: StepHook | None
    logger: logging.Logger
    log_level: int
    give_up_log_level: int
    breaker: CircuitBreaker | None
    budget: RetryBudget | None


def step_of(result: httpx.Response | BaseException) -> _http.Step | None:
    """The HTTP loop's last step of the run behind ``result``: a response a transport returned (its
    ``extensions["retrypolicy"]``) or the transport error it raised (its ``retry_step``); else None."""
    step = result.extensions.get("retrypolicy") if isinstance(result, httpx.Response) else getattr(result, "retry_step", None)
    return cast(_http.Step, step) if isinstance(step, dict) else None


def stats_of(result: httpx.Response | BaseException) -> RunStats | None:
    """What the run behind ``result`` did (``RunStats``): a response a transport returned (its
    ``extensions["retrypolicy_stats"]``) or the error it raised (its ``retry_stats``); else None."""
    stats = result.extensions.get("retrypolicy_stats") if isinstance(result, httpx.Response) else getattr(result, "retry_stats", None)
    return stats if isinstance(stats, RunStats) else None


def _outcome(result: Result) -> Outcome:
    """What one attempt produced, as the run machine's outcome."""
    if isinstance(result, httpx.Response):
        if not 200 <= result.status_code <= 599:
            # The machine refuses statuses outside 200..=599 (out_of_range, outcome.status); such a
            # response is still the server's answer: a final one, returned to the caller as it is.
            return FINAL
        outcome: Outcome = {"kind": "http", "status": result.status_code}
        if "retry-after" in result.headers:
            outcome["retry_after"] = result.headers["retry-after"]
        return outcome
    if isinstance(result, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return NOT_SENT
    return TIMEOUT if isinstance(result, httpx.TimeoutException) else MAYBE_SENT


class _Steps:
    """The run's configuration, and the host work around each step, shared by both transports."""

    def __init__(self, where: str, **options: Unpack[TransportOptions]) -> None:
        _only_known(dict(options), TransportOptions, where)
        deadline = options.get("deadline", 10.0)
        seconds = deadline.total_seconds() if isinstance(deadline, timedelta) else float(deadline)
        self.rules: dict[str, Any] = {}
        for key in ("backoff", "jitter", "idempotent"):
            if (value := options.get(key)) is not None:
                self.rules[key] = value
        self.config: dict[str, Any] = {"rules": {"http": self.rules}, "timeout_ms": round(seconds * 1000)}
        if (max_attempts := options.get("max_attempts", 4)) is not None:
            self.config["max_attempts"] = max_attempts
        self.configs = {"GET": RunConfig({**self.config, "rules": {"http": {**self.rules, "method": "GET"}}})}  # bad input raises here
        self.clock = options.get("clock", time.monotonic)
        self.now = options.get("now", time.time)
        self.random = options.get("random", _random.random)
        self.on_retry = options.get("on_retry")
        self.on_breaker_wait = options.get("on_breaker_wait")
        self.on_give_up = options.get("on_give_up")
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        self.give_up_log_level = options.get("give_up_log_level", logging.INFO)
        self.breaker = options.get("breaker")
        self.budget = options.get("budget")

    def begin(self, request: httpx.Request) -> tuple[Run, RunStep, Callable[[], float]]:
        """A run of ``request`` (its method, for RFC 9110's idempotent-method rule), started, and
        its clock: the transport's, or in testing mode (``set_testing``) the transport's plus the
        waits skipped (``_Skipped``), so the run decides as a real one would."""
        config = self.configs.get(request.method)
        if config is None:
            rules = {**self.rules, "method": request.method}
            config = self.configs[request.method] = RunConfig({**self.config, "rules": {"http": rules}})
        clock: Callable[[], float] = _Skipped(self.clock) if is_testing() else self.clock
        run, step = config.start(clock() * 1000, self.budget, self.breaker)
        return run, self._seen(step), clock

    def waited(self, run: Run, clock: Callable[[], float]) -> RunStep:
        """The wait is over at ``clock``'s time: the next step."""
        return self._seen(run.wait_ended(clock() * 1000))

    def _seen(self, step: RunStep) -> RunStep:
        """``step`` of a run, recorded for OpenTelemetry when instrumented
        (``retrypolicy.otel``; HTTP rules)."""
        if (sink := _observe.sink) is not None:
            sink.step(step, True, self.breaker)
        return step

    def before_wait(self, request: httpx.Request, step: RunStep) -> None:
        """Before the wait ``step`` of the run of ``request``: a wait for the breaker's window (the
        core's signal) logged and told to ``on_breaker_wait`` (a retry was, by ``after``)."""
        if step.signal == "breaker_wait":
            self._log(self.log_level, request, step, None)
            if self.on_breaker_wait is not None:
                self.on_breaker_wait(step)

    def _log(self, level: int, request: httpx.Request, step: RunStep, result: Result | None) -> None:
        """Logs ``step`` of the run of ``request`` after the attempt's ``result``."""
        if self.logger.isEnabledFor(level):
            error = None if result is None or isinstance(result, httpx.Response) else type_name(result)
            status = result.status_code if isinstance(result, httpx.Response) else None
            log_step(self.logger, level, step, f"{request.method} {request.url}", error, retry_http_status=status)

    def after(self, request: httpx.Request, run: Run, result: Result, clock: Callable[[], float]) -> RunStep:
        """Tells the run what the attempt produced at ``clock``'s time; records and logs a retry,
        calls the hooks; a response the run will not return is closed by the caller."""
        outcome = _outcome(result)
        now = self.now() + (clock.skipped if isinstance(clock, _Skipped) else 0.0)
        step = self._seen(run.attempt_ended(outcome, clock() * 1000, self.random(), int(now * 1000)))
        if step.signal == "retry":  # the core's: a wait for the breaker is no retry
            self._log(self.log_level, request, step, result)
            if self.on_retry is not None:
                self.on_retry(cast(_http.RetryStep, step.decision), result)
        return step

    def finish(
        self, request: httpx.Request, run: Run, step: RunStep, answered: RunStep | None, result: Result | None
    ) -> httpx.Response:
        """The run is over, its end logged: the last response (the HTTP loop's step answering it
        and the run's statistics in its ``extensions``), or the last error raised (the step and
        the statistics as its ``retry_step`` and ``retry_stats``)."""
        self._log(self.give_up_log_level if step.signal == "give_up" else self.log_level, request, step, result)
        stats = run.stats
        if answered is None or result is None:
            error = CircuitOpenError(step, stats)
            self._gave_up(step, error)
            raise error
        decision = cast(Union[_http.Step, None], answered.decision)
        if isinstance(result, httpx.Response) and step is not answered:
            # Discarded before the wait after which the run ended (the deadline passed, or the
            # breaker's window outlasts it): closed, so not returned; the timeout is raised.
            timeout = RetryTimeoutError(step, None, None, stats)
            timeout.response, timeout.retry_step = result, decision
            self._gave_up(step, result)
            raise timeout
        if isinstance(result, httpx.Response):
            result.extensions["retrypolicy"] = decision
            result.extensions["retrypolicy_stats"] = stats
            self._gave_up(step, result)
            return result
        setattr(result, "retry_step", decision)
        setattr(result, "retry_stats", stats)
        if hasattr(result, "add_note"):
            result.add_note(f"retrypolicy: stopped after {step.attempt} attempts ({step.rule})")
        self._gave_up(step, result)
        raise result

    def _gave_up(self, step: RunStep, result: Result) -> None:
        """Calls ``on_give_up`` when the run's last step gave up or timed out (the core's signal)."""
        if self.on_give_up is not None and step.signal == "give_up":
            self.on_give_up(cast(Union[_http.Step, None], step.decision), result)

    def abandon(self, run: Run, result: Result | None, exc: BaseException, clock: Callable[[], float]) -> None:
        """``exc`` leaves the run: it is cancelled; a transport error it was handling is its context."""
        abandon(run, clock, exc, result if isinstance(result, httpx.TransportError) else None)


class RetryTransport(httpx.BaseTransport):
    """A sync transport that retries by the core's HTTP rules: ``httpx.Client(transport=RetryTransport())``."""

    def __init__(
        self,
        transport: httpx.BaseTransport | None = None,
        *,
        sleep: Callable[[float], object] | None = None,
        **options: Unpack[TransportOptions],
    ) -> None:
        self.transport = transport if transport is not None else httpx.HTTPTransport()
        bound(self.transport)
        self.sleep = time.sleep if sleep is None else sleep
        self.steps = _Steps(type(self).__name__, **options)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        request.read()
        steps = self.steps
        run, step, clock = steps.begin(request)
        result: Result | None = None
        answered: RunStep | None = None
        try:
            while (action := step.action) != "done":
                if action == "wait":
                    steps.before_wait(request, step)
                    if isinstance(clock, _Skipped):
                        clock.skip(step.delay_ms)
                    else:
                        self.sleep((step.delay_ms or 0) / 1000)
                    step = steps.waited(run, clock)
                    continue
                try:
                    result = send(self.transport, request, step.timeout_ms)
                except httpx.TransportError as exc:
                    result = exc
                step = answered = steps.after(request, run, result, clock)
                if step.action == "wait" and isinstance(result, httpx.Response):
                    result.close()  # discarded: its connection goes back to the pool before the wait
            return steps.finish(request, run, step, answered, result)
        except BaseException as exc:
            steps.abandon(run, result, exc, clock)
            if isinstance(result, httpx.Response):
                result.close()
            raise

    def close(self) -> None:
        """Closes the wrapped transport."""
        self.transport.close()


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    """An asyncio transport that retries by the core's HTTP rules:
    ``httpx.AsyncClient(transport=AsyncRetryTransport())``; cancellation passes through (the run is cancelled)."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        sleep: Callable[[float], Awaitable[object]] | None = None,
        **options: Unpack[TransportOptions],
    ) -> None:
        self.transport = transport if transport is not None else httpx.AsyncHTTPTransport()
        self.sleep = asyncio.sleep if sleep is None else sleep
        self.steps = _Steps(type(self).__name__, **options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        await request.aread()
        steps = self.steps
        run, step, clock = steps.begin(request)
        result: Result | None = None
        answered: RunStep | None = None
        try:
            while (action := step.action) != "done":
                if action == "wait":
                    steps.before_wait(request, step)
                    if not isinstance(clock, _Skipped):
                        await self.sleep((step.delay_ms or 0) / 1000)
                    elif clock.skip(step.delay_ms):
                        await asyncio.sleep(0)  # now and then, the loop's other tasks run
                    step = steps.waited(run, clock)
                    continue
                try:
                    result = await send_async(self.transport, request, step.timeout_ms)
                except httpx.TransportError as exc:
                    result = exc
                step = answered = steps.after(request, run, result, clock)
                if step.action == "wait" and isinstance(result, httpx.Response):
                    await result.aclose()  # discarded: its connection goes back to the pool before the wait
            return steps.finish(request, run, step, answered, result)
        except BaseException as exc:
            steps.abandon(run, result, exc, clock)
            if isinstance(result, httpx.Response):
                await result.aclose()
            raise

    async def aclose(self) -> None:
        """Closes the wrapped transport."""
        await self.transport.aclose()

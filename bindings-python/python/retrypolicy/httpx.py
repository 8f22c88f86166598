"""httpx transports that retry by the core's HTTP rules (``pip install 'retrypolicy[httpx]'``).

``RetryTransport`` (sync) and ``AsyncRetryTransport`` wrap another transport. After each attempt
the core's HTTP loop (``retrypolicy.http.next_step``) alone decides: the status class (5xx, 408,
429 transient; 2xx-4xx final), ``Retry-After`` in seconds or as an HTTP date, the backoff, the
attempt limit, the deadline (no attempt starts at or after it; a wait that would reach it stops
the run), and RFC 9110's method rule: the loop is given the request's method and the caller's
``idempotent``, and each attempt says whether the request may have left. A connection that failed
before the request was sent (``ConnectError``, ``ConnectTimeout``, ``PoolTimeout``: ``sent:
false``) is retried for any method; once the request may have reached the server (a response, or
any other ``TransportError``: ``ReadError``, ``RemoteProtocolError``, ``ReadTimeout``, ...) the
core retries only an idempotent method (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or a request the
caller marks ``idempotent=True``, and otherwise stops (rule ``not_idempotent_after_send``). Each
attempt's timeouts are cut to the time left.

When the loop stops, the last response is returned (``response.extensions["retrypolicy"]`` holds
the final step) or the last transport error is raised (its ``retry_step`` attribute, and a note on
Python 3.11+). The request body is read into memory before the first attempt so that it can be
sent again.

A shared ``CircuitBreaker`` (``breaker=``) is asked before each attempt; an attempt it refuses is
not sent and fails with ``CircuitOpenError`` (an ``httpx.TransportError``), which the loop sees as
a request that never left. Each sent attempt's outcome is told to it: a failure when the core
classes it transient (5xx, 408, 429, a network error; a timeout for ``httpx.TimeoutException``).

A shared ``RetryBudget`` (``budget=``) is told each request, each sent attempt that failed (as
above) and each 2xx, as the runners tell it, and is asked (``try_retry``) before each retry the
core's step makes after a sent attempt (one the breaker held back costs it nothing). A refusal
gets the core's stop from the same step given the verdict (``http.next_step(...,
budget_verdict=)``): outcome transient, the budget's rule, its source as ``section``.
"""

from __future__ import annotations

import asyncio
import logging
import random as _random
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

import httpx

from . import http as _http
from . import run as _run
from ._log import LOGGER
from ._lowlevel import BudgetVerdict, CircuitBreaker, RetryBudget

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["AsyncRetryTransport", "CircuitOpenError", "RetryTransport", "TransportOptions"]

Result = Union[httpx.Response, httpx.TransportError]
"""What one attempt produced."""
StepHook = Callable[[_http.Step, Result], None]
"""Called with the core's step (``http.Step``, a dict) and the attempt's response or error."""
RetryStepHook = Callable[[_http.RetryStep, Result], None]
"""``on_retry``: called with the step to retry (its ``delay_ms`` an int) and the attempt's result."""



class CircuitOpenError(_run.CircuitOpenError, httpx.TransportError):
    """An attempt the circuit breaker refused (not sent): an ``httpx.TransportError`` for httpx
    clients, and the runners' ``run.CircuitOpenError``; ``verdict`` is the breaker's answer."""


# The httpx errors raised before the request left (no connection was made or taken from the
# pool, or the breaker held it back): only Python sees the exception types, so this is the one
# table here; the core rules on what "sent: false" allows.
_NOT_SENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, CircuitOpenError)


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
    on_give_up: StepHook | None
    logger: logging.Logger
    log_level: int
    breaker: CircuitBreaker | None
    budget: RetryBudget | None


class _Run:
    """One request's run: its loop (with the method), when it started, the attempts made so far,
    the previous delay in ms, and the cause of the last retry the budget granted."""

    __slots__ = ("loop", "start", "attempts", "previous_ms", "retry_cause")

    def __init__(self, loop: _http.Loop, start: float) -> None:
        self.loop = loop
        self.start = start
        self.attempts = 0
        self.previous_ms: int | None = None
        self.retry_cause: Literal["error", "timeout"] | None = None


class _Steps:
    """The loop's inputs, and the core's ruling after each attempt."""

    def __init__(self, **options: Unpack[TransportOptions]) -> None:
        deadline = options.get("deadline", 10.0)
        self.deadline = deadline.total_seconds() if isinstance(deadline, timedelta) else float(deadline)
        self.loop: _http.Loop = {"deadline_ms": round(self.deadline * 1000)}
        max_attempts, backoff = options.get("max_attempts", 4), options.get("backoff")
        jitter, idempotent = options.get("jitter"), options.get("idempotent")
        if max_attempts is not None:
            self.loop["max_attempts"] = max_attempts
        if backoff is not None:
            self.loop["backoff"] = backoff
        if jitter is not None:
            self.loop["jitter"] = jitter
        if idempotent is not None:
            self.loop["idempotent"] = idempotent
        self.clock = options.get("clock", time.monotonic)
        self.now = options.get("now", time.time)
        self.random = options.get("random", _random.random)
        self.on_retry = options.get("on_retry")
        self.on_give_up = options.get("on_give_up")
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        self.breaker = options.get("breaker")
        self.budget = options.get("budget")
        _http.next_step(self.loop, {"attempts": 1, "elapsed_ms": 0}, {"kind": "response", "status": 200})  # bad input raises here

    def begin(self, request: httpx.Request) -> _Run:
        """A run of ``request``: the loop with its method (for RFC 9110's idempotent-method rule);
        the budget is told of the request."""
        run = _Run({**self.loop, "method": request.method}, self.clock())
        if self.budget is not None:
            self.budget.record(self._now_ms(), "request")
        return run

    def _now_ms(self) -> int:
        """The transport's clock in whole milliseconds, for the budget and the breaker."""
        return int(self.clock() * 1000)

    def cap(self, request: httpx.Request, run: _Run) -> None:
        """Cuts the next attempt's timeouts (connect, read, write, pool) to the time left."""
        left = max(self.deadline - (self.clock() - run.start), 0.0)
        timeout = request.extensions.get("timeout") or dict.fromkeys(("connect", "read", "write", "pool"))
        request.extensions["timeout"] = {k: left if v is None else min(v, left) for k, v in timeout.items()}

    def permit(self) -> None:
        """Asks the breaker before an attempt; raises ``CircuitOpenError`` when it refuses."""
        if self.breaker is not None:
            verdict = self.breaker.permit(self._now_ms())
            if not verdict.permitted:
                raise CircuitOpenError(verdict)

    def tell(self, run: _Run, result: Result, step: _http.Step) -> None:
        """Tells the breaker and the budget how a sent attempt ended: failed when the core classed
        it transient; else a success to the breaker (the endpoint answered), and to the budget only
        a 2xx (as the runners keep an error they surface from it)."""
        if isinstance(result, CircuitOpenError):
            return
        outcome: Literal["success", "failure", "timeout"] = "success"
        if step["class"] == "transient":
            outcome = "timeout" if isinstance(result, httpx.TimeoutException) else "failure"
        if self.breaker is not None:
            self.breaker.record(self._now_ms(), outcome)
        if self.budget is not None and outcome != "success":
            self.budget.record(self._now_ms(), outcome)
        elif self.budget is not None and step["class"] == "success":
            self.budget.record(self._now_ms(), "success", after_retry=run.retry_cause)

    def refusal(self, run: _Run, result: Result, step: _http.Step) -> BudgetVerdict | None:
        """The budget's refusal of the retry ``step`` makes after a sent attempt, or None (no
        budget, no retry, nothing sent, or granted: the grant is recorded)."""
        if self.budget is None or step["action"] != "retry" or isinstance(result, CircuitOpenError):
            return None
        cause: Literal["error", "timeout"] = "timeout" if isinstance(result, httpx.TimeoutException) else "error"
        verdict = self.budget.try_retry(self._now_ms(), cause)
        if not verdict.permitted:
            return verdict
        run.retry_cause = cause
        return None

    def after(self, request: httpx.Request, result: Result, run: _Run) -> float | None:
        """The core's ruling on an attempt: the seconds to sleep before the next, or None to stop;
        ``run`` is updated here."""
        run.attempts += 1
        attempts = run.attempts
        attempt: _http.Attempt
        if isinstance(result, httpx.Response):
            attempt = {"kind": "response", "status": result.status_code}
            if "retry-after" in result.headers:
                attempt["retry_after"] = result.headers["retry-after"]
        elif isinstance(result, _NOT_SENT_ERRORS):
            attempt = {"kind": "network_error", "sent": False}
        else:
            attempt = {"kind": "network_error"}  # may have been sent
        state: _http.LoopState = {"attempts": attempts, "elapsed_ms": round((self.clock() - run.start) * 1000)}
        if run.previous_ms is not None:
            state["previous_delay_ms"] = run.previous_ms
        now_unix_ms, draw = int(self.now() * 1000), self.random()
        step = _http.next_step(run.loop, state, attempt, now_unix_ms=now_unix_ms, random=draw)
        self.tell(run, result, step)
        if (refused := self.refusal(run, result, step)) is not None:  # the core's stop for it
            step = _http.next_step(run.loop, state, attempt, now_unix_ms=now_unix_ms, random=draw, budget_verdict=refused)
        if self.logger.isEnabledFor(self.log_level):
            self.logger.log(
                self.log_level,
                "HTTP %s %s attempt %d: %s after %s (rule %s, delay %s ms)",
                request.method,
                request.url,
                attempts,
                step["action"],
                attempt,
                step["rule"],
                step.get("delay_ms"),
                extra={"retry_rule": step["rule"], "retry_delay_ms": step.get("delay_ms"), "retry_attempts": attempts},
            )
        if step["action"] == "retry":
            if self.on_retry is not None:
                self.on_retry(step, result)
            run.previous_ms = step["delay_ms"]
            return float(step["delay_ms"]) / 1000
        if isinstance(result, httpx.Response):
            result.extensions["retrypolicy"] = step
        else:
            setattr(result, "retry_step", step)
            if hasattr(result, "add_note"):
                result.add_note(f"retrypolicy: stopped after {attempts} attempts ({step['rule']})")
        if self.on_give_up is not None:
            self.on_give_up(step, result)
        return None


def _final(result: Result) -> httpx.Response:
    """The last response, or the last error raised."""
    if isinstance(result, httpx.Response):
        return result
    raise result


class RetryTransport(httpx.BaseTransport):
    """A sync transport that retries by the core's HTTP rules: ``httpx.Client(transport=RetryTransport())``."""

    def __init__(
        self,
        transport: httpx.BaseTransport | None = None,
        *,
        sleep: Callable[[float], object] = time.sleep,
        **options: Unpack[TransportOptions],
    ) -> None:
        self.transport = transport if transport is not None else httpx.HTTPTransport()
        self.sleep = sleep
        self.steps = _Steps(**options)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        request.read()
        run = self.steps.begin(request)
        while True:
            result: Result
            self.steps.cap(request, run)
            try:
                self.steps.permit()
                result = self.transport.handle_request(request)
            except httpx.TransportError as exc:
                result = exc
            if (delay := self.steps.after(request, result, run)) is None:
                return _final(result)
            if isinstance(result, httpx.Response):
                result.close()
            if not _run.is_testing():
                self.sleep(delay)

    def close(self) -> None:
        """Closes the wrapped transport."""
        self.transport.close()


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    """An asyncio transport that retries by the core's HTTP rules:
    ``httpx.AsyncClient(transport=AsyncRetryTransport())``; cancellation passes through untouched."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        **options: Unpack[TransportOptions],
    ) -> None:
        self.transport = transport if transport is not None else httpx.AsyncHTTPTransport()
        self.sleep = sleep
        self.steps = _Steps(**options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        await request.aread()
        run = self.steps.begin(request)
        while True:
            result: Result
            self.steps.cap(request, run)
            try:
                self.steps.permit()
                result = await self.transport.handle_async_request(request)
            except httpx.TransportError as exc:
                result = exc
            if (delay := self.steps.after(request, result, run)) is None:
                return _final(result)
            if isinstance(result, httpx.Response):
                await result.aclose()
            if not _run.is_testing():
                await self.sleep(delay)

    async def aclose(self) -> None:
        """Closes the wrapped transport."""
        await self.transport.aclose()

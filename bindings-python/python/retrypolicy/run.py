"""Retry runners: wrap a call, and the core decides every retry (RFC 0049's orchestrator, ready to use).

``Retrying`` (sync) and ``AsyncRetrying`` (asyncio) run a call again while ``decide`` says retry;
``retry(...)`` is the decorator form. The runner only orchestrates: it counts attempts, measures
elapsed time on a monotonic clock, draws jitter, sleeps, logs and re-raises; every retry/no-retry
choice and every delay comes from the core.

Giving up: when the core says no retry because time ran out (``deadline_passed``), or says retry
with a delay that reaches the timeout (``then_cancel``, so no further attempt could finish in
time), the runner raises ``RetryTimeoutError`` (a ``TimeoutError``) from the last error. For any
other no-retry (``not_idempotent``, ``strategy_declined``, ``unknown_reason``) it re-raises the
last error itself. Either way the decision is attached as ``retry_decision`` (read it with
``decision_of``) and, on Python 3.11+, as a note. An error ``classify`` maps to None is raised at
once, untouched, without a decision.

Budgets and breakers (``budget=``, ``breaker=``, shared by every run that is given them): the
runner tells a ``RetryBudget`` each request, each failed attempt and each success, and asks it
(``try_retry``) before each retry the core grants; a refusal is the core's no-retry with cause
``budget_exhausted`` (``decide_with_budget``), surfaced like any give-up. A ``CircuitBreaker`` is
asked before each attempt and told each attempt's outcome; an attempt it refuses is not made and
fails with ``CircuitOpenError``, reason ``CIRCUIT_BREAKER_OPEN``, which the core may retry (the budget is asked only after attempts that
were sent). Both read the runner's ``clock`` in milliseconds.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import random as _random
import time
import urllib.error
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypedDict, TypeVar, cast

from . import http as _http
from ._log import LOGGER, log_decision
from ._decision import RetryDecision
from ._lowlevel import (
    BreakerVerdict,
    CircuitBreaker,
    Decision,
    Operation,
    Policy,
    Request,
    RetryBudget,
    classify_dispatch,
    decide,
    decide_with_budget,
)
from ._reason import RetryReason
from .errors import RetryPolicyError

if TYPE_CHECKING:
    from typing import Unpack

    from . import RetryStrategy

__all__ = [
    "AsyncRetrying",
    "CircuitOpenError",
    "Classifier",
    "Hook",
    "RetryHook",
    "RetryTimeoutError",
    "Retrying",
    "RunOptions",
    "decision_of",
    "first_of",
    "http_status_errors",
    "network_errors",
    "retry",
    "set_testing",
    "is_testing",
    "instant_sleeps",
]

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
SleepT = TypeVar("SleepT")

Classifier = Callable[[Exception], "RetryReason | None"]
"""Maps an error to the reason to retry it for, or None: surface this error now."""
Hook = Callable[[Decision, Exception], None]
"""Called with the decision and the error it was made for."""
RetryHook = Callable[[RetryDecision, Exception], None]
"""``on_retry``: called with the decision to retry (its ``delay_ms`` an int) and the error."""


def _dispatch_reason(failure: str) -> RetryReason:
    """The core's reason for a dispatch-stage failure."""
    reason = classify_dispatch(failure).reason
    if reason is None:
        raise RuntimeError(f"the core has no reason for {failure}")
    return reason


# Which network errors surely did not send the request, and which may have: only Python sees the
# exception types, so this one table maps them to the core's dispatch-stage failures (RFC 0049
# "Different Stage Retry Semantics"); the core gives the reason, and first match wins.
_NETWORK_ERRORS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], RetryReason], ...] = (
    (ConnectionRefusedError, _dispatch_reason("socket_not_available")),  # not sent
    ((ConnectionError, TimeoutError), _dispatch_reason("socket_closed_while_in_flight")),  # maybe sent
)

_instant = False


def set_testing(instant: bool) -> None:
    """Makes every runner's sleeps instant (True) or real again (False); decisions, hooks and logs stay."""
    global _instant
    _instant = instant


def is_testing() -> bool:
    """Whether ``set_testing`` made sleeps instant (the httpx transports read it too)."""
    return _instant


@contextmanager
def instant_sleeps(instant: bool = True) -> Iterator[None]:
    """``set_testing(instant)`` for the ``with`` block, then the previous setting."""
    before = _instant
    set_testing(instant)
    try:
        yield
    finally:
        set_testing(before)


def network_errors(exc: Exception) -> RetryReason | None:
    """Connection refused: not sent (SOCKET_NOT_AVAILABLE); any other ``ConnectionError`` or a
    ``TimeoutError``: it may have been processed (SOCKET_CLOSED_WHILE_IN_FLIGHT); else surface."""
    for types, reason in _NETWORK_ERRORS:
        if isinstance(exc, types):
            return reason
    return None


def http_status_errors(exc: Exception) -> RetryReason | None:
    """An HTTP status error (``exc.response.status_code``, as httpx and requests raise, or
    ``urllib.error.HTTPError``): the core's ``retry_reason`` for its status
    (SERVICE_RESPONSE_CODE_INDICATED when transient); a final status or any other error: surface."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status is None and isinstance(exc, urllib.error.HTTPError):
        status = exc.code
    if not isinstance(status, int):
        return None
    try:
        name = _http.classify(status=status)["retry_reason"]
    except RetryPolicyError:
        return None
    return None if name is None else RetryReason[name]


def first_of(*classifiers: Classifier) -> Classifier:
    """A classifier that asks each in turn and returns the first reason found."""

    def classify(exc: Exception) -> RetryReason | None:
        for c in classifiers:
            reason = c(exc)
            if reason is not None:
                return reason
        return None

    return classify


class RetryTimeoutError(TimeoutError):
    """The run ended because no time was left for another attempt; ``__cause__`` is the last error."""

    def __init__(self, decision: Decision, last_error: Exception) -> None:
        super().__init__(f"retrypolicy: gave up after {decision.attempts + 1} attempts, no time left: {decision}")
        self.retry_decision = decision
        self.last_error = last_error


class CircuitOpenError(Exception):
    """An attempt the circuit breaker refused (not sent); ``verdict`` is the breaker's answer."""

    def __init__(self, verdict: BreakerVerdict) -> None:
        super().__init__(f"retrypolicy: circuit {verdict.state}, attempt not sent (rule {verdict.rule})")
        self.verdict = verdict


def decision_of(exc: BaseException) -> Decision | None:
    """The decision a runner attached to the error it raised, if any."""
    decision = getattr(exc, "retry_decision", None)
    return decision if isinstance(decision, Decision) else None


class RunOptions(TypedDict, total=False):
    """The runners' optional inputs (all keyword-only)."""

    policy: Policy | None
    strategy: RetryStrategy | None
    idempotent: bool | None
    classify: Classifier
    on_retry: RetryHook | None
    on_give_up: Hook | None
    clock: Callable[[], float]
    random: Callable[[], float]
    logger: logging.Logger
    log_level: int
    budget: RetryBudget | None
    breaker: CircuitBreaker | None


class _Runner(Generic[SleepT]):
    """The inputs and the per-attempt orchestration shared by the sync and async runners."""

    def __init__(
        self, operation: Operation, *, timeout: float | timedelta, sleep: SleepT, **options: Unpack[RunOptions]
    ) -> None:
        Request(operation, timeout=timeout, idempotent=options.get("idempotent"))  # bad input raises here
        self.operation = operation
        self.timeout = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        self.sleep = sleep
        self.policy = options.get("policy")
        self.strategy = options.get("strategy")
        self.idempotent = options.get("idempotent")
        self.classify = options.get("classify", network_errors)
        self.on_retry = options.get("on_retry")
        self.on_give_up = options.get("on_give_up")
        self.clock = options.get("clock", time.monotonic)
        self.random = options.get("random", _random.random)
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        self.budget = options.get("budget")
        self.breaker = options.get("breaker")
        self.guarded = self.budget is not None or self.breaker is not None

    def _now_ms(self) -> int:
        """The runner's clock in whole milliseconds, for the budget and the breaker."""
        return int(self.clock() * 1000)

    def _start(self) -> list[Any]:
        """A new run: ``[start, retries so far, previous delay, cause of the last retry]``; the
        budget is told of the request."""
        run = [self.clock(), 0, None, None]
        if self.budget is not None:
            self.budget.record(self._now_ms(), "request")
        return run

    def _permit(self) -> None:
        """Asks the breaker (there is one) before an attempt; raises ``CircuitOpenError`` when it refuses."""
        verdict = cast(CircuitBreaker, self.breaker).permit(self._now_ms())
        if not verdict.permitted:
            raise CircuitOpenError(verdict)

    def _succeeded(self, run: list[Any], result: T) -> T:
        """Tells the breaker and the budget that the attempt succeeded; returns its ``result``."""
        if self.breaker is not None:
            self.breaker.record(self._now_ms(), "success")
        if self.budget is not None:
            self.budget.record(self._now_ms(), "success", after_retry=run[3])
        return result

    def _failed(self, cause: Literal["timeout", "error"]) -> None:
        """Tells the breaker and the budget that a sent attempt failed (timed out, or an error)."""
        outcome: Literal["timeout", "failure"] = "timeout" if cause == "timeout" else "failure"
        if self.breaker is not None:
            self.breaker.record(self._now_ms(), outcome)
        if self.budget is not None:
            self.budget.record(self._now_ms(), outcome)

    def _after(self, exc: Exception, run: list[Any]) -> float | None:
        """Asks the core about ``exc``: the seconds to sleep before the next attempt, or None to
        re-raise ``exc``; raises ``RetryTimeoutError`` when time is up. ``run`` is the run's list
        (``_start``), updated here (a list: one allocation per run)."""
        if self.breaker is not None and isinstance(exc, CircuitOpenError):
            reason, sent = exc.verdict.reason, False
        else:
            reason, sent = self.classify(exc), True
        if reason is None:
            return None
        cause: Literal["timeout", "error"] = "timeout" if self.guarded and isinstance(exc, TimeoutError) else "error"
        if sent and self.guarded:
            self._failed(cause)
        request = Request(
            self.operation,
            timeout=self.timeout,
            elapsed=self.clock() - run[0],
            attempts=run[1],
            idempotent=self.idempotent,
            random=self.random(),
            previous_delay=run[2],
        )
        decision = decide(request, reason, self.policy, self.strategy)
        # The budget is asked after an attempt that was sent: a retry it grants stays granted
        # while the breaker holds that retry back (nothing reaches the server meanwhile).
        if sent and self.budget is not None and decision.is_retry and not decision.then_cancel:
            verdict = self.budget.try_retry(self._now_ms(), cause)
            if not verdict.permitted:
                decision = decide_with_budget(request, reason, self.policy, verdict)
        if self.logger.isEnabledFor(self.log_level):
            log_decision(self.logger, self.log_level, self.operation, decision)
        if decision.is_retry and not decision.then_cancel:
            if self.on_retry is not None:
                self.on_retry(decision, exc)
            run[1] += 1
            run[2] = delay = (decision.delay_ms or 0) / 1000
            run[3] = cause
            return delay
        try:
            setattr(exc, "retry_decision", decision)
        except AttributeError:
            pass
        if hasattr(exc, "add_note"):
            exc.add_note(f"retrypolicy: {decision}")
        if self.on_give_up is not None:
            self.on_give_up(decision, exc)
        if decision.then_cancel or decision.cause == "deadline_passed":
            raise RetryTimeoutError(decision, exc) from exc
        return None


class Retrying(_Runner[Callable[[float], object]]):
    """A sync runner: ``Retrying(op, timeout=2.5)(fn, *args)`` calls ``fn`` until it returns or
    the core says stop; ``.wraps(fn)`` is the decorator form."""

    def __init__(
        self,
        operation: Operation,
        *,
        timeout: float | timedelta,
        sleep: Callable[[float], object] = time.sleep,
        **options: Unpack[RunOptions],
    ) -> None:
        super().__init__(operation, timeout=timeout, sleep=sleep, **options)

    def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Calls ``fn(*args, **kwargs)``, retrying as the core decides."""
        run = self._start()
        while True:
            try:
                if self.breaker is not None:
                    self._permit()
                result = fn(*args, **kwargs)
                return self._succeeded(run, result) if self.guarded else result
            except Exception as exc:
                delay = self._after(exc, run)
                if delay is None:
                    raise
            if not _instant:
                self.sleep(delay)

    def wraps(self, fn: Callable[P, T]) -> Callable[P, T]:
        """``fn`` wrapped so that each call runs through this runner."""

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            return self(fn, *args, **kwargs)

        return wrapper


class AsyncRetrying(_Runner[Callable[[float], Awaitable[object]]]):
    """An asyncio runner: ``await AsyncRetrying(op, timeout=2.5)(fn, *args)``; it awaits
    ``asyncio.sleep`` between attempts and lets cancellation through untouched."""

    def __init__(
        self,
        operation: Operation,
        *,
        timeout: float | timedelta,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        **options: Unpack[RunOptions],
    ) -> None:
        super().__init__(operation, timeout=timeout, sleep=sleep, **options)

    async def __call__(self, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Awaits ``fn(*args, **kwargs)``, retrying as the core decides."""
        run = self._start()
        while True:
            try:
                if self.breaker is not None:
                    self._permit()
                result = await fn(*args, **kwargs)
                return self._succeeded(run, result) if self.guarded else result
            except Exception as exc:
                delay = self._after(exc, run)
                if delay is None:
                    raise
            if not _instant:
                await self.sleep(delay)

    def wraps(self, fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
        """``fn`` wrapped so that each call runs through this runner."""

        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            return await self(fn, *args, **kwargs)

        return wrapper


def retry(operation: Operation, *, timeout: float | timedelta, **options: Unpack[RunOptions]) -> Callable[[F], F]:
    """A decorator: each call of the function (sync, or ``async def``) runs through a runner."""

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):
            return cast(F, AsyncRetrying(operation, timeout=timeout, **options).wraps(fn))
        return cast(F, Retrying(operation, timeout=timeout, **options).wraps(fn))

    return decorate

"""Retry runners: wrap a call, and the core's run machine (``retrypolicy.Run``) decides every step.

``Retrying`` (sync) and ``AsyncRetrying`` (asyncio) call a function while the machine says send,
sleep while it says wait, and stop when it says done; ``retry(...)`` is the decorator form. The
runner keeps only host work: the clock, sleeping, calling the function, turning its exception
into an outcome (``classify``), cancellation, logging and hooks. The machine owns the attempts,
the deadline (``timeout``), the cap (``max_attempts``), ``Retry-After``, the budget and the breaker
(README, "The retry run").

``classify(exc)`` returns a ``RetryReason`` (a timeout when ``exc`` is a ``TimeoutError``), an
outcome dict (``{"kind": "http", "status": 503, "retry_after": "1"}``), or None: a final failure,
raised at once untouched. The default knows network errors and the HTTP status errors of httpx,
requests and urllib; a ``RetryTimeoutError`` (an inner run's) is always final.

Ending: gave up (not idempotent, a strategy declined, the attempts or the budget ran out) re-raises
the last error with the decision attached as ``retry_decision`` (``decision_of``), the run's
statistics as ``retry_stats`` (``stats_of``) and, on Python 3.11+, a note; no time left raises
``RetryTimeoutError`` from the last error. A breaker that keeps every attempt back makes the run
wait for its window; with no attempt ever sent, a give-up raises ``CircuitOpenError``. After a
call, ``runner.statistics`` is what the last call through it in this thread did (``RunStats``).

Hooks fire on the core's ``step.signal``, never by the runner's own judgement: ``on_retry(decision,
exc)`` on ``retry`` (a wait after a failed attempt; as many calls as ``statistics.retries``),
``on_breaker_wait(step)`` on ``breaker_wait`` (a wait for the breaker's window) and
``on_give_up(decision, exc)`` on ``give_up`` (the run gave up or timed out; ``decision`` None when
no decision ended it, the deadline passing during a wait; ``exc`` the last failure, or when no
attempt was sent the error the run raises: ``CircuitOpenError``, or ``RetryTimeoutError`` at the
deadline). A final failure, a success and a
cancel fire none of them.

Logging, on ``logger`` (``retrypolicy``): each retry and breaker wait at ``log_level`` (DEBUG), a give-up or timeout at
``give_up_log_level`` (INFO), with ``retry_function``, ``retry_error_type``, ``retry_reason``,
``retry_rule``, ``retry_delay_ms``, ``retry_attempt``, ``retry_attempts`` and ``retry_end`` as record
attributes. When ``retrypolicy.otel.instrument()`` was called, each step records its OpenTelemetry
signals.

An exception that leaves a run (the function's ``BaseException`` such as ``KeyboardInterrupt`` or
``asyncio.CancelledError``, or a classifier, hook, clock or sleep that raises) cancels the run, so a
breaker's canary is released, and an error raised while handling a failure carries that failure as
its ``__context__``. ``AsyncRetrying`` cancels each attempt at the step's ``timeout_ms`` (the time
left, or ``attempt_timeout`` when shorter), so the run ends by its deadline whatever the attempt
does. ``retry`` refuses generator and async generator functions (TypeError: a generator returns
before its body runs, so nothing could be retried) and treats an object whose ``__call__`` is
``async def`` as async.
"""

from __future__ import annotations

import functools
import json
import logging
import random as _random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypedDict, TypeVar, cast

from ._classify import BY_TYPE, Classifier, Outcome, default_classifier, first_of, http_status_errors, network_errors, outcome_of
from ._decision import RetryDecision
from . import _observe
from ._ending import CircuitOpenError, RetryTimeoutError, abandon, decision_of, stats_of
from ._log import LOGGER, log_step, name_of, type_name
from ._lowlevel import (
    CircuitBreaker,
    Decision,
    FailFast,
    Operation,
    Policy,
    Request,
    RetryBudget,
    Run,
    RunConfig,
    RunStats,
    RunStep,
)

if TYPE_CHECKING:
    from typing import Unpack

    from . import RetryStrategy

__all__ = [
    "AsyncRetrying",
    "BreakerWaitHook",
    "CircuitOpenError",
    "Classifier",
    "Hook",
    "Outcome",
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
    "stats_of",
    "is_testing",
    "instant_sleeps",
]

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
SleepT = TypeVar("SleepT")

Hook = Callable[[Decision | None, Exception], None]
"""``on_give_up``: called with the decision that ended the run (None when none did: the deadline
passed during a wait) and the error it was made for."""
RetryHook = Callable[[RetryDecision, Exception], None]
"""``on_retry``: called with the decision to retry (its ``delay_ms`` an int) and the error."""
BreakerWaitHook = Callable[[RunStep], None]
"""``on_breaker_wait``: called with the step that waits for the breaker's window (its ``breaker``
verdict, ``delay_ms`` and ``reason`` ``CIRCUIT_BREAKER_OPEN``)."""

_instant = False


class _Skipped:
    """A testing run's clock: the runner's clock plus every wait skipped so far, so the run, its
    budget and its breaker see the times a real run would (and decide as it would)."""

    __slots__ = ("clock", "skipped", "waits")

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.skipped = 0.0
        self.waits = 0

    def __call__(self) -> float:
        """The runner's clock reading plus the waits skipped (seconds)."""
        return self.clock() + self.skipped

    def skip(self, delay_ms: int | None) -> bool:
        """Skips a wait of ``delay_ms``: the clock moves by it; True every 64th wait (time to yield)."""
        self.skipped += (delay_ms or 0) / 1000
        self.waits += 1
        return self.waits % 64 == 0


def set_testing(instant: bool) -> None:
    """Makes every runner's sleeps instant (True: each skipped wait still moves the run's clock, so
    decisions, hooks and logs are a real run's) or real again (False)."""
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


class RunOptions(TypedDict, total=False):
    """The runners' optional inputs (all keyword-only)."""

    policy: Policy | None
    strategy: RetryStrategy | None
    idempotent: bool | None
    max_attempts: int | None
    attempt_timeout: float | timedelta | None
    classify: Classifier
    on_retry: RetryHook | None
    on_breaker_wait: BreakerWaitHook | None
    on_give_up: Hook | None
    clock: Callable[[], float]
    random: Callable[[], float]
    logger: logging.Logger
    log_level: int
    give_up_log_level: int
    budget: RetryBudget | None
    breaker: CircuitBreaker | None


def _only_known(options: dict[str, Any], allowed: Any, where: str, also: frozenset[str] = frozenset()) -> None:
    """Raises ``TypeError`` for the first of ``options`` that neither the TypedDict ``allowed`` nor
    ``also`` names, as Python does for an unknown keyword argument: a misspelled option is never ignored."""
    names = allowed.__required_keys__ | allowed.__optional_keys__ | also
    for name in options:
        if name not in names:
            raise TypeError(f"{where}() got an unexpected keyword argument {name!r}")


class _Runner(Generic[SleepT]):
    """The inputs and the host work shared by the sync and async runners."""

    def __init__(
        self, operation: Operation, *, timeout: float | timedelta, sleep: SleepT, **options: Unpack[RunOptions]
    ) -> None:
        _only_known(dict(options), RunOptions, type(self).__name__)
        timeout_ms = Request(operation, timeout=timeout).timeout_ms  # bad input raises here
        rules: dict[str, Any] = {"operation": json.loads(operation.to_json())}
        if (policy := options.get("policy")) is not None:
            rules["policy"] = json.loads(policy.to_json())
        if (idempotent := options.get("idempotent")) is not None:
            rules["idempotent"] = idempotent
        self.strategy = options.get("strategy")
        if type(self.strategy) is FailFast:  # the core's own: the machine then fails fast on an open breaker too
            rules["strategy"], self.strategy = "fail_fast", None
        config: dict[str, Any] = {"rules": {"decide": rules}, "timeout_ms": timeout_ms}
        if (max_attempts := options.get("max_attempts")) is not None:
            config["max_attempts"] = max_attempts
        if (attempt_timeout := options.get("attempt_timeout")) is not None:
            config["attempt_timeout_ms"] = Request(operation, timeout=attempt_timeout).timeout_ms
        self.config = RunConfig(config)  # bad input raises here
        self.operation = operation
        self.sleep = sleep
        self.classify = options.get("classify", default_classifier)
        # The default classifier's answer for a network error depends on its type alone: kept.
        self._by_type = BY_TYPE if self.classify is default_classifier else {}
        self.on_retry = options.get("on_retry")
        self.on_breaker_wait = options.get("on_breaker_wait")
        self.on_give_up = options.get("on_give_up")
        self.clock = options.get("clock", time.monotonic)
        self.random = options.get("random", _random.random)
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        self.give_up_log_level = options.get("give_up_log_level", logging.INFO)
        self._local = threading.local()  # the last run of each thread, for ``statistics``
        self.budget = options.get("budget")
        self.breaker = options.get("breaker")
        guards = (self.budget, self.breaker, self.strategy)
        self.guards: tuple[Any, ...] = guards if any(g is not None for g in guards) else ()  # none: a faster call

    @property
    def statistics(self) -> RunStats | None:
        """What the last call through this runner in this thread did (tenacity's ``statistics``):
        attempts, retries, waiting, the end, the last rule and verdicts; None before any call. A
        coroutine reads it right after its ``await``, before it awaits anything else."""
        run: Run | None = getattr(self._local, "run", None)
        return None if run is None else run.stats

    def _failed(self, run: Run, exc: Exception, fn: object, clock: Callable[[], float]) -> RunStep:
        """Tells ``run`` of the failure ``exc`` of ``fn`` at ``clock``'s time (the default
        classifier's answer looked up by the exception's type first), logging a retry and calling
        ``on_retry`` when either is wanted: the next step."""
        outcome = self._by_type.get(type(exc)) or outcome_of(exc, self.classify)
        step = run.attempt_ended(outcome, clock() * 1000, self.random())
        if self.on_retry is not None or self.logger.isEnabledFor(self.log_level):
            self._report(step, exc, fn)
        return step

    def _report(self, step: RunStep, exc: Exception, fn: object) -> None:
        """On a retry (the core's signal): logs it after the failure ``exc`` of ``fn``, and calls ``on_retry``."""
        if step.signal != "retry":
            return
        if self.logger.isEnabledFor(self.log_level):
            log_step(self.logger, self.log_level, step, name_of(fn), type_name(exc), step.decision)
        if self.on_retry is not None:
            self.on_retry(cast(RetryDecision, step.decision), exc)

    def _breaker_wait(self, step: RunStep, fn: object) -> None:
        """On a wait for the breaker's window (the core's signal): logs it and calls ``on_breaker_wait``."""
        if self.logger.isEnabledFor(self.log_level):
            log_step(self.logger, self.log_level, step, name_of(fn), None)
        if self.on_breaker_wait is not None:
            self.on_breaker_wait(step)

    def _ended(self, run: Run, step: RunStep, last: Exception | None, fn: object) -> BaseException:
        """The exception that ends a run of ``fn`` that did not succeed: a give-up or timeout
        logged, the decision and statistics attached, its hook called."""
        if step.end == "final" and last is not None:
            return last
        stats = run.stats
        decision = step.decision if isinstance(step.decision, Decision) else None
        if last is not None:
            try:
                setattr(last, "retry_stats", stats)
                if decision is not None:
                    setattr(last, "retry_decision", decision)
            except AttributeError:
                pass
            if decision is not None and hasattr(last, "add_note"):
                last.add_note(f"retrypolicy: {decision}")
        if self.logger.isEnabledFor(self.give_up_log_level):
            error_type = type_name(last) if last is not None else None
            # The decision describes the give-up unless the run overrode a retry (max_attempts_reached).
            told = decision if decision is not None and not decision.is_retry else None
            log_step(self.logger, self.give_up_log_level, step, name_of(fn), error_type, told)
        error: Exception
        if step.end == "timed_out":
            error = RetryTimeoutError(step, last, decision, stats)
            error.__cause__ = last
        else:
            error = last if last is not None else CircuitOpenError(step, stats)
        if self.on_give_up is not None and step.signal == "give_up":
            # The last failure, or the error the run raises when no attempt was sent.
            self.on_give_up(decision, last if last is not None else error)
        return error



class Retrying(_Runner[Callable[[float], object]]):
    """A sync runner: ``Retrying(op, timeout=2.5)(fn, *args)`` calls ``fn`` until it returns or
    the machine says stop; ``.wraps(fn)`` is the decorator form. ``attempt_timeout`` bounds each
    attempt in the machine's accounting only: a sync call cannot be interrupted."""

    def __init__(
        self,
        operation: Operation,
        *,
        timeout: float | timedelta,
        sleep: Callable[[float], object] | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        super().__init__(operation, timeout=timeout, sleep=time.sleep if sleep is None else sleep, **options)

    def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Calls ``fn(*args, **kwargs)``, retrying as the machine decides."""
        # Bound once, then called without unpacking per attempt (BENCHMARKS.md, the runner's budget).
        call: Callable[[], T] = functools.partial(fn, *args, **kwargs) if args or kwargs else fn
        skipped = _Skipped(self.clock) if _instant else None  # testing: waits skipped, the clock moved
        clock: Callable[[], float] = self.clock if skipped is None else skipped
        last = None
        run, step = self.config.start(clock() * 1000, *self.guards) if self.guards else self.config.start(clock() * 1000)
        if (sink := _observe.sink) is not None:  # OpenTelemetry, when instrumented
            sink.step(step, False, self.breaker)
        try:
            while (action := step.action) != "done":
                if action == "wait":
                    if step.signal == "breaker_wait":
                        self._breaker_wait(step, fn)
                    if skipped is None:
                        self.sleep((step.delay_ms or 0) / 1000)
                    else:
                        skipped.skip(step.delay_ms)
                    step = run.wait_ended(clock() * 1000)
                    if sink is not None:
                        sink.step(step, False, self.breaker)
                    continue
                try:
                    result = call()
                except Exception as exc:
                    last = exc
                    step = self._failed(run, exc, fn, clock)
                    if sink is not None:
                        sink.step(step, False, self.breaker)
                else:
                    run.succeeded(clock() * 1000)
                    return result
            raise self._ended(run, step, last, fn)
        except BaseException as exc:
            abandon(run, clock, exc, last)
            raise
        finally:
            last = None  # no cycle through the traceback's frame for the GC to collect
            self._local.run = run

    def wraps(self, fn: Callable[P, T]) -> Callable[P, T]:
        """``fn`` wrapped so that each call runs through this runner."""

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            return self(fn, *args, **kwargs)

        setattr(wrapper, "runner", self)  # ``fn.runner.statistics``
        return wrapper


class AsyncRetrying(_Runner[Callable[[float], Awaitable[object]]]):
    """An asyncio runner: ``await AsyncRetrying(op, timeout=2.5)(fn, *args)``; it awaits
    ``asyncio.sleep`` between attempts, cancels each attempt at the step's timeout (the time left,
    or ``attempt_timeout`` when shorter: a ``TimeoutError`` for the classifier), and lets
    cancellation through (the run is cancelled, a breaker's canary released)."""

    def __init__(
        self,
        operation: Operation,
        *,
        timeout: float | timedelta,
        sleep: Callable[[float], Awaitable[object]] | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        if sleep is None:
            import asyncio  # here, not at the top: a sync program never pays for asyncio (issue 30)

            sleep = asyncio.sleep
        super().__init__(operation, timeout=timeout, sleep=sleep, **options)

    async def __call__(self, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Awaits ``fn(*args, **kwargs)``, retrying as the machine decides."""
        import asyncio  # loaded by now: this coroutine runs in its loop

        within = getattr(asyncio, "timeout", None)  # Python 3.11+ (else asyncio.wait_for)
        call: Callable[[], Awaitable[T]] = functools.partial(fn, *args, **kwargs) if args or kwargs else fn
        skipped = _Skipped(self.clock) if _instant else None  # testing: waits skipped, the clock moved
        clock: Callable[[], float] = self.clock if skipped is None else skipped
        last = None
        run, step = self.config.start(clock() * 1000, *self.guards) if self.guards else self.config.start(clock() * 1000)
        if (sink := _observe.sink) is not None:  # OpenTelemetry, when instrumented
            sink.step(step, False, self.breaker)
        try:
            while (action := step.action) != "done":
                if action == "wait":
                    if step.signal == "breaker_wait":
                        self._breaker_wait(step, fn)
                    if skipped is None:
                        await self.sleep((step.delay_ms or 0) / 1000)
                    elif skipped.skip(step.delay_ms):
                        await asyncio.sleep(0)  # now and then, the loop's other tasks run
                    step = run.wait_ended(clock() * 1000)
                    if sink is not None:
                        sink.step(step, False, self.breaker)
                    continue
                try:
                    if step.timeout_ms is None:
                        result = await call()
                    elif within is not None:  # no task per attempt
                        async with within(step.timeout_ms / 1000):
                            result = await call()
                    else:
                        result = await asyncio.wait_for(call(), step.timeout_ms / 1000)
                except Exception as exc:
                    if isinstance(exc, asyncio.TimeoutError) and not isinstance(exc, TimeoutError):  # 3.10
                        exc = TimeoutError(f"retrypolicy: attempt {step.attempt} reached its timeout of {step.timeout_ms} ms")
                    last = exc
                    step = self._failed(run, exc, fn, clock)
                    if sink is not None:
                        sink.step(step, False, self.breaker)
                else:
                    run.succeeded(clock() * 1000)
                    return result
            raise self._ended(run, step, last, fn)
        except BaseException as exc:
            abandon(run, clock, exc, last)
            raise
        finally:
            last = None  # no cycle through the traceback's frame for the GC to collect
            self._local.run = run

    def wraps(self, fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
        """``fn`` wrapped so that each call runs through this runner."""

        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            return await self(fn, *args, **kwargs)

        setattr(wrapper, "runner", self)  # ``fn.runner.statistics``
        return wrapper


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` function, or an object whose
    ``__call__`` is one."""
    import inspect  # on decorating only (issue 30: weight)

    return inspect.iscoroutinefunction(fn) or (
        not inspect.isroutine(fn) and inspect.iscoroutinefunction(getattr(fn, "__call__", None))
    )


def retry(operation: Operation, *, timeout: float | timedelta, **options: Unpack[RunOptions]) -> Callable[[F], F]:
    """A decorator: each call of the function (sync, ``async def``, or an object with an ``async
    def __call__``) runs through a runner; a generator or async generator function is refused."""

    _only_known(dict(options), RunOptions, "retry", frozenset({"sleep"}))  # sleep: the runner's own

    def decorate(fn: F) -> F:
        import inspect  # on decorating only (issue 30: weight)

        call = fn if inspect.isroutine(fn) else getattr(fn, "__call__", fn)
        if inspect.isgeneratorfunction(call) or inspect.isasyncgenfunction(call):
            kind = "an async generator" if inspect.isasyncgenfunction(call) else "a generator"
            raise TypeError(
                f"retrypolicy.retry: {getattr(fn, '__qualname__', fn)!r} is {kind} function: calling it returns "
                "a generator before any of its body runs, so nothing could be retried; retry the call that "
                "produces the items instead"
            )
        if _is_async(fn):
            return cast(F, AsyncRetrying(operation, timeout=timeout, **options).wraps(fn))
        return cast(F, Retrying(operation, timeout=timeout, **options).wraps(fn))

    return decorate

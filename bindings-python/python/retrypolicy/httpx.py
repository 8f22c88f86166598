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
the HTTP loop's last step) or the last transport error is raised (its ``retry_step`` attribute,
and a note on Python 3.11+); ``CircuitOpenError`` when the breaker kept every attempt back. The
request body is read into memory before the first attempt so that it can be sent again; every
discarded response is closed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import random as _random
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict, Union, cast

import httpcore
import httpx

from . import http as _http
from . import run as _run
from ._log import LOGGER
from ._lowlevel import CircuitBreaker, RetryBudget, Run, RunConfig, RunStep

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
    """The run gave up before any attempt was sent (the breaker kept each back): an
    ``httpx.TransportError`` for httpx clients, and the runners' ``run.CircuitOpenError``."""


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


_NOT_SENT: dict[str, Any] = {"kind": "network", "sent": False}
_MAYBE_SENT: dict[str, Any] = {"kind": "network"}
_TIMEOUT: dict[str, Any] = {"kind": "timeout"}


_FINAL: dict[str, Any] = {"kind": "final"}


def _outcome(result: Result) -> dict[str, Any]:
    """What one attempt produced, as the run machine's outcome."""
    if isinstance(result, httpx.Response):
        if not 200 <= result.status_code <= 599:
            # The machine refuses statuses outside 200..=599 (out_of_range, outcome.status); such a
            # response is still the server's answer: a final one, returned to the caller as it is.
            return _FINAL
        outcome: dict[str, Any] = {"kind": "http", "status": result.status_code}
        if "retry-after" in result.headers:
            outcome["retry_after"] = result.headers["retry-after"]
        return outcome
    if isinstance(result, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return _NOT_SENT
    return _TIMEOUT if isinstance(result, httpx.TimeoutException) else _MAYBE_SENT


_ATTEMPT_ENDS: contextvars.ContextVar[float | None] = contextvars.ContextVar("retrypolicy_attempt_ends", default=None)
"""When the attempt under way must end (``time.monotonic()`` seconds): read by ``_DeadlineStream``."""


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the attempt; ``error`` raised when nothing is left."""
    ends = _ATTEMPT_ENDS.get()
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise error("retrypolicy: the attempt reached its timeout (the step's timeout_ms)")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the attempt's end (a total, not per read)."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend whose connections end every operation by the attempt's end."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self.backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options: Any = None) -> httpcore.NetworkStream:
        timeout = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> httpcore.NetworkStream:
        timeout = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def _bound(transport: httpx.BaseTransport) -> None:
    """Gives an ``httpx.HTTPTransport``'s connection pool the deadline-bound backend (httpx has no
    total timeout; its pool's ``_network_backend`` is the one place every socket call goes through)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(pool, httpcore.ConnectionPool) and isinstance(backend, httpcore.NetworkBackend):
        if not isinstance(backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(backend)


class _Steps:
    """The run's configuration, and the host work around each step."""

    def __init__(self, **options: Unpack[TransportOptions]) -> None:
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
        self.on_give_up = options.get("on_give_up")
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        self.breaker = options.get("breaker")
        self.budget = options.get("budget")

    def begin(self, request: httpx.Request) -> tuple[Run, RunStep]:
        """A run of ``request`` (its method, for RFC 9110's idempotent-method rule), started."""
        config = self.configs.get(request.method)
        if config is None:
            rules = {**self.rules, "method": request.method}
            config = self.configs[request.method] = RunConfig({**self.config, "rules": {"http": rules}})
        run = Run(config, budget=self.budget, breaker=self.breaker)
        return run, run.start(self.ms())

    def ms(self) -> float:
        """The transport's clock in milliseconds."""
        return self.clock() * 1000

    def cap(self, request: httpx.Request, step: RunStep) -> None:
        """Cuts the attempt's timeouts (connect, read, write, pool) to the step's."""
        if step.timeout_ms is None:
            return
        left = step.timeout_ms / 1000
        timeout = request.extensions.get("timeout") or dict.fromkeys(("connect", "read", "write", "pool"))
        request.extensions["timeout"] = {k: left if v is None else min(v, left) for k, v in timeout.items()}

    def after(self, request: httpx.Request, run: Run, result: Result) -> RunStep:
        """Tells the run what the attempt produced; logs, calls the hooks; a response the run
        will not return is closed by the caller."""
        outcome = _outcome(result)
        step = run.attempt_ended(outcome, self.ms(), self.random(), int(self.now() * 1000))
        decision = cast(_http.Step, step.decision)
        if self.logger.isEnabledFor(self.log_level):
            self.logger.log(
                self.log_level,
                "HTTP %s %s attempt %d: %s after %s (rule %s, delay %s ms)",
                request.method,
                request.url,
                run.attempts_sent,
                "retry" if step.action == "wait" else "stop",
                outcome,
                step.rule,
                step.delay_ms,
                extra={"retry_rule": step.rule, "retry_delay_ms": step.delay_ms, "retry_attempts": run.attempts_sent},
            )
        if step.action == "wait":
            if self.on_retry is not None:
                self.on_retry(cast(_http.RetryStep, decision), result)
        elif step.end != "succeeded" and self.on_give_up is not None:
            self.on_give_up(decision, result)
        return step

    def finish(self, step: RunStep, result: Result | None, decision: _http.Step | None) -> httpx.Response:
        """The run is over: the last response, or the last error raised."""
        if result is None:
            raise CircuitOpenError(step)
        if isinstance(result, httpx.Response):
            result.extensions["retrypolicy"] = decision
            return result
        setattr(result, "retry_step", decision)
        if hasattr(result, "add_note"):
            result.add_note(f"retrypolicy: stopped after {step.attempt} attempts ({step.rule})")
        raise result


async def _within(attempt: Awaitable[httpx.Response], timeout_ms: int, request: httpx.Request) -> httpx.Response:
    """``attempt`` awaited for at most ``timeout_ms``, cancelled then (``httpx.TimeoutException``)."""
    try:
        return await asyncio.wait_for(attempt, timeout_ms / 1000)
    except asyncio.TimeoutError:
        raise httpx.TimeoutException("retrypolicy: the attempt reached its timeout (the step's timeout_ms)", request=request) from None


def _abandon(run: Run, steps: _Steps, result: Result | None, exc: BaseException) -> None:
    """An exception leaves the run (a hook or the clock raised, the caller cancelled): the run is
    cancelled (a breaker's canary released) and the attempt's failure is kept as its ``__context__``."""
    if run.phase != "done":
        run.cancel(steps.ms())
    if isinstance(result, httpx.TransportError) and exc is not result and exc.__context__ is None:
        exc.__context__ = result


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
        _bound(self.transport)
        self.sleep = time.sleep if sleep is None else sleep
        self.steps = _Steps(**options)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        request.read()
        run, step = self.steps.begin(request)
        result: Result | None = None
        decision: _http.Step | None = None
        try:
            while True:
                if step.action == "send":
                    self.steps.cap(request, step)
                    ends = None if step.timeout_ms is None else time.monotonic() + step.timeout_ms / 1000
                    token = _ATTEMPT_ENDS.set(ends)
                    try:
                        result = self.transport.handle_request(request)
                    except httpx.TransportError as exc:
                        result = exc
                    finally:
                        _ATTEMPT_ENDS.reset(token)
                    step = self.steps.after(request, run, result)
                    decision = cast(_http.Step, step.decision) or decision
                    if step.action == "wait" and isinstance(result, httpx.Response):
                        result.close()
                elif step.action == "wait":
                    if not _run.is_testing():
                        self.sleep(cast(int, step.delay_ms) / 1000)
                    step = run.wait_ended(self.steps.ms())
                else:
                    return self.steps.finish(step, result, decision)
        except BaseException as exc:
            _abandon(run, self.steps, result, exc)
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
        self.steps = _Steps(**options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Sends ``request``, again as the core decides; returns the last response or raises the last error."""
        await request.aread()
        run, step = self.steps.begin(request)
        result: Result | None = None
        decision: _http.Step | None = None
        try:
            while True:
                if step.action == "send":
                    self.steps.cap(request, step)
                    try:
                        if step.timeout_ms is None:
                            result = await self.transport.handle_async_request(request)
                        else:  # a total timeout: the attempt is cancelled at the step's timeout
                            result = await _within(self.transport.handle_async_request(request), step.timeout_ms, request)
                    except httpx.TransportError as exc:
                        result = exc
                    step = self.steps.after(request, run, result)
                    decision = cast(_http.Step, step.decision) or decision
                    if step.action == "wait" and isinstance(result, httpx.Response):
                        await result.aclose()
                elif step.action == "wait":
                    if not _run.is_testing():
                        await self.sleep(cast(int, step.delay_ms) / 1000)
                    step = run.wait_ended(self.steps.ms())
                else:
                    return self.steps.finish(step, result, decision)
        except BaseException as exc:
            _abandon(run, self.steps, result, exc)
            if isinstance(result, httpx.Response):
                await result.aclose()
            raise

    async def aclose(self) -> None:
        """Closes the wrapped transport."""
        await self.transport.aclose()

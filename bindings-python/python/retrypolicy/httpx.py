"""httpx transports that retry by the core's HTTP rules (``pip install 'retrypolicy[httpx]'``).

``RetryTransport`` (sync) and ``AsyncRetryTransport`` wrap another transport. After each attempt
the core's HTTP loop (``retrypolicy.http.next_step``) decides: the status class (5xx, 408, 429
transient; 2xx-4xx final), ``Retry-After`` in seconds or as an HTTP date, the backoff, the attempt
limit, and the deadline (no attempt starts at or after it; a wait that would reach it stops the
run), and each attempt's timeouts are cut to the time left. Before a retry, the core's RFC 0049
``decide`` rules on idempotency: a connection that failed before the request was sent
(``ConnectError``, ``ConnectTimeout``, ``PoolTimeout``: SOCKET_NOT_AVAILABLE) is retried for any
method; once the request may have reached the server (any other ``TransportError``, e.g.
``ReadError``, ``RemoteProtocolError``, ``ReadTimeout``, or any response: RFC 0049's network-time
stage, SOCKET_CLOSED_WHILE_IN_FLIGHT) it is retried only when idempotent, which RFC 0049 makes
GET alone unless the caller passes ``idempotent=True``.

When the loop stops, the last response is returned (``response.extensions["retrypolicy"]`` holds
the final step) or the last transport error is raised (its ``retry_step`` attribute, and a note on
Python 3.11+). The request body is read into memory before the first attempt so that it can be
sent again.
"""

from __future__ import annotations

import asyncio
import logging
import random as _random
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict, Union

import httpx

from . import http as _http
from . import run as _run
from ._log import LOGGER, log_decision
from ._lowlevel import Operation, Request, decide
from .errors import UnknownNameError

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["AsyncRetryTransport", "RetryTransport", "TransportOptions"]

Result = Union[httpx.Response, httpx.TransportError]
"""What one attempt produced."""
StepHook = Callable[[dict[str, Any], Result], None]
"""Called with the core's step (a dict) and the attempt's response or error."""

_NOT_SENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


class TransportOptions(TypedDict, total=False):
    """The transports' inputs (all keyword-only)."""

    deadline: float | timedelta
    max_attempts: int | None
    backoff: dict[str, Any] | None
    jitter: str | None
    idempotent: bool | None
    clock: Callable[[], float]
    now: Callable[[], float]
    random: Callable[[], float]
    on_retry: StepHook | None
    on_give_up: StepHook | None
    logger: logging.Logger
    log_level: int


class _Steps:
    """The loop's inputs, and the core's ruling after each attempt."""

    def __init__(self, **options: Unpack[TransportOptions]) -> None:
        deadline = options.get("deadline", 10.0)
        self.deadline = deadline.total_seconds() if isinstance(deadline, timedelta) else float(deadline)
        self.loop: dict[str, Any] = {"deadline_ms": round(self.deadline * 1000)}
        if options.get("max_attempts", 4) is not None:
            self.loop["max_attempts"] = options.get("max_attempts", 4)
        for key in ("backoff", "jitter"):
            if options.get(key) is not None:
                self.loop[key] = options.get(key)
        self.idempotent = options.get("idempotent")
        self.clock = options.get("clock", time.monotonic)
        self.now = options.get("now", time.time)
        self.random = options.get("random", _random.random)
        self.on_retry = options.get("on_retry")
        self.on_give_up = options.get("on_give_up")
        self.logger = options.get("logger", LOGGER)
        self.log_level = options.get("log_level", logging.DEBUG)
        _http.next_step(self.loop, {"attempts": 1, "elapsed_ms": 0}, {"kind": "response", "status": 200})  # bad input raises here

    def cap(self, request: httpx.Request, run: list[Any]) -> None:
        """Cuts the next attempt's timeouts (connect, read, write, pool) to the time left."""
        left = max(self.deadline - (self.clock() - run[0]), 0.0)
        timeout = request.extensions.get("timeout") or dict.fromkeys(("connect", "read", "write", "pool"))
        request.extensions["timeout"] = {k: left if v is None else min(v, left) for k, v in timeout.items()}

    def after(self, request: httpx.Request, result: Result, run: list[Any]) -> float | None:
        """The core's ruling on an attempt: the seconds to sleep before the next, or None to stop.
        ``run`` is the run's ``[start, attempts so far, previous delay in ms]``, updated here."""
        run[1] += 1
        start, attempts, previous = run
        if isinstance(result, httpx.Response):
            attempt: dict[str, Any] = {"kind": "response", "status": result.status_code}
            if "retry-after" in result.headers:
                attempt["retry_after"] = result.headers["retry-after"]
            reason = _run.MAYBE_SENT  # a response: the request was sent
        else:
            attempt = {"kind": "network_error"}
            reason = _run.NOT_SENT if isinstance(result, _NOT_SENT_ERRORS) else _run.MAYBE_SENT
        elapsed = self.clock() - start
        state: dict[str, Any] = {"attempts": attempts, "elapsed_ms": round(elapsed * 1000)}
        if previous is not None:
            state["previous_delay_ms"] = previous
        step = _http.next_step(self.loop, state, attempt, now_unix_ms=int(self.now() * 1000), random=self.random())
        if step["action"] == "retry":
            decision = decide(
                Request(_operation(request.method), timeout=self.deadline, elapsed=elapsed, attempts=attempts - 1, idempotent=self.idempotent),
                reason,
            )
            if not decision.is_retry:
                log_decision(self.logger, self.log_level, _operation(request.method), decision)
                step = {"action": "stop", "outcome": "transient", "rule": decision.rule, "section": decision.section, "cause": decision.cause}
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
            run[2] = step["delay_ms"]
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


def _operation(method: str) -> Operation:
    """The request as an RFC 0049 management call; a method the core does not list counts as POST
    (not idempotent)."""
    try:
        return Operation.management(method)
    except UnknownNameError:
        return Operation.management("POST")


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
        run = [self.steps.clock(), 0, None]
        while True:
            result: Result
            self.steps.cap(request, run)
            try:
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
        run = [self.steps.clock(), 0, None]
        while True:
            result: Result
            self.steps.cap(request, run)
            try:
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

"""Runner cost per call (one failure, then success, zero sleep), side by side in one run (make bench):
retrypolicy.run.Retrying (alone, and with a shared budget and breaker) vs a hand-written loop
calling decide (with the decision's log call, as the runner makes; and without) vs tenacity,
stamina and backoff. Every contender sleeps through the same no-op (stamina and backoff call
``time.sleep`` themselves: their module's ``time`` is given one whose ``sleep`` is that no-op).
Logging is off (WARNING) for all."""

from __future__ import annotations

import logging
import random
import time
import types
from typing import Any, Callable

import backoff
import stamina
import tenacity
from bench_decide import timed

import backoff._sync
import tenacity.nap

from retrypolicy import CircuitBreaker, Operation, Request, RetryBudget, RetryReason, decide
from retrypolicy.run import Retrying

LOG = logging.getLogger("retrypolicy.bench")
OP = Operation.kv("get")
REASON = RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT


def no_sleep(seconds: float) -> None:
    """Every peer sleeps through this (or is configured to wait 0 s)."""


class _NoSleepTime(types.ModuleType):
    """The ``time`` module with ``sleep`` replaced by ``no_sleep``."""

    sleep = staticmethod(no_sleep)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


# tenacity (so stamina, which sleeps through tenacity's default) and backoff look `time.sleep` up
# at each call in their own module: the same no-op sleep as the runner's.
tenacity.nap.time = backoff._sync.time = _NoSleepTime("time")  # type: ignore[attr-defined]


def flaky() -> Callable[[], int]:
    """A function that fails every other call: each run is one failed attempt, then one that returns."""
    state = [False]

    def call() -> int:
        state[0] = not state[0]
        if state[0]:
            raise ConnectionResetError("reset")
        return 1

    return call


def hand_loop(fn: Callable[[], int], log: bool) -> int:
    """The loop an adopter writes around decide (the issue's 16-24 lines): count, measure, draw,
    decide, log (RFC 0049 requires it; the log level is WARNING, so no line is written), sleep."""
    start = time.monotonic()
    attempts = 0
    while True:
        try:
            return fn()
        except ConnectionError:
            request = Request(OP, timeout=2.5, elapsed=time.monotonic() - start, attempts=attempts, random=random.random())
            decision = decide(request, REASON)
            if log:
                LOG.debug("attempt %d: %s", attempts, decision)
            if not decision.is_retry or decision.then_cancel:
                raise
            no_sleep((decision.delay_ms or 0) / 1000)
            attempts += 1


def contenders() -> dict[str, Callable[[], Any]]:
    """Each contender calls its own flaky function through its loop once."""
    stamina.instrumentation.set_on_retry_hooks([])  # no log lines: no contender logs here
    runner = Retrying(OP, timeout=2.5, sleep=no_sleep)
    # A retry quota refunds a retry that succeeds, and the breaker opens only past 90% failures:
    # neither refuses here, so both are asked and told on every run.
    guarded = Retrying(
        OP, timeout=2.5, sleep=no_sleep, budget=RetryBudget({"kind": "retry_quota"}),
        breaker=CircuitBreaker({"error_threshold_percentage": 90}),
    )
    f_runner, f_hand, f_log, f_ten, f_sta, f_bo, f_guarded = (flaky() for _ in range(7))
    ten = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(3),
        wait=tenacity.wait_none(),
        retry=tenacity.retry_if_exception_type(ConnectionError),
        sleep=no_sleep,
    )
    sta = stamina.retry(on=ConnectionError, attempts=3, wait_initial=0.0, wait_max=0.0, wait_jitter=0.0)(f_sta)
    bo = backoff.on_exception(backoff.constant, ConnectionError, max_tries=3, interval=0, jitter=None)(f_bo)
    return {
        "retrypolicy.run": lambda: runner(f_runner),
        "run + budget + breaker": lambda: guarded(f_guarded),
        "loop + decide + logging": lambda: hand_loop(f_log, True),
        "loop + decide, no logging": lambda: hand_loop(f_hand, False),
        "tenacity": lambda: ten(f_ten),
        "stamina": sta,
        "backoff": bo,
    }


def main() -> None:
    fns = contenders()
    for fn in fns.values():
        assert fn() == 1
    t = timed(fns, n=5_000, rounds=9)
    base, runner = t["loop + decide + logging"], t["retrypolicy.run"]
    print("runner per call (one failure, then success; zero sleep), best of 9 interleaved rounds:")
    print(f"{'contender':<28} {'us/call':>8} {'vs loop':>8} {'vs runner':>10}")
    for name, ns in t.items():
        print(f"{name:<28} {ns / 1000:>8.2f} {ns / base:>7.2f}x {ns / runner:>9.1f}x")
    peers = min(t[p] for p in ("tenacity", "stamina", "backoff"))
    print(f"runner/loop = {runner / base:.2f} (goal <= 1.5; {runner / t['loop + decide, no logging']:.2f} against the "
          f"loop without logging); with budget and breaker / runner = {t['run + budget + breaker'] / runner:.2f} "
          f"(goal <= 2); cheapest peer/runner = {peers / runner:.1f}")


if __name__ == "__main__":
    main()

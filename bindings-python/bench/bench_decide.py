"""ns per decide call vs a native no-op of the same signature and a pure-Python port (make bench)."""

from __future__ import annotations

import time
from typing import Any, Callable

import retrypolicy as rp
from retrypolicy import Operation, Request, RetryReason

N = 100_000
ROUNDS = 15


def timed(fns: dict[str, Callable[[], Any]], n: int = N, rounds: int = ROUNDS) -> dict[str, float]:
    """Best ns per call of each function; rounds interleave them so that a busy machine slows
    every function alike instead of skewing one ratio."""
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter_ns()
            for _ in range(n // 10):
                fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702
            best[name] = min(best[name], (time.perf_counter_ns() - t0) / n)
    return best


# The same rules in plain Python, written for this benchmark only (RFC 0049 best effort).
ALWAYS = {4, 5, 19}
NON_IDEM = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19}
CONTROLLED = (1, 10, 50, 100, 500, 1000)


class PyDecision:
    __slots__ = ("action", "delay_ms", "capped", "then_cancel", "rule")

    def __init__(self, action: str, delay_ms: int | None, capped: bool, then_cancel: bool, rule: str) -> None:
        self.action, self.delay_ms, self.capped, self.then_cancel, self.rule = action, delay_ms, capped, then_cancel, rule


def py_decide(attempts: int, elapsed: int, timeout: int, idempotent: bool, reason: int) -> PyDecision:
    if elapsed >= timeout:
        return PyDecision("no_retry", None, False, False, "deadline_passed")
    if reason == 0:
        return PyDecision("no_retry", None, False, False, "unknown_never_retried")
    if reason in ALWAYS:
        delay, rule = CONTROLLED[min(attempts, 5)], "always_retry_controlled_backoff"
    elif idempotent or reason in NON_IDEM:
        d = 1.0 * 2.0 ** min(attempts, 1100)
        delay, rule = (500 if d >= 500 else max(int(d), 1)), "best_effort_backoff"
    else:
        return PyDecision("no_retry", None, False, False, "best_effort_not_idempotent")
    remaining = timeout - elapsed
    return PyDecision("retry", min(delay, remaining), delay > remaining, delay >= remaining, rule)


def main() -> None:
    req = Request(Operation.kv("get"), attempts=3, elapsed=0.1, timeout=2.5)
    reason = RetryReason.KV_TEMPORARY_FAILURE
    assert rp.decide(req, reason).delay_ms == py_decide(3, 100, 2500, True, 8).delay_ms == 8
    native = rp._lowlevel.decide
    noop = getattr(rp._lowlevel, "_noop_decide")  # only in the bench build (make bench)
    t = timed(
        {
            "noop": lambda: noop(req, reason),
            "decide": lambda: native(req, reason),
            "python": lambda: py_decide(3, 100, 2500, True, 8),
            "loop": lambda: None,
        }
    )
    print(f"python decide: native {t['decide']:.0f} ns, native no-op {t['noop']:.0f} ns, "
          f"pure Python {t['python']:.0f} ns (empty lambda {t['loop']:.0f} ns included in each)")
    print(f"ratio decide/no-op = {t['decide'] / t['noop']:.2f} (goal <= 1.5); "
          f"pure Python/decide = {t['python'] / t['decide']:.2f} (goal >= 4)")


if __name__ == "__main__":
    main()

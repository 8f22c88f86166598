"""ns per decide call vs a native no-op of the same signature and a pure-Python port (make bench)."""

from __future__ import annotations

import time
from typing import Any, Callable

import retrypolicy as rp
from retrypolicy import Operation, Request, RetryReason

N = 300_000


def timed(fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(N // 10):
            fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702
        best = min(best, (time.perf_counter_ns() - t0) / N)
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
    noop = rp._lowlevel._noop_decide
    t_noop = timed(lambda: noop(req, reason))
    t_decide = timed(lambda: native(req, reason))
    t_py = timed(lambda: py_decide(3, 100, 2500, True, 8))
    t_loop = timed(lambda: None)
    print(f"python decide: native {t_decide:.0f} ns, native no-op {t_noop:.0f} ns, pure Python {t_py:.0f} ns "
          f"(empty lambda {t_loop:.0f} ns included in each)")
    print(f"ratio decide/no-op = {t_decide / t_noop:.2f} (goal <= 1.5); "
          f"pure Python/decide = {t_py / t_decide:.2f} (goal >= 4)")


if __name__ == "__main__":
    main()

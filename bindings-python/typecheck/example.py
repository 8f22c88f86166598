"""An SDK-style retry loop, type-checked with mypy --strict in CI."""

from __future__ import annotations

import time
from datetime import timedelta

import retrypolicy
from retrypolicy import Operation, Request, RetryReason


class NoLockRetries(retrypolicy.BestEffort):
    """Fail fast on KV_LOCKED, best effort for the rest."""

    def retry_after(self, request: Request, reason: RetryReason | str) -> timedelta | None:
        if reason is RetryReason.KV_LOCKED:
            return None
        return super().retry_after(request, reason)


def run(statuses: list[int]) -> str:
    """Replays KV statuses through classify + decide, without sleeping."""
    orchestrator = retrypolicy.Orchestrator(strategy=NoLockRetries())
    request = Request(Operation.kv("get"), timeout=timedelta(seconds=2.5))
    start = time.monotonic()
    for status in statuses:
        reason = retrypolicy.classify_kv("get", status).reason
        if reason is None:
            return "failed: not retryable"
        decision = orchestrator.decide(request, reason)
        if not decision.is_retry or decision.then_cancel:
            return f"failed: {decision.cause}"
        delay_ms: int = decision.delay_ms or 0
        request = request.replace(attempts=request.attempts + 1, elapsed=time.monotonic() - start + delay_ms / 1000)
    return "succeeded"


def two_steps(request: Request, reason: RetryReason) -> retrypolicy.Decision:
    """Asks a strategy between the core's two steps, as an event-loop host would."""
    before: retrypolicy.Decision | None = retrypolicy.decide_before_strategy(request, reason)
    if before is not None:
        return before
    answer: timedelta | None = NoLockRetries().retry_after(request, reason)
    return retrypolicy.decide_after_strategy(request, reason, answer)


if __name__ == "__main__":
    print(run([0x86, 0x07, 0x09]))
    print(two_steps(Request(Operation.kv("get"), timeout=2.5), RetryReason.KV_TEMPORARY_FAILURE))

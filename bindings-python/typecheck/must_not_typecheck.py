"""What mypy --strict must reject: each line ending in ``# E: <code>`` is an error with that code,
and no other line is (tests/test_types.py runs mypy on this file). Never run."""

from __future__ import annotations

from retrypolicy import Decision, Operation, Request, RetryBudget, RetryDecision, decide, http, mongodb
from retrypolicy.httpx import RetryTransport
from retrypolicy.run import Retrying

d: Decision = decide(Request(Operation.kv("get"), timeout=2.5), "KV_LOCKED")
seconds = d.delay_ms / 1000  # E: operator
if not d.is_retry:
    late = d.delay_ms + 1  # E: operator
    cause: str = d.cause
else:
    missing: str = d.cause  # E: assignment

loop: http.Loop = {"max_attempt": 3}  # E: typeddict-unknown-key
state: http.LoopState = {"attempts": 1}  # E: typeddict-item
step = http.next_step({"max_attempts": 3}, {"attempts": 1, "elapsed_ms": 0}, {"kind": "response", "status": "503"})  # E: typeddict-item
wait = step["delay_ms"]  # E: typeddict-item
if step["action"] == "retry":
    after: int = step["delay_ms"]
    outcome = step["outcome"]  # E: typeddict-item

mongodb.transaction_labels("commitTransaction", {"kind": "network"})  # E: arg-type
mongodb.decide({"operation": {"name": "insert_one"}}, {"code": 91})  # E: typeddict-item
labels: int = mongodb.classify_error({"code": 91})["class"]  # E: assignment


def on_retry(decision: RetryDecision, exc: Exception) -> None:
    """A hook for decisions to retry only."""


Retrying(Operation.kv("get"), timeout=1.0, on_retry=on_retry)
Retrying(Operation.kv("get"), timeout=1.0, on_give_up=on_retry)  # E: arg-type
later = d.delay.total_seconds()  # E: union-attr

budget = RetryBudget({"kind": "token_bucket"})
budget.record(0, "retried")  # E: arg-type
budget.permit(0, cause="throttle")  # E: arg-type
RetryTransport(budget={"kind": "token_bucket"})  # E: arg-type
spent: int = d.refused_delay_ms  # E: assignment

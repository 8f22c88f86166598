"""What mypy --strict must reject: each line ending in ``# E: <code>`` is an error with that code,
and no other line is (tests/test_types.py runs mypy on this file). Never run."""

from __future__ import annotations

import httpx
from pymongo.client_session import ClientSession

from retrypolicy import CircuitBreaker, Decision, Operation, Request, RetryBudget, RetryDecision, aws, decide, grpc, http, mongodb, policy_from_dict
from retrypolicy.httpx import RetryTransport, step_of
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

# Issue 30: the documents, snapshots, the driver's session and the transports' last step are typed.
RetryBudget({"kind": "token_bucket", "max_token": 10})  # E: arg-type
balance: str = budget.snapshot()["balance"]  # E: assignment
CircuitBreaker({"volume_threshold": "4"})  # E: arg-type
policy_from_dict({"strategy": "fail_slow"})  # E: typeddict-item
last: str = step_of(httpx.Response(200))  # E: assignment


def by_number(session: int) -> int:
    """A callback for another session type than the one given."""
    return session


def given(session: ClientSession) -> None:
    """The callback must take the session it is given."""
    mongodb.run_transaction(session, by_number)  # E: arg-type
    moved: str = mongodb.run_transaction(session, lambda s: 1)  # E: assignment

# Issue 28: gRPC's and AWS's states, attempts, events and documents are typed.
retry_state: grpc.RetryState = {"attempts": 1, "retry": 2}  # E: typeddict-unknown-key
grpc.grpc_retry(None, {"attempts": 1}, {"status": "UNAVAILABLE"}, jitter="half")  # E: arg-type
grpc.grpc_retry(None, {"attempts": 1}, {"status": "unavailable"})  # E: typeddict-item
hedging = grpc.HedgingPolicy({"maxAttempts": 2})
grpc.grpc_hedge(hedging, None, "begin")  # E: arg-type
grpc_decision = grpc.grpc_retry(None, {"attempts": 1}, {"status": 14})
waited: int = grpc_decision.delay_ms  # E: assignment
if grpc_decision.action == "retried":  # E: comparison-overlap
    pass
grpc.RetryPolicy({"maxAttempts": 3})  # E: typeddict-item
aws.aws_decide(None, 1, {"status": "503"})  # E: typeddict-item
aws.AwsRetryConfig({"mode": "fast"})  # E: arg-type
aws.aws_decide(aws.AwsRetryConfig(), 1, {"status": 503}, budget_verdict={"permitted": False})  # E: arg-type
rate: int = aws.AdaptiveRateLimiter().record(0, True).fill_rate  # E: assignment
charged: aws.Cause = aws.aws_decide(None, 1, {"status": 503}).cause  # E: assignment

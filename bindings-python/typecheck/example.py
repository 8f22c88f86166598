"""An SDK-style retry loop, the decision kinds, an HTTP saga step and a MongoDB transaction
replay, type-checked with mypy --strict in CI."""

from __future__ import annotations

import time
from datetime import timedelta

import retrypolicy
from retrypolicy import NoRetryDecision, Operation, Request, RetryDecision, RetryReason, http, mongodb


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
        if not decision.is_retry:
            return f"failed: {decision.cause}"
        # Narrowed to RetryDecision: delay_ms is an int here.
        if decision.then_cancel:
            return f"timed out after {decision.delay_ms} ms"
        request = request.replace(attempts=request.attempts + 1, elapsed=time.monotonic() - start + decision.delay_ms / 1000)
    return "succeeded"


def two_steps(request: Request, reason: RetryReason) -> retrypolicy.Decision:
    """Asks a strategy between the core's two steps, as an event-loop host would."""
    before: retrypolicy.Decision | None = retrypolicy.decide_before_strategy(request, reason)
    if before is not None:
        return before
    answer: timedelta | None = NoLockRetries().retry_after(request, reason)
    return retrypolicy.decide_after_strategy(request, reason, answer)


def describe(decision: retrypolicy.Decision) -> str:
    """The two kinds of decision, told apart by a class pattern."""
    match decision:
        case RetryDecision(delay_ms=ms):
            return f"retry in {ms / 1000:.3f} s"
        case NoRetryDecision(cause=cause):
            return f"no retry: {cause}"
    raise AssertionError(decision)


def saga_step(statuses: list[int]) -> str:
    """Seed 004's bounded loop over HTTP results, with the TypedDicts of retrypolicy.http."""
    loop: http.Loop = {"max_attempts": 4, "deadline_ms": 2_500, "method": "POST", "idempotent": True}
    state: http.LoopState = {"attempts": 0, "elapsed_ms": 0}
    for status in statuses:
        state["attempts"] += 1
        attempt: http.ResponseAttempt = {"kind": "response", "status": status}
        if status == 429:
            attempt["retry_after"] = "1"
        step = http.next_step(loop, state, attempt)
        if step["action"] == "stop":
            return f"{step['outcome']} ({step['rule']})"
        state["elapsed_ms"] += step["delay_ms"]  # an int: the step is a RetryStep here
        state["previous_delay_ms"] = step["delay_ms"]
    return "no result"


def transaction() -> list[str]:
    """withTransaction replayed over events: a transient error, then a commit."""
    transient: mongodb.MongoError = {"kind": "network", "labels": ["TransientTransactionError"]}
    events: list[mongodb.TransactionEvent] = [
        {"event": "begin"},
        {"event": "callback_raised", "session": "in_progress", "error": transient, "elapsed_ms": 10, "random": 0.5},
        {"event": "callback_returned", "session": "in_progress"},
        {"event": "commit_succeeded"},
    ]
    result = mongodb.with_transaction(events)
    last = result["last"]
    assert last is not None and last["action"] == "return"
    report = mongodb.idempotency(op="updateOne", filter={"_id": 1}, update={"$inc": {"n": 1}})
    decision = mongodb.decide({"operation": {"name": "insertOne"}}, {"kind": "network"})
    retry_as = decision["retryable_as"] if decision["action"] == "retry" else "surface"
    return result["actions"] + [report["rule"], retry_as]


def budgeted(now_ms: int) -> str:
    """A shared budget and breaker consulted by hand; a refusal is a NoRetryDecision."""
    budget = retrypolicy.RetryBudget({"kind": "retry_quota", "capacity": 5, "retry_cost": 5})
    breaker = retrypolicy.CircuitBreaker({"volume_threshold": 2})
    gate: retrypolicy.BreakerVerdict = breaker.permit(now_ms)
    if not gate.permitted and gate.reason is not None:
        return f"held back: {gate.reason.name}"
    budget.record(now_ms, "request")
    budget.record(now_ms, "failure")
    breaker.record(now_ms, "failure")
    verdict: retrypolicy.BudgetVerdict = budget.try_retry(now_ms, "timeout")
    request = Request(Operation.kv("get"), timeout=2.5)
    decision = retrypolicy.decide_with_budget(request, RetryReason.KV_LOCKED, verdict=verdict)
    if isinstance(decision, NoRetryDecision) and decision.cause == "budget_exhausted":
        refused: int | None = decision.refused_delay_ms
        return f"{decision.rule}: {verdict.balance} left, {refused} ms refused"
    kept = retrypolicy.RetryBudget.restore(budget.document, budget.snapshot())
    return f"{describe(decision)}; {kept.permit(now_ms).balance} left; {breaker.state(now_ms)}"


if __name__ == "__main__":
    print(run([0x86, 0x07, 0x09]))
    print(two_steps(Request(Operation.kv("get"), timeout=2.5), RetryReason.KV_TEMPORARY_FAILURE))
    print(describe(retrypolicy.decide(Request(Operation.kv("upsert"), timeout=1), "SOCKET_CLOSED_WHILE_IN_FLIGHT")))
    print(saga_step([503, 429, 201]), saga_step([503, 503, 503, 503]))
    print(transaction())
    print(budgeted(0))

"""RetryBudget and CircuitBreaker as Python objects: verdicts, snapshots, typed errors, a budget's
refusal as a decision, and both shared between threads."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import retrypolicy as rp

QUOTA = {"kind": "retry_quota", "capacity": 500, "retry_cost": 5, "timeout_cost": 10, "no_retry_increment": 1}
BREAKER = {"volume_threshold": 4, "error_threshold_percentage": 50, "sleep_window_ms": 1000, "canary_timeout_ms": 500}
A6 = "gRFC A6 Client Retries, Throttling Retry Attempts and Hedged RPCs"


def test_token_bucket_throttles_at_half_as_grfc_a6_says() -> None:
    budget = rp.RetryBudget({"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1})
    permitted = []
    for t in range(6):
        budget.record(t, "failure")
        permitted.append(budget.permit(t).permitted)
    assert permitted == [True, True, True, True, False, False]  # 9, 8, 7, 6 tokens; then 5: at half
    v = budget.permit(6)
    assert (v.cause, v.kind, v.rule, v.balance) == ("budget_exhausted", "token_bucket", "token_bucket_at_or_below_half", 4000)
    assert v.source.startswith(A6)
    assert budget.snapshot() == {"version": 1, "kind": "token_bucket", "balance": 4000}
    assert budget.document == {"version": 1, "kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}


def test_retry_quota_charges_a_timeout_more_and_refunds_on_success() -> None:
    budget = rp.RetryBudget(QUOTA)
    assert budget.try_retry(0, "timeout").balance == 490
    assert budget.try_retry(0).balance == 485
    budget.record(1, "success", after_retry="timeout")
    assert budget.snapshot()["balance"] == 495
    assert budget.permit(2).balance == 495  # permit changes nothing


def test_a_snapshot_survives_json_and_restores_the_same_budget() -> None:
    budget = rp.RetryBudget({"kind": "percentage", "percent": 20, "ttl_ms": 10000, "min_retries_per_sec": 0})
    for t in range(0, 5000, 100):
        budget.record(t, "request")
    for t in range(5):
        budget.try_retry(5000 + t)
    kept = json.loads(json.dumps(budget.snapshot()))
    again = rp.RetryBudget.restore(budget.document, kept)
    assert again.snapshot() == budget.snapshot()
    assert again.permit(6000).to_json() == budget.permit(6000).to_json()


def test_breaker_trips_lets_one_canary_through_and_closes_on_its_success() -> None:
    breaker = rp.CircuitBreaker(BREAKER)
    for t in range(4):
        breaker.record(t, "failure")
    refused = breaker.permit(10)
    assert (refused.permitted, refused.state, refused.rule) == (False, "open", "breaker_open")
    assert refused.reason is rp.RetryReason.CIRCUIT_BREAKER_OPEN
    canary = breaker.permit(1004)  # more than the 1000 ms sleep window after opening at 3
    assert (canary.permitted, canary.canary, canary.state, canary.reason) == (True, True, "half_open", None)
    assert not breaker.permit(1005).permitted
    restored = rp.CircuitBreaker.restore(BREAKER, json.loads(json.dumps(breaker.snapshot())))
    breaker.record(1100, "success")
    assert breaker.state(1100) == "closed"
    assert restored.state(1100) == "half_open" and restored.state(1504) == "open"  # the canary timed out


def test_breaker_defaults_are_couchbase_s() -> None:
    doc = rp.CircuitBreaker().document
    assert (doc["volume_threshold"], doc["error_threshold_percentage"], doc["sleep_window_ms"]) == (20, 50, 5000)


@pytest.mark.parametrize(
    ("call", "code", "field"),
    [
        (lambda: rp.RetryBudget({"kind": "token_bucket", "max_tokens": 0}), "out_of_range", "budget.max_tokens"),
        (lambda: rp.RetryBudget({"kind": "token_bucket", "capacity": 5}), "unknown_field", "budget.capacity"),
        (lambda: rp.RetryBudget({"max_tokens": 10}), "missing_field", "budget.kind"),
        (lambda: rp.RetryBudget({"kind": "token_bucket", "max_tokens": float("nan")}), "out_of_range", "max_tokens"),
        (lambda: rp.RetryBudget.restore(QUOTA, {"kind": "retry_quota", "balance": 501}), "out_of_range", "state.balance"),
        (lambda: rp.RetryBudget.restore(QUOTA, {"kind": "token_bucket", "balance": 1}), "unknown_name", "state.kind"),
        (lambda: rp.RetryBudget(QUOTA).permit(-1), "invalid_duration", "now_ms"),
        # a value of another type is invalid_type, as JSON's true or null for `at_ms` is (the
        # differential test found None answered invalid_duration)
        (lambda: rp.RetryBudget(QUOTA).permit(True), "invalid_type", "now_ms"),
        (lambda: rp.RetryBudget(QUOTA).permit(None), "invalid_type", "now_ms"),
        (lambda: rp.RetryBudget(QUOTA).permit([]), "invalid_type", "now_ms"),
        (lambda: rp.RetryBudget(QUOTA).permit("x"), "invalid_duration", "now_ms"),
        (lambda: rp.RetryBudget(QUOTA).permit(1.5), "invalid_duration", "now_ms"),
        (lambda: rp.RetryBudget(QUOTA).permit(0, "throttle"), "unknown_name", "cause"),
        (lambda: rp.RetryBudget(QUOTA).record(0, "explode"), "unknown_name", "event"),
        (lambda: rp.RetryBudget(QUOTA).record(0, "failure", cause="timeout"), "unknown_field", "cause"),
        (lambda: rp.RetryBudget(QUOTA).record(0, "retry", after_retry="error"), "unknown_field", "after_retry"),
        (lambda: rp.CircuitBreaker({"error_threshold_percentage": 101}), "out_of_range", "breaker.error_threshold_percentage"),
        (lambda: rp.CircuitBreaker({"sleep_window_ms": -5}), "invalid_duration", "breaker.sleep_window_ms"),
        (lambda: rp.CircuitBreaker.restore(None, {"state": "open", "total": 0, "failures": 0}), "missing_field", "state.since_ms"),
        # No snapshot is no state to restore (issue 31 #13), not a fresh object: as in Node.
        (lambda: rp.RetryBudget.restore(QUOTA, None), "missing_field", "state"),
        (lambda: rp.CircuitBreaker.restore(BREAKER, None), "missing_field", "state"),
        (lambda: rp.CircuitBreaker.restore(None, None), "missing_field", "state"),
        (lambda: rp.CircuitBreaker().record(0, "retry"), "unknown_name", "outcome"),
        (lambda: rp.CircuitBreaker().permit("soon"), "invalid_duration", "now_ms"),
        (lambda: rp.BudgetVerdict("budget_empty"), "unknown_name", "rule"),
        (lambda: rp.BudgetVerdict("retry_quota_exhausted", -1), "out_of_range", "balance"),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_field(call: Any, code: str, field: str) -> None:
    with pytest.raises(rp.RetryPolicyError) as info:
        call()
    assert info.value.code == code
    assert info.value.field == field


REQUEST = rp.Request(rp.Operation.kv("get"), timeout=2.5)


def test_a_refused_retry_is_a_no_retry_decision_citing_the_budget() -> None:
    verdict = rp.BudgetVerdict("retry_quota_exhausted", 2)
    d = rp.decide_with_budget(REQUEST, "KV_LOCKED", None, verdict)
    assert isinstance(d, rp.NoRetryDecision) and not d.is_retry and d.delay_ms is None
    assert (d.cause, d.rule, d.reason, d.refused_delay_ms) == ("budget_exhausted", "retry_quota_exhausted", rp.RetryReason.KV_LOCKED, 1)
    assert d.section.startswith("AWS SDKs and Tools Reference Guide")
    assert d.budget is not None and d.budget.to_json() == verdict.to_json()
    assert "budget exhausted" in str(d)
    sentence = rp.explain_with_budget(REQUEST, "KV_LOCKED", None, verdict)
    assert "the retry quota holds 2 tokens, fewer than the retry costs" in sentence


def test_a_permitting_verdict_or_none_leaves_decide_s_decision() -> None:
    plain = rp.decide(REQUEST, "KV_LOCKED").to_json()
    assert rp.decide_with_budget(REQUEST, "KV_LOCKED").to_json() == plain
    permitting = rp.RetryBudget(QUOTA).permit(0)
    d = rp.decide_with_budget(REQUEST, "KV_LOCKED", verdict=permitting)
    assert d.to_json() == plain and d.budget is None and d.refused_delay_ms is None


def _in_threads(n: int, work: Any) -> None:
    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_sharing_a_budget_never_get_more_retries_than_one_thread() -> None:
    alone = rp.RetryBudget(QUOTA)
    alone_permitted = sum(alone.try_retry(0).permitted for _ in range(8 * 50))
    assert alone_permitted == 500 // 5

    shared = rp.RetryBudget(QUOTA)
    permitted: list[bool] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [shared.try_retry(0).permitted for _ in range(50)]
        with lock:
            permitted.extend(mine)

    _in_threads(8, work)
    assert len(permitted) == 8 * 50
    assert sum(permitted) == alone_permitted
    assert shared.snapshot()["balance"] == 0


def test_threads_sharing_a_breaker_get_one_canary() -> None:
    breaker = rp.CircuitBreaker.restore(BREAKER, {"state": "open", "since_ms": 0, "window_start_ms": 0, "total": 4, "failures": 4})
    canaries: list[bool] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [breaker.permit(2000).canary for _ in range(50)]
        with lock:
            canaries.extend(mine)

    _in_threads(8, work)
    assert len(canaries) == 400 and sum(canaries) == 1

"""gRPC (gRFC A6) and the AWS retry modes through the typed API: every fixture of the six functions
(and the runs with grpc and aws rules) wherever it lies, the runner failing each expectation
changed on purpose and never calling the JSON API; A6's and the SDKs' numbers worked out by hand;
a shared bucket and limiter under threads; bad input named; the TypedDicts against the fixtures."""

from __future__ import annotations

import copy
import json
import pathlib
import re
import subprocess
import sys
import threading
from typing import Any

import pytest

import retrypolicy as rp
from retrypolicy import aws, grpc
from test_spec_fixtures import check
from test_types import _problems

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUNCTIONS = {"grpc_service_config", "grpc_retry", "grpc_hedge", "aws_retry", "aws_retry_run", "aws_rate_limiter_run"}


def _files() -> list[pathlib.Path]:
    """The corpus's fixture files of the six functions and of the runs with grpc and aws rules."""
    return [
        path
        for path in sorted((ROOT / "spec-fixtures" / "cases").rglob("*.json"))
        if json.loads(path.read_text())["function"] in FUNCTIONS or path.stem == "run_grpc_aws"
    ]


def _cases() -> list[Any]:
    return [
        pytest.param(doc["function"], case, id=f"{path.stem}::{case['id']}")
        for path in _files()
        for doc in [json.loads(path.read_text())]
        for case in doc["cases"]
    ]


CASES = _cases()


def test_every_function_has_its_fixtures() -> None:
    functions = {p.values[0] for p in CASES}
    assert functions == FUNCTIONS | {"run"}
    assert len(CASES) >= 49 + 197 + 10


@pytest.fixture
def no_json_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON API refuses every call: the typed adapters must not need it."""

    def refuse(function: str, payload: str) -> str:
        raise AssertionError(f"the JSON API was called ({function})")

    monkeypatch.setattr(rp._lowlevel, "call_json", refuse)


def test_the_refusal_stops_the_json_api(no_json_api: None) -> None:
    with pytest.raises(AssertionError, match="the JSON API was called"):
        rp.http.classify(503)


@pytest.mark.parametrize(("function", "case"), CASES)
def test_each_case_passes_through_the_typed_api(function: str, case: dict[str, Any], no_json_api: None) -> None:
    check(function, case)


def _changed(value: Any) -> Any:
    """A value unequal to ``value`` under the runner's comparison, of a nearby shape."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, None]
    if isinstance(value, dict):
        return {**value, "changed": True}
    return 0


def _wrong_versions(case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The case with one expectation changed, for each expectation it has."""
    out = []
    if "expect_error" in case:
        wrong = copy.deepcopy(case)
        wrong["expect_error"] = "unknown_reason" if case["expect_error"] != "unknown_reason" else "invalid_type"
        out.append(("expect_error", wrong))
        if "error_field" in case:
            wrong = copy.deepcopy(case)
            wrong["error_field"] = "no_such_field"
            out.append(("error_field", wrong))
    for key, value in case.get("expect", {}).items():
        wrong = copy.deepcopy(case)
        wrong["expect"][key] = _changed(value)
        out.append((key, wrong))
    return out


def test_the_runner_fails_every_expectation_changed_on_purpose() -> None:
    checked = 0
    passed_wrong = []
    for p in CASES:
        function, case = p.values
        for key, wrong in _wrong_versions(case):
            try:
                check(function, wrong)
            except (AssertionError, pytest.fail.Exception):
                checked += 1
            else:
                passed_wrong.append(f"{case['id']}: {key}")
    assert passed_wrong == []
    assert checked >= 600


# ---- gRPC, by hand ----------------------------------------------------------------------------------

GREETER = {
    "methodConfig": [
        {
            "name": [{"service": "helloworld.Greeter"}],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": ".1s",
                "maxBackoff": "1s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE", 13],
            },
        },
        {"name": [{"service": "helloworld.Greeter", "method": "Stream"}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.5s"}},
        {"name": [{}]},
    ],
    "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1},
    "loadBalancingPolicy": "round_robin",
}


def _greeter_policy() -> grpc.RetryPolicy:
    policy = grpc.ServiceConfig(GREETER).policy_for("helloworld.Greeter", "SayHello")
    assert isinstance(policy, grpc.RetryPolicy)
    return policy


def test_a_service_config_matches_methods_and_reads_its_policies() -> None:
    config = grpc.ServiceConfig(GREETER)
    assert config.matched("helloworld.Greeter", "SayHello") == "service"
    assert config.matched("helloworld.Greeter", "Stream") == "exact"
    assert config.matched("other.Service") == "default"
    assert config.policy_for("other.Service", "Call") is None  # the default config has no policy
    p = _greeter_policy()
    assert (p.max_attempts, p.initial_backoff_ns, p.max_backoff_ns, p.backoff_multiplier) == (4, 100_000_000, 1_000_000_000, 2.0)
    assert p.retryable_status_codes == ["INTERNAL", "UNAVAILABLE"]  # 13 by number, listed by number
    h = config.policy_for("helloworld.Greeter", "Stream")
    assert isinstance(h, grpc.HedgingPolicy)
    assert (h.max_attempts, h.hedging_delay_ns, h.non_fatal_status_codes) == (3, 500_000_000, [])
    assert config.throttling == {"version": 1, "kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}
    assert grpc.ServiceConfig({}).throttling is None and grpc.ServiceConfig({}).matched("s", "m") is None
    # A6's cap of 5 attempts, and a client's own.
    seven = {**GREETER["methodConfig"][0]["retryPolicy"], "maxAttempts": 7}  # type: ignore[dict-item]
    assert grpc.RetryPolicy(seven).max_attempts == 5
    assert grpc.RetryPolicy(seven, max_attempts_cap=6).max_attempts == 6


def test_the_backoff_doubles_from_the_initial_and_stops_at_the_max() -> None:
    p = _greeter_policy()
    # A6's text before 2024-08-29, "full": random(0, min(0.1 s x 2^n, 1 s)): n = 0 -> 100 ms x 0.5;
    # n = 2 -> 400 ms x 0.25; n = 5 -> 1 s x 0.5.
    cases = [(0, 0.5, 50), (2, 0.25, 100), (5, 0.5, 500)]
    for since, r, want in cases:
        d = grpc.grpc_retry(p, {"attempts": 1, "retries_since_pushback": since}, {"status": "UNAVAILABLE"}, r, "full")
        assert (d.action, d.delay_ms, d.rule) == ("retry", want, "exponential_backoff")
    # A6's text since 2024-08-29, the default: 100 ms x (0.8 + 0.4 x 0.5) = 100 ms; r = 0 -> 80 ms;
    # 1 s (maxBackoff) x (0.8 + 0.4 x 0.999) = 1,199.6 ms, floored: past maxBackoff, as A6 allows.
    for since, r, want in [(0, 0.5, 100), (0, 0.0, 80), (5, 0.999, 1199)]:
        d = grpc.grpc_retry(p, {"attempts": 1, "retries_since_pushback": since}, {"status": 14}, r)
        assert d.delay_ms == want
    d = grpc.grpc_retry(p, {"attempts": 1}, {"status": 14}, 0.5, "plus_minus_20_percent")
    assert d.delay_ms == 100
    assert d.next == {"attempts": 2, "retries": 1, "retries_since_pushback": 1, "elapsed_ms": 0, "deadline_ms": None}


def test_pushback_commit_transparent_retry_and_the_last_attempt() -> None:
    p = _greeter_policy()
    d = grpc.grpc_retry(p, {"attempts": 1, "retries_since_pushback": 3}, {"status": "UNAVAILABLE", "pushback": ["250"]})
    assert (d.action, d.delay_ms, d.pushback_ms, d.rule) == ("retry", 250, 250, "pushback")
    assert d.next is not None and d.next["retries_since_pushback"] == 0
    d = grpc.grpc_retry(p, {"attempts": 1}, {"status": "UNAVAILABLE", "pushback": ["-1"]})
    assert (d.action, d.rule, d.throttle) == ("fail", "pushback_negative", "failure")
    d = grpc.grpc_retry(p, {"attempts": 1}, {"status": "UNAVAILABLE", "committed": True}, 0.5)
    assert (d.action, d.rule, d.throttle) == ("fail", "committed", None)
    d = grpc.grpc_retry(None, {"attempts": 1}, {"status": "UNAVAILABLE", "reach": "never_sent"})
    assert (d.action, d.delay_ms, d.transparent, d.rule) == ("retry", 0, True, "transparent_never_sent")
    assert d.next is not None and (d.next["attempts"], d.next["retries"]) == (1, 1)
    d = grpc.grpc_retry(p, {"attempts": 4}, {"status": "UNAVAILABLE"}, 0.5)
    assert (d.action, d.rule, d.delay_ms, d.next) == ("fail", "max_attempts_reached", None, None)
    d = grpc.grpc_retry(p, {"attempts": 1, "elapsed_ms": 950, "deadline_ms": 1000}, {"status": 14}, 0.5)
    assert (d.action, d.rule) == ("fail", "deadline_before_retry")  # 100 ms (0.8 + 0.4 x 0.5) reaches it
    d = grpc.grpc_retry(p, {"attempts": 2}, {"status": "OK"})
    assert (d.action, d.rule, d.throttle) == ("succeeded", "ok", "success")


def test_the_throttling_bucket_is_told_and_asked() -> None:
    p = _greeter_policy()
    document = grpc.ServiceConfig(GREETER).throttling
    assert document is not None
    bucket = rp.RetryBudget(document)  # 10 tokens; retries only above half
    rules = []
    for now in range(5):
        d = grpc.grpc_retry(p, {"attempts": 1}, {"status": "UNAVAILABLE"}, 0.5, throttling=bucket, now_ms=now)
        rules.append(d.rule)
    # 9, 8, 7, 6 tokens: retried; the fifth failure leaves 5, at half: refused by the bucket.
    assert rules == ["exponential_backoff"] * 4 + ["token_bucket_at_or_below_half"]
    assert d.action == "fail" and d.budget is not None and not d.budget.permitted and d.budget.balance == 5000
    grpc.grpc_retry(p, {"attempts": 1}, {"status": "OK"}, throttling=bucket)
    assert bucket.snapshot()["balance"] == 5100  # a success adds tokenRatio
    kept = bucket.snapshot()
    assert rp.RetryBudget.restore(document, kept).snapshot() == kept


def test_one_bucket_shared_by_eight_threads_counts_every_failure_once() -> None:
    p = _greeter_policy()
    bucket = rp.RetryBudget({"kind": "token_bucket", "max_tokens": 1000, "token_ratio": 0.1})
    retried = []

    def calls() -> None:
        for _ in range(100):
            d = grpc.grpc_retry(p, {"attempts": 1}, {"status": "UNAVAILABLE"}, 0.5, throttling=bucket)
            retried.append(d.action == "retry")

    threads = [threading.Thread(target=calls) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Each decision records its failure and asks in one locked call: the k-th failure leaves
    # 1000 - k tokens, retried while above 500, whatever the interleaving.
    assert (len(retried), sum(retried)) == (800, 499)
    assert bucket.snapshot()["balance"] == 200_000


def test_a_hedged_call_follows_a6s_schedule() -> None:
    h = grpc.HedgingPolicy({"maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE"]})
    s = grpc.grpc_hedge(h, None, "start")
    assert (s.send, s.next_hedge_in_ms, s.rule) == (1, 500, "original_attempt")
    s = grpc.grpc_hedge(h, s.state, {"event": "attempt_ended", "attempt": {"status": "UNAVAILABLE"}})
    assert (s.send, s.next_hedge_in_ms, s.rule, s.throttle) == (1, 500, "non_fatal_status", "failure")
    s = grpc.grpc_hedge(h, s.state, {"event": "hedge_due"})
    assert (s.send, s.state["sent"], s.state["outstanding"]) == (1, 3, 2)
    s = grpc.grpc_hedge(h, s.state, {"event": "attempt_ended", "attempt": {"status": "INVALID_ARGUMENT"}})
    assert (s.end, s.status, s.cancel_others, s.rule) == ("failed", "INVALID_ARGUMENT", True, "fatal_status")
    with pytest.raises(rp.OutOfRangeError) as e:
        grpc.grpc_hedge(h, s.state, "hedge_due")  # the call is over
    assert e.value.field == "event"


def test_grpc_bad_input_is_named() -> None:
    bad_policy = {**GREETER, "methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAttempts": 4}}]}
    errors: list[tuple[Any, type[rp.RetryPolicyError], str]] = [
        (lambda: grpc.ServiceConfig(bad_policy), rp.MissingFieldError, "service_config.methodConfig[0].retryPolicy.initialBackoff"),
        (lambda: grpc.ServiceConfig(GREETER, max_attempts_cap=1), rp.OutOfRangeError, "max_attempts_cap"),
        (lambda: grpc.RetryPolicy({"maxAttempts": 2.5}), rp.OutOfRangeError, "retry_policy.maxAttempts"),  # type: ignore[typeddict-item]
        (lambda: grpc.HedgingPolicy({"maxAttempts": 2, "hedgingDelay": "-1s"}), rp.OutOfRangeError, "hedging_policy.hedgingDelay"),
        (lambda: grpc.grpc_retry(None, {"attempts": 0}, {"status": 14}), rp.OutOfRangeError, "state.attempts"),
        (lambda: grpc.grpc_retry(None, {"attempts": 1}, {"status": "NOPE"}), rp.OutOfRangeError, "attempt.status"),
        (lambda: grpc.grpc_retry(_greeter_policy(), {"attempts": 1}, {"status": 14}), rp.MissingFieldError, "random"),
        (lambda: grpc.grpc_retry(_greeter_policy(), {"attempts": 1}, {"status": 14}, 1.0), rp.InvalidRandomError, "random"),
        (lambda: grpc.grpc_retry(None, {"attempts": 1}, {"status": 14}, jitter="half"), rp.UnknownNameError, "jitter"),  # type: ignore[arg-type]
        (lambda: grpc.grpc_retry(None, {"attempts": 1}, {"status": 14}, now_ms=-1), rp.InvalidDurationError, "now_ms"),
        (lambda: grpc.grpc_retry("policy", {"attempts": 1}, {"status": 14}), rp.InvalidTypeError, "policy"),  # type: ignore[arg-type]
        (lambda: grpc.grpc_retry(None, {"attempts": 1}, {"status": 14}, throttling={}), rp.InvalidTypeError, "throttling"),  # type: ignore[arg-type]
        (lambda: grpc.grpc_hedge(_greeter_policy(), None, "start"), rp.InvalidTypeError, "policy"),  # type: ignore[arg-type]
        (lambda: grpc.grpc_hedge(grpc.HedgingPolicy({"maxAttempts": 2}), None, "attempt_ended"), rp.MissingFieldError, "event.attempt"),
        (lambda: grpc.grpc_hedge(grpc.HedgingPolicy({"maxAttempts": 2}), None, "begin"), rp.UnknownNameError, "event"),  # type: ignore[arg-type]
        # an event of another kind is named as the argument itself (was event.(document))
        (lambda: grpc.grpc_hedge(grpc.HedgingPolicy({"maxAttempts": 2}), None, 5), rp.InvalidTypeError, "event"),  # type: ignore[arg-type]
        # a key the attempt does not have is named inside it (the differential test found event.(document))
        (
            lambda: grpc.grpc_hedge(
                grpc.HedgingPolicy({"maxAttempts": 2}),
                None,
                {"event": "attempt_ended", "attempt": {"status": 14, "random": 1.0}},  # type: ignore[typeddict-unknown-key]
            ),
            rp.UnknownFieldError,
            "event.attempt.random",
        ),
        (lambda: grpc.grpc_hedge(grpc.HedgingPolicy({"maxAttempts": 2}), {"sent": 1}, "hedge_due"), rp.MissingFieldError, "state.outstanding"),  # type: ignore[typeddict-item]
        (lambda: grpc.ServiceConfig(GREETER).policy_for(7), rp.InvalidTypeError, "service"),  # type: ignore[arg-type]
    ]
    for call, cls, field in errors:
        with pytest.raises(cls) as e:
            call()
        assert e.value.field == field, str(e.value)
        assert field in str(e.value)


# ---- AWS, by hand -----------------------------------------------------------------------------------


def test_standard_mode_by_hand() -> None:
    # Classic: floor(r x min(1 s x 2^(attempts - 1), 20 s)).
    d = aws.aws_decide(None, 1, {"status": 503}, 0.5)
    assert (d.action, d.is_retry, d.delay_ms, d.ceiling_ms, d.rule, d.cause) == ("retry", True, 500, 1000, "transient_status", "error")
    d = aws.aws_decide(aws.AwsRetryConfig({"max_attempts": 9}), 6, {"status": 503}, 0.5)
    assert (d.delay_ms, d.ceiling_ms) == (10_000, 20_000)  # 32 s capped at MAX_BACKOFF
    d = aws.aws_decide(None, 3, {"status": 503}, 0.5)
    assert (d.action, d.rule, d.delay_ms, d.max_attempts) == ("no_retry", "max_attempts_reached", None, 3)
    d = aws.aws_decide(None, 1, {"status": 400, "code": "ThrottlingException"}, 0.5)
    assert (d.throttling, d.cause, d.rule) == (True, "throttling", "throttling_error_code")
    d = aws.aws_decide(None, 1, {"status": 404, "code": "NoSuchKey"}, 0.5)
    assert (d.action, d.retryable, d.cause, d.rule) == ("no_retry", False, None, "not_retryable")
    d = aws.aws_decide(None, 1, {"timeout": True}, 0.5)
    assert (d.action, d.cause) == ("retry", "timeout")
    # 2026, DynamoDB: a 25 ms base and 4 attempts.
    dynamodb = aws.AwsRetryConfig({"behavior": "2026", "service": "dynamodb"})
    assert (dynamodb.mode, dynamodb.behavior, dynamodb.max_attempts, dynamodb.service) == ("standard", "2026", 4, "dynamodb")
    d = aws.aws_decide(dynamodb, 1, {"status": 500}, 0.5)
    assert (d.delay_ms, d.ceiling_ms) == (12, 25)


def test_the_quota_is_a_retry_budget_asked_with_the_decisions_cause() -> None:
    quota = rp.RetryBudget({"kind": "retry_quota"})  # classic: 500 tokens, 5 a retry, 10 a timeout
    causes = []
    for error in ({"status": 500}, {"timeout": True}):
        d = aws.aws_decide(None, 1, error, 0.5)  # type: ignore[arg-type]
        assert d.cause is not None
        causes.append(d.cause)
        assert quota.try_retry(0, d.cause).permitted
    assert causes == ["error", "timeout"] and quota.snapshot()["balance"] == 485
    quota.record(0, "success", after_retry="timeout")  # the retry that succeeded is refunded
    assert quota.snapshot()["balance"] == 495
    empty = rp.RetryBudget.restore({"kind": "retry_quota"}, {"kind": "retry_quota", "balance": 4})
    verdict = empty.try_retry(0, "error")
    d = aws.aws_decide(None, 1, {"status": 500}, 0.5, verdict)
    assert (d.action, d.rule, d.retryable, d.delay_ms) == ("no_retry", "retry_quota_exhausted", True, None)


def test_legacy_mode_doubles_uncapped_for_five_attempts() -> None:
    legacy = aws.AwsRetryConfig({"mode": "legacy"})
    assert (legacy.mode, legacy.max_attempts) == ("legacy", 5)
    assert legacy.document == {"version": 1, "mode": "legacy", "max_attempts": 5}
    ceilings = [aws.aws_decide(legacy, n, {"status": 500}, 0.5).ceiling_ms for n in range(1, 6)]
    assert ceilings == [1000, 2000, 4000, 8000, None]


def test_the_rate_limiter_by_hand() -> None:
    limiter = aws.AdaptiveRateLimiter(start_ms=1700)
    v = limiter.acquire(1700)
    assert (v.acquired, v.rule, v.wait_ms) == (True, "limiter_off", None)  # off until a throttle
    u = limiter.record(1700, True)
    # One response in the half second from 1.5 s, the bucket before it from 1.0 s: 1 / 0.5 s,
    # smoothed 0.8 x 2 = 1.6/s; the throttle cuts it to 0.7 x 1.6 = 1.12/s.
    assert (u.throttled, u.enabled, u.measured_rate) == (True, True, 1.6)
    assert u.calculated_rate == pytest.approx(1.12) and u.fill_rate == u.calculated_rate
    assert (u.rule, u.bound) == ("throttle_beta", None)  # under 2 x 1.6, over the 0.5 minimum
    v = limiter.acquire(1700)
    # The bucket starts empty: 1 token at 1.12/s is 892.86 ms, rounded up.
    assert (v.acquired, v.rule, v.wait_ms) == (False, "wait_for_token", 893)
    kept = limiter.snapshot()
    again = aws.AdaptiveRateLimiter.restore(limiter.document, kept)
    assert again.snapshot() == kept and again.to_document() == limiter.to_document()
    assert not again.acquire(2592).acquired and again.acquire(2593).acquired


def test_one_limiter_shared_by_eight_threads_gives_out_exactly_its_tokens() -> None:
    state: aws.RateLimiterSnapshot = {
        "enabled": True,
        "fill_rate": 0.5,
        "max_capacity": 50,
        "capacity": 50,
        "last_refill_ms": 1000,
        "last_max_rate": 0,
        "last_throttle_ms": 1000,
        "measured_rate": 0,
        "last_bucket_ms": 1000,
        "request_count": 0,
    }
    limiter = aws.AdaptiveRateLimiter.restore(None, state)
    acquired = []

    def calls() -> None:
        for _ in range(20):
            acquired.append(limiter.acquire(1000).acquired)  # no time passes: no refill

    threads = [threading.Thread(target=calls) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (len(acquired), sum(acquired)) == (160, 50)


def test_aws_bad_input_is_named() -> None:
    state = {"enabled": False, "fill_rate": 1, "max_capacity": 1, "capacity": 2, "last_refill_ms": 0}
    errors: list[tuple[Any, type[rp.RetryPolicyError], str]] = [
        (lambda: aws.AwsRetryConfig({"mode": "fast"}), rp.UnknownNameError, "config.mode"),  # type: ignore[typeddict-item]
        (lambda: aws.AwsRetryConfig({"mode": "legacy", "long_polling": True}), rp.UnknownFieldError, "config.long_polling"),
        (lambda: aws.AwsRetryConfig({"max_attempts": 0}), rp.OutOfRangeError, "config.max_attempts"),
        (lambda: aws.aws_decide(None, 0, {"status": 500}, 0.5), rp.OutOfRangeError, "attempts"),
        (lambda: aws.aws_decide(None, -1, {"status": 500}, 0.5), rp.OutOfRangeError, "attempts"),
        (lambda: aws.aws_decide(None, 1, {"status": 700}, 0.5), rp.OutOfRangeError, "error.status"),
        (lambda: aws.aws_decide(None, 1, {"status": 500, "headers": {}}, 0.5), rp.UnknownFieldError, "error.headers"),  # type: ignore[typeddict-unknown-key]
        (lambda: aws.aws_decide(None, 1, {"status": 500}), rp.MissingFieldError, "random"),
        (lambda: aws.aws_decide({}, 1, {"status": 500}, 0.5), rp.InvalidTypeError, "config"),  # type: ignore[arg-type]
        (lambda: aws.aws_decide(None, 1, {"status": 500}, 0.5, {"permitted": False}), rp.InvalidTypeError, "budget_verdict"),  # type: ignore[arg-type]
        (lambda: aws.AdaptiveRateLimiter({"beta": 1}), rp.OutOfRangeError, "limiter.beta"),
        (lambda: aws.AdaptiveRateLimiter(start_ms=1.5), rp.InvalidDurationError, "start_ms"),  # type: ignore[arg-type]
        (lambda: aws.AdaptiveRateLimiter.restore(None, state), rp.MissingFieldError, "state.last_max_rate"),  # type: ignore[arg-type]
        (lambda: aws.AdaptiveRateLimiter().record(0, "yes"), rp.InvalidTypeError, "throttled"),  # type: ignore[arg-type]
        # None is invalid_type, as JSON's null for `at_ms` is (the differential test found it
        # answered invalid_duration); text that is no number stays invalid_duration
        (lambda: aws.AdaptiveRateLimiter().acquire(None), rp.InvalidTypeError, "now_ms"),  # type: ignore[arg-type]
        (lambda: aws.AdaptiveRateLimiter().acquire("x"), rp.InvalidDurationError, "now_ms"),  # type: ignore[arg-type]
    ]
    for call, cls, field in errors:
        with pytest.raises(cls) as e:
            call()
        assert e.value.field == field, str(e.value)


# ---- runs with grpc and aws rules: the step's decision is the domain's typed answer -----------------


def test_a_runs_grpc_and_aws_decisions_are_the_typed_answers() -> None:
    policy = {"maxAttempts": 4, "initialBackoff": ".1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": [14]}
    run = rp.Run({"rules": {"grpc": {"retry_policy": policy}}, "timeout_ms": 10_000})
    run.start(0)
    step = run.attempt_ended({"kind": "grpc", "status": "UNAVAILABLE"}, 5, random=0.5)
    d = step.decision
    assert isinstance(d, grpc.GrpcRetryDecision)
    # A6's default jitter: 100 ms x (0.8 + 0.4 x 0.5) = 100 ms.
    assert (step.action, step.delay_ms, d.action, d.delay_ms, d.rule) == ("wait", 100, "retry", 100, "exponential_backoff")
    quota = rp.RetryBudget({"kind": "retry_quota"})
    run = rp.Run({"rules": {"aws": {}}, "timeout_ms": 60_000}, budget=quota)
    run.start(0)
    step = run.attempt_ended({"kind": "aws", "error": {"status": 400, "code": "ThrottlingException"}}, 10, random=0.5)
    a = step.decision
    assert isinstance(a, aws.AwsDecision)
    assert (a.action, a.delay_ms, a.cause, a.rule) == ("retry", 500, "throttling", "throttling_error_code")
    assert quota.snapshot()["balance"] == 495  # classic costs: 5 for a throttling error's retry


# ---- the TypedDicts against the fixtures and the core's answers ------------------------------------


def _inputs(function: str) -> list[dict[str, Any]]:
    return [p.values[1]["input"] for p in CASES if p.values[0] == function and "expect" in p.values[1]]


def test_the_fixtures_inputs_and_the_answers_fit_the_typeddicts() -> None:
    problems: list[str] = []
    for i in _inputs("grpc_retry"):
        problems += _problems(i["state"], grpc.RetryState, "state") + _problems(i["attempt"], grpc.Attempt, "attempt")
        if "retry_policy" in i:
            problems += _problems(i["retry_policy"], grpc.RetryPolicyDocument, "retry_policy")
            policy = grpc.RetryPolicy(i["retry_policy"], i.get("max_attempts_cap"))
            d = grpc.grpc_retry(policy, i["state"], i["attempt"], i.get("random"), i.get("jitter"))
            problems += _problems(d.next, grpc.RetryState | None, "next")
    for i in _inputs("grpc_hedge"):
        problems += _problems(i["hedging_policy"], grpc.HedgingPolicyDocument, "hedging_policy")
        state: grpc.HedgeState | None = None
        for e in i["events"]:
            event = e if e["event"] == "attempt_ended" else e["event"]
            problems += _problems(event, grpc.HedgeEvent, "event")
            if "retry_throttling" not in i:
                hedging = grpc.HedgingPolicy(i["hedging_policy"], i.get("max_attempts_cap"))
                state = grpc.grpc_hedge(hedging, state, event).state
                problems += _problems(state, grpc.HedgeState, "state")
    for i in _inputs("grpc_service_config"):
        problems += _problems(grpc.ServiceConfig(i["service_config"]).throttling, rp.BudgetDocument | None, "throttling")
    for i in _inputs("aws_retry"):
        problems += _problems(i["error"], aws.AwsError, "error") + _problems(i.get("config", {}), aws.AwsRetryDocument, "config")
        problems += _problems(aws.AwsRetryConfig(i.get("config")).document, aws.AwsRetryDocument, "document")
    for i in _inputs("aws_retry_run"):
        problems += [p for e in i["events"] if "error" in e for p in _problems(e["error"], aws.AwsError, "error")]
    for i in _inputs("aws_rate_limiter_run"):
        problems += _problems(i.get("limiter", {}), aws.RateLimiterDocument, "limiter")
        if "state" in i:
            problems += _problems(i["state"], aws.RateLimiterSnapshot, "state")
            limiter = aws.AdaptiveRateLimiter.restore(i.get("limiter"), i["state"])
            problems += _problems(limiter.snapshot(), aws.RateLimiterSnapshot, "snapshot")
            problems += _problems(limiter.document, aws.RateLimiterDocument, "document")
    assert problems == []


def test_the_package_exports_the_domains() -> None:
    assert rp.grpc is grpc and rp.aws is aws
    assert (rp.ServiceConfig, rp.grpc_retry, rp.grpc_hedge) == (grpc.ServiceConfig, grpc.grpc_retry, grpc.grpc_hedge)
    assert (rp.AwsRetryConfig, rp.aws_decide, rp.AdaptiveRateLimiter) == (aws.AwsRetryConfig, aws.aws_decide, aws.AdaptiveRateLimiter)
    assert {"grpc", "aws", "grpc_retry", "aws_decide"} <= set(rp.__all__)


def test_the_readme_example_prints_what_it_says_and_passes_mypy_strict(tmp_path: pathlib.Path) -> None:
    readme = (ROOT / "bindings-python" / "README.md").read_text()
    block = re.search(r"## gRPC and AWS\n.*?```python\n(.*?)```", readme, re.S)
    assert block is not None
    program = tmp_path / "readme_grpc_aws.py"
    program.write_text(block.group(1))
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, check=True)
    # Worked out by hand: A6's first bound 100 ms x (0.8 + 0.4 x 0.5) = 100 ms; the pushback; 10 tokens less two
    # failures plus 0.1; a hedge due in 500 ms; AWS 2026's 1 s throttling base drawn at 0.5 and
    # its 5 tokens of 500; 1 token at the limiter's floor of 0.5 token/s.
    assert out.stdout.splitlines() == [
        "retry 100 exponential_backoff",
        "retry 300 pushback",
        "succeeded None ok",
        "8100",
        "1 500",
        "retry 500 throttling 495",
        "2000",
    ]
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir=/dev/null", program.name],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

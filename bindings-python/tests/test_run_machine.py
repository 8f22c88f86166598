"""The typed `Run` over the core's run machine: typed steps and verdicts, outcomes and their
errors naming the field, a host strategy asked with a `Request` (its exception propagating and the
run left as it was), the budget and the breaker told by the machine."""

from __future__ import annotations

from typing import Any

import pytest

import retrypolicy as rp

KV_GET: dict[str, Any] = {"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 2500}
HTTP_GET: dict[str, Any] = {"rules": {"http": {"method": "GET"}}, "max_attempts": 3}


def test_steps_are_typed_and_the_guards_are_told() -> None:
    budget, breaker = rp.RetryBudget({"kind": "retry_quota"}), rp.CircuitBreaker()
    run = rp.Run(rp.RunConfig(KV_GET), budget=budget, breaker=breaker)
    step = run.start(0.0)
    assert (step.action, step.attempt, step.timeout_ms, step.rule) == ("send", 1, 2500, "first_attempt")
    assert isinstance(step.breaker, rp.BreakerVerdict) and step.breaker.permitted and step.budget is None
    step = run.attempt_ended({"kind": "kv", "status": 0x86}, 10.2, 0.5)
    assert (step.action, step.delay_ms, step.elapsed_ms, step.reason) == ("wait", 1, 11, rp.RetryReason.KV_TEMPORARY_FAILURE)
    assert isinstance(step.decision, rp.Decision) and step.decision.is_retry
    assert isinstance(step.budget, rp.BudgetVerdict) and step.budget.balance == 495
    step = run.wait_ended(12)
    assert (step.action, step.attempt, run.phase) == ("send", 2, "sending")
    step = run.attempt_ended("success", 20)
    assert (step.action, step.end, run.attempts_sent, run.phase) == ("done", "succeeded", 2, "done")
    assert budget.snapshot()["balance"] == 500 and breaker.snapshot()["total"] == 2
    assert str(step).startswith("done after 2 attempts: succeeded") and '"end":"succeeded"' in step.to_json()


def test_config_start_and_succeeded_are_the_runners_short_forms() -> None:
    budget, breaker = rp.RetryBudget({"kind": "retry_quota"}), rp.CircuitBreaker()
    run, step = rp.RunConfig(KV_GET).start(3.0, budget, breaker)
    assert isinstance(run, rp.Run) and (step.action, step.attempt, step.elapsed_ms, run.phase) == ("send", 1, 0, "sending")
    assert step.to_json() == rp.Run(KV_GET, breaker=rp.CircuitBreaker()).start(3.0).to_json()  # the same step
    run.attempt_ended({"kind": "kv", "status": 0x86}, 10.2, 0.5)
    run.wait_ended(12)
    assert budget.snapshot()["balance"] == 495  # the retry's cost
    assert run.succeeded(20) is None and (run.phase, run.attempts_sent) == ("done", 2)
    assert budget.snapshot()["balance"] == 500 and breaker.snapshot()["total"] == 2  # told the success
    with pytest.raises(rp.OutOfRangeError, match="event"):
        run.succeeded(21)
    with pytest.raises(rp.InvalidTypeError, match="now_ms"):
        rp.RunConfig(KV_GET).start("0")


def test_the_http_rules_decision_is_the_loops_step() -> None:
    run = rp.Run(HTTP_GET)
    run.start(0)
    step = run.attempt_ended({"kind": "http", "status": 429, "retry_after": "1"}, 5)
    assert (step.action, step.delay_ms, step.retry_after_ms, step.rule) == ("wait", 1000, 1000, "retry_after")
    assert isinstance(step.decision, dict) and step.decision["action"] == "retry"


@pytest.mark.parametrize(
    ("outcome", "error", "field"),
    [
        ({"kind": "http", "status": 503, "bogus": 1}, rp.UnknownFieldError, "outcome.bogus"),
        ({"status": 503}, rp.MissingFieldError, "outcome.kind"),
        ({"kind": 3}, rp.InvalidTypeError, "outcome.kind"),
        ({"kind": "http"}, rp.MissingFieldError, "outcome.status"),
        # a key the kind does not have before a missing one, as JSON reads them (the differential
        # test found missing_field first)
        ({"kind": "reason", "sent": False}, rp.UnknownFieldError, "outcome.sent"),
        ({"kind": "http", "reason": "KV_LOCKED"}, rp.UnknownFieldError, "outcome.reason"),
        ({"kind": "http", "status": 999}, rp.OutOfRangeError, "outcome.status"),
        ({"kind": "http", "status": True}, rp.InvalidTypeError, "outcome.status"),
        ({"kind": "nope"}, rp.UnknownNameError, "outcome.kind"),
        ("weird", rp.OutOfRangeError, "outcome"),
        (5, rp.InvalidTypeError, "outcome"),
        ({"kind": "kv", "status": 1}, rp.OutOfRangeError, "outcome.kind"),
    ],
)
def test_a_bad_outcome_is_a_typed_error_naming_its_field(outcome: Any, error: type[Exception], field: str) -> None:
    run = rp.Run(HTTP_GET)
    run.start(0)
    with pytest.raises(error) as info:
        run.attempt_ended(outcome, 1)
    assert getattr(info.value, "field") == field
    assert run.phase == "sending"  # nothing happened: the host may still tell it


def test_bad_config_clock_and_order_are_typed_errors() -> None:
    with pytest.raises(rp.MissingFieldError, match="config.timeout_ms"):
        rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}})
    with pytest.raises(rp.UnknownFieldError, match="config.nope"):
        rp.RunConfig({**HTTP_GET, "nope": 1})
    run = rp.Run(HTTP_GET)
    with pytest.raises(rp.OutOfRangeError, match="now_ms"):
        run.start(-1)
    with pytest.raises(rp.InvalidTypeError, match="now_ms"):
        run.start(True)
    with pytest.raises(rp.OutOfRangeError, match="event"):
        run.wait_ended(0)
    with pytest.raises(rp.InvalidRandomError, match="random"):
        run.start(0, random=1.5)


def test_a_host_strategy_is_asked_with_a_request_and_its_exception_propagates() -> None:
    asked: list[tuple[int, rp.RetryReason]] = []

    class Every5ms:
        def retry_after(self, request: rp.Request, reason: rp.RetryReason) -> float:
            asked.append((request.attempts, reason))
            return 0.005

    run = rp.Run(KV_GET, strategy=Every5ms(), budget=rp.RetryBudget({"kind": "retry_quota"}))
    run.start(0)
    step = run.attempt_ended({"kind": "reason", "reason": rp.RetryReason.KV_LOCKED}, 1, 0.5)
    assert (step.delay_ms, step.rule, asked) == (5, "custom_strategy", [(0, rp.RetryReason.KV_LOCKED)])

    class Boom:
        def retry_after(self, request: rp.Request, reason: rp.RetryReason) -> float:
            raise KeyError("boom")

    run = rp.Run(KV_GET, strategy=Boom())
    run.start(0)
    with pytest.raises(KeyError):
        run.attempt_ended({"kind": "reason", "reason": "KV_LOCKED"}, 1)
    assert run.phase == "sending" and run.cancel(2).end == "cancelled"

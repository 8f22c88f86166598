"""Runs every spec fixture through the Python public API (spec-fixtures/README.md algorithm)."""

from __future__ import annotations

import json
import math
import re
from datetime import timedelta
from typing import Any, Callable, Iterable

import pytest

import retrypolicy as rp
from retrypolicy import aws, grpc, http, mongodb
from conftest import fixture_files


def _classification(c: rp.Classification) -> dict[str, Any]:
    out: dict[str, Any] = {"reason": c.reason.name if c.reason is not None else None, "rule": c.rule, "section": c.section}
    if c.surface_as is not None:
        out["surface_as"] = c.surface_as
    return out


def _policy(i: dict[str, Any]) -> rp.Policy | None:
    compat = i.get("compat")
    return rp.policy_from_dict({"compat": compat}) if compat is not None else None


def _ms(v: int) -> int | str:
    return v if v <= 2**53 - 1 else str(v)


def _explain_policy(i: dict[str, Any]) -> rp.Policy | None:
    return rp.policy_from_dict(i["policy"]) if "policy" in i else None


def _reason_flags(i: dict[str, Any]) -> dict[str, Any]:
    r = rp.RetryReason.parse(i["reason"])
    return {"name": r.name, "allows_non_idempotent_retry": r.allows_non_idempotent_retry, "always_retry": r.always_retry}


def _is_idempotent(i: dict[str, Any]) -> dict[str, Any]:
    return {"idempotent": rp.Operation.from_json(json.dumps(i)).idempotent}


def _classify_kv(i: dict[str, Any]) -> dict[str, Any]:
    return _classification(rp.classify_kv(i["operation"], i["status"], error_map=i.get("error_map"), policy=_policy(i)))


def _backoff(i: dict[str, Any]) -> dict[str, Any]:
    policy = rp.policy_from_dict({"backoff": i["backoff"], "jitter": i["jitter"]})
    prev = i.get("previous_delay_ms")
    prev_ms = None if prev is None else int(prev)
    return {"delay_ms": _ms(rp.backoff_delay_ms(policy, i["attempt"], i.get("random"), prev_ms))}


def _decision(d: rp.Decision) -> dict[str, Any]:
    return dict(json.loads(d.to_json()))


def _delay(ms: int | str | None) -> timedelta | None:
    return None if ms is None else timedelta(milliseconds=int(ms))


class FixedAnswer:
    """The fixture's host strategy given as data, built as a real Python strategy object: it
    answers every question the same way (retry after ``retry_after_ms``, or None for no retry)."""

    def __init__(self, retry_after_ms: int | str | None) -> None:
        self.answer = _delay(retry_after_ms)

    def retry_after(self, request: rp.Request, reason: rp.RetryReason) -> timedelta | None:
        return self.answer


def _host(i: dict[str, Any]) -> FixedAnswer | None:
    """The fixture's host strategy (``{"retry_after_ms": N or null}``) read as the wire reads it:
    its shape and answer are the fixture's, so only this runner meets a bad one (a negative or
    fractional answer is left to the binding, which names it ``strategy.retry_after``)."""
    host = i.get("host")
    if host is None:
        return None
    if not isinstance(host, dict):
        raise rp.InvalidTypeError("host: expected an object", field="host")
    _envelope(host, ("retry_after_ms",), (), at="host.")
    ms = host["retry_after_ms"]
    if isinstance(ms, str):
        if not ms.isdigit():
            raise rp.InvalidDurationError("host.retry_after_ms: invalid duration", field="host.retry_after_ms")
        # A u64 past what timedelta holds (999,999,999 days): the core caps any answer to the
        # timeout, so the longest timedelta decides the same.
        ms = min(int(ms), timedelta.max // timedelta(milliseconds=1))
    elif isinstance(ms, bool) or not (ms is None or isinstance(ms, (int, float))):
        raise rp.InvalidTypeError("host.retry_after_ms: expected milliseconds", field="host.retry_after_ms")
    elif isinstance(ms, float):
        if not ms.is_integer():
            raise rp.InvalidDurationError("host.retry_after_ms: invalid duration", field="host.retry_after_ms")
        ms = int(ms)
    return FixedAnswer(ms)


def _decide(i: dict[str, Any]) -> dict[str, Any]:
    """`decide` and `decide_with`: the binding's public decide, with the host strategy when given."""
    request = rp.request_from_dict(i["request"])
    policy = rp.policy_from_dict(i["policy"]) if "policy" in i else None
    strategy = _host(i)
    return _decision(rp.decide(request, i["reason"], policy, strategy=strategy))


def _decide_before_strategy(i: dict[str, Any]) -> dict[str, Any]:
    policy = rp.policy_from_dict(i["policy"]) if "policy" in i else None
    d = rp.decide_before_strategy(rp.request_from_dict(i["request"]), i["reason"], policy)
    return {"decision": None if d is None else _decision(d)}


def _decide_after_strategy(i: dict[str, Any]) -> dict[str, Any]:
    request = rp.request_from_dict(i["request"])
    return _decision(rp.decide_after_strategy(request, i["reason"], _delay(i["retry_after_ms"])))


def _envelope(i: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...], at: str = "") -> None:
    """Reads a fixture's JSON envelope (an event, or a run's inputs) as the wire does: a key it does
    not have is `unknown_field`, a required key left out `missing_field` (the Python API takes
    these as arguments, so only this runner meets them)."""
    for key in i:
        if key not in required + optional:
            raise rp.UnknownFieldError(f"{at}{key}: unknown field", field=f"{at}{key}")
    for key in required:
        if key not in i:
            raise rp.MissingFieldError(f"{at}{key}: missing field", field=f"{at}{key}")


def _events(i: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixture's events: a list of objects, or the wire's `invalid_type` (the Python API takes
    events one call at a time, so only this runner meets the list)."""
    events = i["events"]
    if not isinstance(events, list):
        raise rp.InvalidTypeError("events: expected a sequence", field="events")
    for n, e in enumerate(events):
        if not isinstance(e, dict):
            raise rp.InvalidTypeError(f"events[{n}]: expected an object", field=f"events[{n}]")
    return events


def _kinds(events: list[dict[str, Any]], key: str, names: Iterable[str]) -> None:
    """Each event's kind (`key`) read as the wire reads the whole input before its first event: a
    name it does not know is `unknown_name`, another type `invalid_type`, none `missing_field`."""
    for n, e in enumerate(events):
        if key not in e:
            raise rp.MissingFieldError(f"events[{n}].{key}: missing field", field=f"events[{n}].{key}")
        kind = e[key]
        if not isinstance(kind, str):
            raise rp.InvalidTypeError(f"events[{n}].{key}: expected a name", field=f"events[{n}].{key}")
        if kind not in names:
            raise rp.UnknownNameError(f"events[{n}].{key}: unknown name {kind!r}", field=f"events[{n}].{key}")


def _at(v: Any) -> Any:
    """An event's time: the fixture writes a u64 past 2^53 - 1 as a decimal string."""
    return int(v) if isinstance(v, str) and v.isdigit() else v


# Which keys a budget event of each kind has (the rest are another kind's).
BUDGET_EVENT_KEYS = {"success": ("after_retry",), "retry": ("cause",)}


def _budget_run(i: dict[str, Any]) -> dict[str, Any]:
    """`budget_run` on a `RetryBudget`: each event recorded (a retry asked with `try_retry`), then
    the verdict for a retry at that moment (of a timeout after a timeout)."""
    _envelope(i, ("budget", "events"), ("state",))
    state = i.get("state")
    budget = rp.RetryBudget(i["budget"]) if state is None else rp.RetryBudget.restore(i["budget"], state)
    verdicts = []
    _kinds(_events(i), "kind", ("request", "success", "failure", "timeout", "retry"))
    for n, e in enumerate(_events(i)):
        kind = e.get("kind")
        _envelope(e, ("at_ms", "kind"), BUDGET_EVENT_KEYS.get(kind, ()), at=f"events[{n}].")
        at = _at(e["at_ms"])
        if kind == "retry":
            verdicts.append(budget.try_retry(at, e.get("cause")))
        else:
            budget.record(at, kind, after_retry=e.get("after_retry"))
            verdicts.append(budget.permit(at, "timeout" if kind == "timeout" else "error"))
    return {
        "budget": budget.document,
        "verdicts": [json.loads(v.to_json()) for v in verdicts],
        "permitted": [v.permitted for v in verdicts],
        "balances": [v.balance for v in verdicts],
        "state": budget.snapshot(),
    }


def _change(c: rp.BreakerChange) -> dict[str, Any]:
    """A breaker's state change, read from its typed fields."""
    return {"from": c.from_state, "to": c.to_state, "rule": c.rule}


def _breaker_run(i: dict[str, Any]) -> dict[str, Any]:
    """`breaker_run` on a `CircuitBreaker`: a request is asked (`permit`), an outcome recorded;
    the state after each event, and the changes it made (`last_changes`)."""
    _envelope(i, ("events",), ("breaker", "state"))
    state = i.get("state")
    breaker = rp.CircuitBreaker(i.get("breaker")) if state is None else rp.CircuitBreaker.restore(i.get("breaker"), state)
    verdicts: list[rp.BreakerVerdict | None] = []
    states = []
    changes = []
    _kinds(_events(i), "kind", ("request", "success", "failure", "timeout"))
    for n, e in enumerate(_events(i)):
        _envelope(e, ("at_ms", "kind"), (), at=f"events[{n}].")
        at = _at(e["at_ms"])
        if e["kind"] == "request":
            verdicts.append(breaker.permit(at))
        else:
            breaker.record(at, e["kind"])
            verdicts.append(None)
        changes.append([_change(c) for c in breaker.last_changes])
        states.append(breaker.state(at))
    return {
        "breaker": breaker.document,
        "verdicts": [None if v is None else json.loads(v.to_json()) for v in verdicts],
        "permitted": [None if v is None else v.permitted for v in verdicts],
        "states": states,
        "changes": changes,
        "state": breaker.snapshot(),
    }


def _verdict(d: dict[str, Any] | None) -> rp.BudgetVerdict | None:
    """The fixture's verdict as a `BudgetVerdict` (built from its rule and balance), which must
    agree with every other field the fixture gives."""
    if d is None:
        return None
    return rp.BudgetVerdict.from_dict(d)


def _budgeted(i: dict[str, Any]) -> tuple[rp.Request, str, rp.Policy | None, rp.BudgetVerdict | None]:
    """The arguments of `decide_with_budget` and `explain_with_budget`."""
    _envelope(i, ("request", "reason"), ("policy", "budget_verdict"))
    policy = rp.policy_from_dict(i["policy"]) if "policy" in i else None
    return rp.request_from_dict(i["request"]), i["reason"], policy, _verdict(i.get("budget_verdict"))


def _explain_with_budget(i: dict[str, Any]) -> dict[str, Any]:
    args = _budgeted(i)
    return {"sentence": rp.explain_with_budget(*args), "decision": _decision(rp.decide_with_budget(*args))}


def _stats(s: rp.RunStats) -> dict[str, Any]:
    """A run's statistics, read from their typed fields (a verdict in its JSON form, as a step's)."""
    return {
        "attempts": s.attempts,
        "retries": s.retries,
        "waited_ms": _ms(s.waited_ms),
        "elapsed_ms": _ms(s.elapsed_ms),
        "budget_refusals": s.budget_refusals,
        "breaker_rejections": s.breaker_rejections,
        "end": s.end,
        "last_rule": s.last_rule,
        "last_reason": None if s.last_reason is None else s.last_reason.name,
        "last_budget": None if s.last_budget is None else json.loads(s.last_budget.to_json()),
        "last_breaker": None if s.last_breaker is None else json.loads(s.last_breaker.to_json()),
    }


RUN_EVENT_KEYS = {
    "start": ("random",),
    "attempt_ended": ("outcome", "random", "now_unix_ms"),
    "wait_ended": ("random",),
    "cancel": (),
}


def _run(i: dict[str, Any], observe: Callable[[rp.RunStep], None] | None = None) -> dict[str, Any]:
    """`run`: the events replayed through a public `Run` (with the binding's `RetryBudget` and
    `CircuitBreaker`, restored when the fixture gives a state), then the wire's summary keys, the
    run's `stats` and the breaker's changes; `observe` is handed each step as it comes."""
    _envelope(i, ("run", "events"), ("budget", "budget_state", "breaker", "breaker_state", "host"))
    budget = breaker = None
    if "budget" in i:
        state = i.get("budget_state")
        budget = rp.RetryBudget(i["budget"]) if state is None else rp.RetryBudget.restore(i["budget"], state)
    if "breaker" in i:
        state = i.get("breaker_state")
        breaker = rp.CircuitBreaker(i["breaker"]) if state is None else rp.CircuitBreaker.restore(i["breaker"], state)
    strategy = _host(i)
    run = rp.Run(i["run"], budget=budget, breaker=breaker, strategy=strategy)
    steps: list[rp.RunStep] = []
    _kinds(_events(i), "event", RUN_EVENT_KEYS)
    for n, e in enumerate(_events(i)):
        kind = e.get("event")
        _envelope(e, ("event", "at_ms"), RUN_EVENT_KEYS.get(kind, ("outcome", "random", "now_unix_ms")), at=f"events[{n}].")
        if kind == "attempt_ended" and e.get("outcome") is None:
            raise rp.MissingFieldError(f"events[{n}].outcome: missing field", field=f"events[{n}].outcome")
        at = e["at_ms"]  # a run's clock is a number (fractions allowed), never text
        if kind == "start":
            steps.append(run.start(at, e.get("random")))
        elif kind == "attempt_ended":
            steps.append(run.attempt_ended(e["outcome"], at, e.get("random"), e.get("now_unix_ms")))
        elif kind == "wait_ended":
            steps.append(run.wait_ended(at, e.get("random")))
        else:
            steps.append(run.cancel(at))
        if observe is not None:
            observe(steps[-1])
    return {
        "steps": [json.loads(s.to_json()) for s in steps],
        "actions": [s.action for s in steps],
        "delays_ms": [s.delay_ms for s in steps if s.delay_ms is not None],
        "rules": [s.rule for s in steps],
        "end": steps[-1].end if steps else None,
        "last": json.loads(steps[-1].to_json()) if steps else None,
        "attempts_sent": run.attempts_sent,
        "stats": _stats(run.stats),
        "breaker_changes": [_change(c) for s in steps for c in s.breaker_changes],
        "signals": [s.signal for s in steps],
        "budget_state": None if budget is None else budget.snapshot(),
        "breaker_state": None if breaker is None else breaker.snapshot(),
    }


# ---- gRPC (gRFC A6) and the AWS retry modes: the typed API, the fixture's envelope read here ----


def _read(value: Any, *fields: str) -> dict[str, Any]:
    """The typed API's answer as the fixture's keys: each field read from its attribute."""
    return {f: getattr(value, f) for f in fields}


def _verdict_json(v: rp.BudgetVerdict | None) -> dict[str, Any] | None:
    return None if v is None else dict(json.loads(v.to_json()))


def _grpc_policy(p: grpc.RetryPolicy | grpc.HedgingPolicy | None) -> dict[str, Any]:
    """A method's policy in the fixture's form, read from the typed fields."""
    if isinstance(p, grpc.RetryPolicy):
        return {
            "kind": "retry",
            "max_attempts": p.max_attempts,
            "initial_backoff_ns": _ms(p.initial_backoff_ns),
            "max_backoff_ns": _ms(p.max_backoff_ns),
            "backoff_multiplier": p.backoff_multiplier,
            "retryable_status_codes": p.retryable_status_codes,
        }
    if isinstance(p, grpc.HedgingPolicy):
        return {
            "kind": "hedging",
            "max_attempts": p.max_attempts,
            "hedging_delay_ns": _ms(p.hedging_delay_ns),
            "non_fatal_status_codes": p.non_fatal_status_codes,
        }
    assert p is None
    return {"kind": "none"}


def _grpc_service_config(i: dict[str, Any]) -> dict[str, Any]:
    """`grpc_service_config`: a `grpc.ServiceConfig`, one method looked up."""
    _envelope(i, ("service_config",), ("service", "method", "max_attempts_cap"))
    config = grpc.ServiceConfig(i["service_config"], i.get("max_attempts_cap"))
    # an optional key given null reads as not given (the fixture contract)
    service, method = ("" if i.get(k) is None else i[k] for k in ("service", "method"))
    return {
        "matched": config.matched(service, method),
        "policy": _grpc_policy(config.policy_for(service, method)),
        "throttling": config.throttling,
    }


def _throttling_bucket(i: dict[str, Any]) -> rp.RetryBudget | None:
    """The fixture's `retry_throttling` (gRPC's JSON, read by a `ServiceConfig`) as the binding's
    `RetryBudget`, restored from `throttling_state` when given."""
    throttling, state = i.get("retry_throttling"), i.get("throttling_state")
    if throttling is None:
        if state is not None:
            raise rp.MissingFieldError("retry_throttling: missing field", field="retry_throttling")
        return None
    document = grpc.ServiceConfig({"retryThrottling": throttling}).throttling
    assert document is not None
    return rp.RetryBudget(document) if state is None else rp.RetryBudget.restore(document, state)


GRPC_RETRY_KEYS = ("retry_policy", "max_attempts_cap", "random", "jitter", "retry_throttling", "throttling_state")


def _grpc_retry(i: dict[str, Any]) -> dict[str, Any]:
    """`grpc_retry`: `grpc.grpc_retry` with a `RetryPolicy` and the bucket as a `RetryBudget`."""
    _envelope(i, ("state", "attempt"), GRPC_RETRY_KEYS + ("now_ms",))
    doc = i.get("retry_policy")
    policy = None if doc is None else grpc.RetryPolicy(doc, i.get("max_attempts_cap"))
    bucket = _throttling_bucket(i)
    d = grpc.grpc_retry(
        policy, i["state"], i["attempt"], i.get("random"), i.get("jitter"), bucket, _at(i.get("now_ms", 0))
    )
    fields = _read(d, "action", "delay_ms", "transparent", "pushback_ms", "throttle", "next", "rule", "section")
    state = None if bucket is None else bucket.snapshot()
    return fields | {"budget": _verdict_json(d.budget), "throttling_state": state}


def _hedge_step(s: grpc.GrpcHedgeStep) -> dict[str, Any]:
    """A hedging step in the fixture's form, read from the typed fields."""
    fields = _read(s, "send", "next_hedge_in_ms", "cancel_others", "end", "status", "throttle", "state", "rule")
    return fields | {"section": s.section, "budget": _verdict_json(s.budget)}


def _grpc_hedge(i: dict[str, Any]) -> dict[str, Any]:
    """`grpc_hedge`: each event through `grpc.grpc_hedge`, the state carried from step to step."""
    _envelope(i, ("hedging_policy", "events"), ("max_attempts_cap", "retry_throttling", "throttling_state"))
    policy = grpc.HedgingPolicy(i["hedging_policy"], i.get("max_attempts_cap"))
    bucket = _throttling_bucket(i)
    state: grpc.HedgeState | None = None
    steps = []
    _kinds(_events(i), "event", ("start", "hedge_due", "attempt_ended", "committed"))
    for n, e in enumerate(_events(i)):
        kind = e.get("event")
        _envelope(e, ("event",), ("at_ms",) + (("attempt",) if kind == "attempt_ended" else ()), at=f"events[{n}].")
        # attempt_ended without its attempt is the binding's to refuse
        event: grpc.HedgeEvent = {"event": kind, "attempt": e["attempt"]} if "attempt" in e else {"event": kind} if kind == "attempt_ended" else kind
        step = grpc.grpc_hedge(policy, state, event, bucket, _at(e.get("at_ms", 0)))
        state = step.state
        steps.append(step)
    last = steps[-1] if steps else None
    return {
        "steps": [_hedge_step(s) for s in steps],
        "sends": [s.send for s in steps],
        "rules": [s.rule for s in steps],
        "end": None if last is None else last.end,
        "status": None if last is None else last.status,
        "throttling_state": None if bucket is None else bucket.snapshot(),
    }


AWS_DECISION_FIELDS = ("action", "delay_ms", "wait_ms", "ceiling_ms", "retry_after_ms", "retryable", "throttling")


def _aws_decision(d: aws.AwsDecision) -> dict[str, Any]:
    """An AWS decision in the fixture's form, read from the typed fields (milliseconds past
    2^53 - 1 as decimal strings)."""
    fields = _read(d, *AWS_DECISION_FIELDS, "cause", "attempts", "max_attempts", "rule", "section")
    return {k: _ms(v) if k.endswith("_ms") and isinstance(v, int) else v for k, v in fields.items()}


def _aws_retry(i: dict[str, Any]) -> dict[str, Any]:
    """`aws_retry`: `aws.aws_decide` with an `AwsRetryConfig` and the quota's verdict as a `BudgetVerdict`."""
    _envelope(i, ("attempts", "error"), ("config", "random", "budget_verdict"))
    config = aws.AwsRetryConfig(i.get("config"))
    verdict = _verdict(i.get("budget_verdict"))
    return _aws_decision(aws.aws_decide(config, i["attempts"], i["error"], i.get("random"), verdict))


def _aws_quota(i: dict[str, Any], config: aws.AwsRetryConfig) -> rp.RetryBudget | None:
    """The run's retry quota as the binding's `RetryBudget`: the fixture's `quota`, else (standard
    and adaptive) the retry quota with the behaviour's cost table, restored from `quota_state`."""
    document, state = i.get("quota"), i.get("quota_state")
    if document is None and config.mode != "legacy":
        document = {"kind": "retry_quota", "costs": config.behavior}
    if document is None:
        if state is not None:
            raise rp.MissingFieldError("quota: missing field", field="quota")
        return None
    return rp.RetryBudget(document) if state is None else rp.RetryBudget.restore(document, state)


def _draw(r: Any, field: str) -> None:
    """A success's `random`, which no call takes, read as the wire reads every event's: a number
    in [0, 1), or None."""
    if r is None:
        return
    if isinstance(r, bool) or not isinstance(r, (int, float)):
        raise rp.InvalidTypeError(f"{field}: expected a number", field=field)
    if not 0 <= r < 1:
        raise rp.InvalidRandomError(f"{field}: expected a draw in [0, 1)", field=field)


def _aws_retry_run(i: dict[str, Any]) -> dict[str, Any]:
    """`aws_retry_run`: the SDKs' loop with the binding's types. A success tells the quota (with
    the cause of the retry that succeeded, if any); an error is decided, a retry asked of the
    quota with the decision's cause and, when refused, decided again with that verdict."""
    _envelope(i, ("events",), ("config", "quota", "quota_state"))
    config = aws.AwsRetryConfig(i.get("config"))
    quota = _aws_quota(i, config)
    attempts, last_cause = 0, None
    steps: list[dict[str, Any]] = []
    decisions: list[aws.AwsDecision | None] = []
    for n, e in enumerate(_events(i)):
        _envelope(e, (), ("error", "random"), at=f"events[{n}].")
        attempts += 1
        error = e.get("error")
        if error is None:
            _draw(e.get("random"), f"events[{n}].random")
            if quota is not None:
                quota.record(0, "success", after_retry=last_cause)
            decisions.append(None)
            steps.append({"attempts": attempts, "action": "success", "decision": None})
            attempts, last_cause = 0, None
        else:
            d = aws.aws_decide(config, attempts, error, e.get("random"))
            if d.is_retry and quota is not None:
                verdict = quota.try_retry(0, d.cause)
                if not verdict.permitted:
                    d = aws.aws_decide(config, attempts, error, e.get("random"), verdict)
            decisions.append(d)
            steps.append({"attempts": attempts, "action": d.action, "decision": _aws_decision(d)})
            if d.is_retry:
                last_cause = d.cause
            else:
                attempts, last_cause = 0, None
        steps[-1]["quota_balance"] = None if quota is None else quota.permit(0).balance
    return {
        "config": config.document,
        "quota": None if quota is None else quota.document,
        "actions": [s["action"] for s in steps],
        "rules": [None if d is None else d.rule for d in decisions],
        "delays_ms": [None if d is None else d.delay_ms for d in decisions],
        "ceilings_ms": [None if d is None else d.ceiling_ms for d in decisions],
        "waits_ms": [None if d is None else d.wait_ms for d in decisions],
        "quota_balances": [s["quota_balance"] for s in steps],
        "quota_state": None if quota is None else quota.snapshot(),
        "steps": steps,
    }


def _rate(r: float) -> float:
    """A rate as the fixture's lists give it: to 12 decimal places, halves away from zero."""
    x = r * 1e12
    whole = math.floor(x)
    return (whole + 1 if x - whole >= 0.5 else whole) / 1e12


LIMITER_EVENT_KEYS = {"acquire": (), "response": ("throttled",)}


def _aws_rate_limiter_run(i: dict[str, Any]) -> dict[str, Any]:
    """`aws_rate_limiter_run`: an `AdaptiveRateLimiter` (new at `start_ms`, or restored) asked
    (`acquire`) and told of responses (`record`); the state after each event."""
    _envelope(i, ("events",), ("limiter", "state", "start_ms"))
    state, start = i.get("state"), i.get("start_ms")
    if state is not None and start is not None:
        raise rp.InvalidTypeError("start_ms: a restored state keeps its own times", field="start_ms")
    if state is None:
        limiter = aws.AdaptiveRateLimiter(i.get("limiter"), _at(start))
    else:
        limiter = aws.AdaptiveRateLimiter.restore(i.get("limiter"), state)
    results: list[aws.AcquireVerdict | aws.RateUpdate] = []
    states: list[aws.RateLimiterSnapshot] = []
    _kinds(_events(i), "kind", LIMITER_EVENT_KEYS)
    for n, e in enumerate(_events(i)):
        kind = e.get("kind")
        e = {k: v for k, v in e.items() if not (k == "throttled" and v is None)}  # null: not given
        _envelope(e, ("at_ms", "kind"), LIMITER_EVENT_KEYS.get(kind, ("throttled",)), at=f"events[{n}].")
        at = _at(e["at_ms"])
        if kind == "acquire":
            results.append(limiter.acquire(at))
        elif kind == "response":
            results.append(limiter.record(at, e.get("throttled", False)))
        else:
            raise rp.UnknownNameError(f"events[{n}].kind: unknown name", field=f"events[{n}].kind")
        states.append(limiter.snapshot())
    acquired = [r if isinstance(r, aws.AcquireVerdict) else None for r in results]
    updates = [r if isinstance(r, aws.RateUpdate) else None for r in results]
    return {
        "limiter": limiter.document,
        "acquired": [None if a is None else a.acquired for a in acquired],
        "waits_ms": [None if a is None else a.wait_ms for a in acquired],
        "rules": [r.rule for r in results],
        "bounds": [None if u is None else u.bound for u in updates],
        "calculated_rates": [None if u is None else _rate(u.calculated_rate) for u in updates],
        "measured_rates": [_rate(s["measured_rate"]) for s in states],
        "fill_rates": [_rate(s["fill_rate"]) for s in states],
        "max_capacities": [_rate(s["max_capacity"]) for s in states],
        "capacities": [_rate(s["capacity"]) for s in states],
        "enabled": [s["enabled"] for s in states],
        "results": [json.loads(r.to_json()) for r in results],
        "state": limiter.snapshot(),
    }


# Fixture fields that are Python objects or arguments here: the host strategy given as data is a
# strategy object, so a bad answer of it is named by the binding as the strategy's `retry_after`
# answer; the request is built on its own (`request_from_dict`), and the verdict from its rule; an
# event's time and kind are the arguments of the budget's and breaker's methods.
FIELD_NAMES = {
    "host.retry_after_ms": "strategy.retry_after",
    "request.elapsed_ms": "elapsed_ms",
    "budget_verdict.rule": "rule",
}
EVENT_ARGUMENTS = {"at_ms": "now_ms", "kind": "event"}
BREAKER_EVENT_ARGUMENTS = {"at_ms": "now_ms", "kind": "outcome"}


# Functions whose events are calls of the typed API: an event's field is the argument's.
EVENT_CALLS = ("grpc_hedge", "aws_retry_run", "aws_rate_limiter_run")


def _field_name(function: str, field: str) -> str:
    """The name the Python API gives the fixture's `field`."""
    if function in EVENT_CALLS:
        return re.sub(r"^events\[\d+\]\.", "", field)
    if function == "run":  # a run's event is a method call: its field is the argument's
        field = re.sub(r"^events\[\d+\]\.", "", field)
        # the host strategy's answer: this runner names its shape (`host.retry_after_ms`), the
        # binding a bad answer (`strategy.retry_after`)
        return "retry_after" if field in ("retry_after_ms", "host.retry_after_ms") else field
    match = re.fullmatch(r"events\[\d+\]\.(\w+)", field)
    if match is not None:
        names = BREAKER_EVENT_ARGUMENTS if function == "breaker_run" else EVENT_ARGUMENTS
        return names.get(match[1], match[1])
    return FIELD_NAMES.get(field, field)


def _field_names(function: str, field: str) -> tuple[str, ...]:
    """The names a message may give the fixture's `field`: the Python API's, the fixture's own
    (an envelope this runner reads), and for a bare name (the differential test gives the last
    name of the core's field) of an event's time or kind also the argument it is here (`now_ms`;
    `event`, or a breaker's `outcome`)."""
    names = (_field_name(function, field), field)
    if function in ("budget_run", "breaker_run", "run") and re.fullmatch(r"\w+", field):
        names += (_field_name(function, f"events[0].{field}"),)
    if field == "at_ms":
        names += ("now_ms",)
    return names


# Cases of a budget verdict's JSON form whose extra fields disagree with its rule: the Python
# API builds a verdict from its rule and balance only, and reading the JSON form is the wire's
# (`budget_verdict` in retrypolicy-wire's input, not public): asked of the lead (issue 20).
ADAPTERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "reason_flags": _reason_flags,
    "is_idempotent": _is_idempotent,
    "classify_kv": _classify_kv,
    "classify_query": lambda i: _classification(
        rp.classify_query(i["code"], i.get("message", ""), retry=i.get("retry"), policy=_policy(i))
    ),
    "classify_analytics": lambda i: _classification(rp.classify_analytics(i["code"])),
    "classify_search": lambda i: _classification(rp.classify_search(i["http_status"])),
    "classify_views": lambda i: _classification(rp.classify_views(i["http_status"], i.get("body", ""))),
    "classify_dispatch": lambda i: _classification(rp.classify_dispatch(i["failure"])),
    "controlled_backoff": lambda i: {"delay_ms": rp.controlled_backoff_ms(i["attempt"])},
    "backoff": _backoff,
    "decide": _decide,
    "decide_with": _decide,
    "decide_before_strategy": _decide_before_strategy,
    "decide_after_strategy": _decide_after_strategy,
    "explain": lambda i: {
        "sentence": rp.explain(rp.request_from_dict(i["request"]), i["reason"], _explain_policy(i)),
        "decision": json.loads(rp.decide(rp.request_from_dict(i["request"]), i["reason"], _explain_policy(i)).to_json()),
    },
    "simulate": lambda i: rp.simulate(i),
    "simulate_storm": lambda i: rp.simulate_storm(i),
    "parse_policy": lambda i: {"policy": json.loads(rp.Policy.from_json(i["json"]).to_json())},
    "mongodb_classify_error": lambda i: mongodb.classify_error(**i),
    "mongodb_retryable_write_error": lambda i: mongodb.retryable_write_error(**i),
    "mongodb_retryable_read_error": lambda i: mongodb.retryable_read_error(**i),
    "mongodb_surfaced_error": lambda i: mongodb.surfaced_error(**i),
    "mongodb_eligibility": lambda i: mongodb.eligibility(**i),
    "mongodb_decide": lambda i: mongodb.decide(**i),
    "mongodb_overload_backoff": lambda i: mongodb.overload_backoff(**i),
    "mongodb_transaction_labels": lambda i: mongodb.transaction_labels(**i),
    "mongodb_transaction_backoff": lambda i: mongodb.transaction_backoff(**i),
    "mongodb_with_transaction": lambda i: mongodb.with_transaction(**i),
    "mongodb_transaction_step": lambda i: mongodb.transaction_step(**i),
    "mongodb_idempotency": lambda i: mongodb.idempotency(**i),
    "mongodb_duplicate_key": lambda i: mongodb.duplicate_key(**i),
    "mongodb_pending_token_rewrite": lambda i: mongodb.pending_token_rewrite(**i),
    "http_classify": lambda i: http.classify(**i),
    "http_retry_after": lambda i: http.retry_after(**i),
    "http_date": lambda i: http.parse_date(**i),
    "http_next": lambda i: http.next_step(**i),
    "budget_run": _budget_run,
    "breaker_run": _breaker_run,
    "decide_with_budget": lambda i: _decision(rp.decide_with_budget(*_budgeted(i))),
    "explain_with_budget": _explain_with_budget,
    "run": _run,
    "grpc_service_config": _grpc_service_config,
    "grpc_retry": _grpc_retry,
    "grpc_hedge": _grpc_hedge,
    "aws_retry": _aws_retry,
    "aws_retry_run": _aws_retry_run,
    "aws_rate_limiter_run": _aws_rate_limiter_run,
}


def _cases() -> list[Any]:
    params = []
    for path in fixture_files():
        doc = json.loads(path.read_text())
        for case in doc["cases"]:
            params.append(pytest.param(doc["function"], case, id=f"{path.stem}::{case['id']}"))
    return params


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return bool(a == b)


def check(function: str, case: dict[str, Any]) -> None:
    """Runs one case through its adapter; raises AssertionError when the outcome differs."""
    adapter = ADAPTERS.get(function)
    assert adapter is not None, f"no Python adapter for fixture function {function!r}"
    if "expect_error" in case:
        with pytest.raises(rp.RetryPolicyError) as info:
            adapter(case["input"])
        assert info.value.code == case["expect_error"], str(info.value)
        if "error_field" in case:
            names = _field_names(function, case["error_field"])
            assert any(name in str(info.value) for name in names), str(info.value)
    else:
        out = adapter(case["input"])
        for key, want in case["expect"].items():
            assert _eq(out.get(key), want), f"{key}: expected {want!r}, got {out.get(key)!r} in {out}"


@pytest.mark.parametrize(("function", "case"), _cases())
def test_fixture(function: str, case: dict[str, Any]) -> None:
    check(function, case)


def test_every_corpus_file_is_run() -> None:
    cases = _cases()
    files = {p.id.split("::")[0] for p in cases}
    assert files == {p.stem for p in fixture_files()}
    assert {"decide_with", "decide_before_strategy", "decide_after_strategy"} <= files
    assert len(cases) >= 874


def _first(function: str, kind: str) -> dict[str, Any]:
    return next(p.values[1] for p in _cases() if p.values[0] == function and kind in p.values[1])


@pytest.mark.parametrize(
    ("function", "kind", "wrong"),
    [
        ("decide_with", "expect", lambda c: c["expect"].update(delay_ms=41)),
        ("decide_with", "expect", lambda c: c["input"]["host"].update(retry_after_ms=41)),
        ("decide_with", "expect_error", lambda c: c.update(expect_error="invalid_type")),
        ("decide_with", "expect_error", lambda c: c.update(error_field="host.nothing")),
        ("decide_before_strategy", "expect", lambda c: c["expect"].update(decision={"action": "retry"})),
        ("decide_after_strategy", "expect", lambda c: c["input"].update(retry_after_ms=121)),
        ("decide", "expect", lambda c: c["expect"].update(rule="no_such_rule")),
    ],
)
def test_the_runner_fails_a_wrong_case(function: str, kind: str, wrong: Callable[[dict[str, Any]], None]) -> None:
    case = json.loads(json.dumps(_first(function, kind)))
    check(function, case)
    wrong(case)
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        check(function, case)

"""Runs every spec fixture through the Python public API (spec-fixtures/README.md algorithm)."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

import retrypolicy as rp
from retrypolicy import http, mongodb
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


def _decide(i: dict[str, Any]) -> dict[str, Any]:
    request = rp.request_from_dict(i["request"])
    policy = rp.policy_from_dict(i["policy"]) if "policy" in i else None
    return dict(json.loads(rp.decide(request, i["reason"], policy).to_json()))


ADAPTERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "reason_flags": _reason_flags,
    "is_idempotent": _is_idempotent,
    "classify_kv": _classify_kv,
    "classify_query": lambda i: _classification(rp.classify_query(i["code"], i.get("message", ""), policy=_policy(i))),
    "classify_analytics": lambda i: _classification(rp.classify_analytics(i["code"])),
    "classify_search": lambda i: _classification(rp.classify_search(i["http_status"])),
    "classify_views": lambda i: _classification(rp.classify_views(i["http_status"], i.get("body", ""))),
    "classify_dispatch": lambda i: _classification(rp.classify_dispatch(i["failure"])),
    "controlled_backoff": lambda i: {"delay_ms": rp.controlled_backoff_ms(i["attempt"])},
    "backoff": _backoff,
    "decide": _decide,
    "explain": lambda i: {
        "sentence": rp.explain(rp.request_from_dict(i["request"]), i["reason"], _explain_policy(i)),
        "decision": json.loads(rp.decide(rp.request_from_dict(i["request"]), i["reason"], _explain_policy(i)).to_json()),
    },
    "simulate": lambda i: rp.simulate(i),
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


@pytest.mark.parametrize(("function", "case"), _cases())
def test_fixture(function: str, case: dict[str, Any]) -> None:
    adapter = ADAPTERS.get(function)
    if adapter is None:
        pytest.fail(f"no Python adapter for fixture function {function!r}")
    if "expect_error" in case:
        with pytest.raises(rp.RetryPolicyError) as info:
            adapter(case["input"])
        assert info.value.code == case["expect_error"], str(info.value)
        if "error_field" in case:
            assert case["error_field"] in str(info.value)
    else:
        out = adapter(case["input"])
        for key, want in case["expect"].items():
            assert _eq(out.get(key), want), f"{key}: expected {want!r}, got {out.get(key)!r} in {out}"

"""Hypothesis: properties that hold for every input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import retrypolicy as rp
from retrypolicy import Operation, Request, RetryReason

OPS = ["get", "upsert", "insert", "lookup_in", "mutate_in", "increment", "get_and_lock", "unlock"]

requests = st.builds(
    lambda op, attempts, elapsed, timeout, idem: Request(
        Operation.kv(op), attempts=attempts, elapsed=elapsed / 1000, timeout=timeout / 1000, idempotent=idem
    ),
    st.sampled_from(OPS),
    st.integers(0, 2**32 - 1),
    st.integers(0, 10**9),
    st.integers(0, 10**9),
    st.one_of(st.none(), st.booleans()),
)
reasons = st.sampled_from(list(RetryReason))
policies = st.sampled_from(
    [
        None,
        rp.policy_from_dict({"strategy": "fail_fast"}),
        rp.policy_from_dict({"backoff": {"kind": "fixed", "delay_ms": 10**8}}),
        rp.policy_from_dict({"compat": {"retry_unknown_if_idempotent": True, "collection_outdated_not_always_retry": True}}),
    ]
)


@settings(max_examples=400, deadline=None)
@given(requests, reasons, policies)
def test_no_delay_ever_passes_the_deadline(req: Request, reason: RetryReason, policy: rp.Policy | None) -> None:
    d = rp.decide(req, reason, policy)
    if d.is_retry:
        assert req.elapsed_ms < req.timeout_ms
        assert d.delay_ms is not None and d.delay_ms <= req.timeout_ms - req.elapsed_ms


@settings(max_examples=400, deadline=None)
@given(requests, reasons, policies)
def test_non_idempotent_requests_are_retried_only_when_the_reason_allows(
    req: Request, reason: RetryReason, policy: rp.Policy | None
) -> None:
    req = req.replace(idempotent=False)
    if rp.decide(req, reason, policy).is_retry:
        assert reason.allows_non_idempotent_retry


@settings(max_examples=200, deadline=None)
@given(requests)
def test_unknown_stays_unknown_and_is_never_retried(req: Request) -> None:
    d = rp.decide(req, RetryReason.UNKNOWN)
    assert not d.is_retry
    assert d.reason is RetryReason.UNKNOWN


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_unknown_names_raise_the_typed_error(name: str) -> None:
    if name in RetryReason.__members__ or name == "KV_SYNC_RE_COMMIT_IN_PROGRESS":
        return
    try:
        RetryReason.parse(name)
    except rp.UnknownReasonError as e:
        assert e.code == "unknown_reason"
    else:
        raise AssertionError(f"{name!r} parsed")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=30), st.binary(max_size=30).map(lambda b: b.decode("latin-1"))))
def test_arbitrary_policy_text_raises_only_typed_errors(text: str) -> None:
    try:
        rp.Policy.from_json(text)
    except rp.RetryPolicyError:
        pass

"""Host values at their edges: exact durations, negatives, lone surrogates, non-finite floats."""

from __future__ import annotations

from datetime import timedelta

import pytest

import retrypolicy as rp
import retrypolicy.http as rp_http
from retrypolicy import Operation, Request


def test_timedeltas_and_ints_convert_exactly_past_2_53() -> None:
    # Found on the old main: these went through a float and came out up to 10 ms off.
    # timedelta's range ends at 999,999,999 days (8.64e16 ms), past 2^53 ms.
    for ms in [2**53 - 1, 2**53, 2**53 + 1, 86_399_999_999_999_999]:
        r = Request(Operation.kv("get"), timeout=timedelta(milliseconds=ms))
        assert r.timeout_ms == ms, ms
    secs = 2**53 // 1000 + 1  # whole seconds as an int, past 2^53 ms
    assert Request(Operation.kv("get"), timeout=secs).timeout_ms == secs * 1000
    assert Request(Operation.kv("get"), timeout=timedelta(microseconds=1500)).timeout_ms == 2


@pytest.mark.parametrize("value", [-0.0004, timedelta(microseconds=-400), timedelta(days=-1), -1])
def test_negative_durations_are_refused_however_small(value: object) -> None:
    with pytest.raises(rp.InvalidDurationError) as e:
        Request(Operation.kv("get"), timeout=1, elapsed=value)
    assert (e.value.code, e.value.field) == ("invalid_duration", "elapsed")


def test_a_lone_surrogate_is_a_typed_error() -> None:
    with pytest.raises(rp.InvalidTypeError) as e:
        Operation.kv("get\ud800")
    assert (e.value.code, e.value.field) == ("invalid_type", "operation")
    with pytest.raises(rp.InvalidTypeError) as e2:
        rp.RetryReason.parse("KV_LOCKED\udfff")
    assert e2.value.code == "invalid_type"
    with pytest.raises(rp.InvalidTypeError):
        rp.classify_query(5000, "bad \ud800 text")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_in_documents_name_their_field(bad: float) -> None:
    with pytest.raises(rp.OutOfRangeError) as e:
        rp.policy_from_dict({"backoff": {"kind": "exponential", "factor": bad}})
    assert e.value.field == "backoff.factor"
    with pytest.raises(rp.OutOfRangeError) as e2:
        rp_http.next_step({"max_attempts": 3}, {"attempts": 1, "elapsed_ms": bad}, {"kind": "response", "status": 503})
    assert e2.value.field == "state.elapsed_ms"


@pytest.mark.parametrize("bad", [print, {1, 2}, object(), b"bytes"])
def test_values_json_cannot_carry_are_typed_errors_naming_their_path(bad: object) -> None:
    with pytest.raises(rp.InvalidTypeError) as e:
        rp.policy_from_dict({"backoff": {"kind": "exponential", "jitter": bad}})
    assert e.value.field == "backoff.jitter"
    with pytest.raises(rp.InvalidTypeError) as e2:
        rp.request_from_dict({"service": "kv", "operation": "get", "timeout_ms": 2500, "x": [1, bad]})
    assert e2.value.field == "x[1]"


@pytest.mark.parametrize("value", [1.5, 503.0])
def test_a_float_where_an_int_is_expected_is_out_of_range_as_in_json(value: float) -> None:
    # JSON and JavaScript have one number type, and the core reads 1.5 for a count as out of range;
    # Python's float reads the same way, so the same input gets the same error code everywhere.
    with pytest.raises(rp.OutOfRangeError) as e:
        rp.classify_search(value)  # type: ignore[arg-type]
    assert e.value.field == "http_status"
    with pytest.raises(rp.OutOfRangeError) as e2:
        rp.classify_kv("get", value)  # type: ignore[arg-type]
    assert e2.value.field == "status"


def _nested(depth: int) -> dict[str, object]:
    """A dict nested ``depth`` levels below its root."""
    doc: dict[str, object] = {}
    for _ in range(depth):
        doc = {"x": doc}
    return doc


def test_cyclic_and_too_deep_documents_are_typed_errors_naming_their_path() -> None:
    # Found by the issue 31 pass: both raised RecursionError (Node and wasm raise these errors).
    cyclic: dict[str, object] = {"kind": "exponential"}
    cyclic["jitter"] = {"again": cyclic}
    with pytest.raises(rp.InvalidTypeError) as e:
        rp.policy_from_dict({"backoff": cyclic})
    assert e.value.field == "backoff.jitter.again"
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(rp.InvalidTypeError) as e2:
        rp_http.next_step({"max_attempts": 3}, {"attempts": 1, "elapsed_ms": 0, "x": looped}, {"kind": "response", "status": 503})
    assert e2.value.field == "state.x[0]"
    with pytest.raises(rp.OutOfRangeError) as e3:
        rp.RetryBudget({"kind": "retry_quota", "x": _nested(200)})
    assert e3.value.field == ".".join(["x"] * 128)  # a path inside, unprefixed as in Node
    with pytest.raises(rp.OutOfRangeError):
        rp.Run({"rules": {"http": {}}, "x": [[[[_nested(5_000)]]]]})


def test_nesting_to_the_limit_reaches_the_core() -> None:
    # 128 levels are JSON's to carry: the core answers (here: an unknown field), not the check.
    with pytest.raises(rp.RetryPolicyError) as e:
        rp.policy_from_dict({"x": _nested(126)})
    assert not isinstance(e.value, rp.OutOfRangeError) or "nested deeper" not in str(e.value)

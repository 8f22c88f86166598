"""The types match the values: the decision kinds at run time, the MongoDB and HTTP ``TypedDict``s
against every fixture's input and the core's answer, and the lines mypy --strict must reject."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
import types
import typing
from typing import Any, Literal, NotRequired, Union, Unpack, get_args, get_origin

import pytest

import retrypolicy as rp
from retrypolicy import NoRetryDecision, Operation, Request, RetryDecision, http, mongodb

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE.parent.parent / "spec-fixtures" / "cases"
# The names the modules import for type checkers only.
TYPING_ONLY = {"NotRequired": NotRequired, "Unpack": Unpack}


def test_the_decision_kinds_answer_isinstance_and_match() -> None:
    retry = rp.decide(Request(Operation.kv("get"), timeout=2.5), "KV_LOCKED")
    no_retry = rp.decide(Request(Operation.kv("upsert"), timeout=2.5), "SOCKET_CLOSED_WHILE_IN_FLIGHT")
    assert isinstance(retry, RetryDecision) and not isinstance(retry, NoRetryDecision)
    assert isinstance(no_retry, NoRetryDecision) and not isinstance(no_retry, RetryDecision)
    assert isinstance(retry, rp.Decision) and isinstance(no_retry, rp.Decision)
    assert not isinstance({"action": "retry", "is_retry": True}, RetryDecision)
    seen = []
    for d in (retry, no_retry):
        match d:
            case RetryDecision(delay_ms=ms):
                seen.append(("retry", ms))
            case NoRetryDecision(cause=cause):
                seen.append(("no_retry", cause))
    assert seen == [("retry", retry.delay_ms), ("no_retry", "not_idempotent")]
    assert isinstance(retry.delay_ms, int) and no_retry.delay_ms is None and no_retry.delay is None
    with pytest.raises(TypeError, match="not instantiable"):
        RetryDecision()


def _hints(tp: Any) -> dict[str, Any]:
    return typing.get_type_hints(tp, localns=TYPING_ONLY, include_extras=True)


def _problems(value: Any, tp: Any, path: str) -> list[str]:
    """How ``value`` fails to be a ``tp`` (empty when it is one)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is NotRequired:
        return _problems(value, args[0], path)
    if tp is Any:
        return []
    if tp is None or tp is type(None):
        return [] if value is None else [f"{path}: {value!r} is not None"]
    if origin is Literal:
        return [] if value in args else [f"{path}: {value!r} not in {args}"]
    if origin in (Union, types.UnionType):
        found = [_problems(value, a, path) for a in args]
        return [] if [] in found else [f"{path}: {value!r} is none of {tp}: {found}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        return [p for i, v in enumerate(value) for p in _problems(v, args[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a dict"]
        return [p for k, v in value.items() for p in _problems(v, args[1], f"{path}.{k}")]
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a {tp.__name__}"]
        hints = _hints(tp)
        required = {k for k, h in hints.items() if tp.__total__ and get_origin(h) is not NotRequired}
        problems = [f"{path}: {tp.__name__} lacks {k!r}" for k in sorted(required - value.keys())]
        problems += [f"{path}: {tp.__name__} has no key {k!r}" for k in sorted(value.keys() - hints.keys())]
        return problems + [p for k, v in value.items() if k in hints for p in _problems(v, hints[k], f"{path}.{k}")]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is int:
        # Milliseconds past 2**53 (no real delay) come as decimal strings, as JSON numbers cannot hold them.
        big = isinstance(value, str) and value.isdigit() and int(value) > 2**53 - 1
        ok = big or (isinstance(value, int) and not isinstance(value, bool))
    else:
        ok = isinstance(value, tp)
    return [] if ok else [f"{path}: {value!r} is not {tp}"]


FUNCTIONS = {
    "mongodb_classify_error": mongodb.classify_error,
    "mongodb_retryable_write_error": mongodb.retryable_write_error,
    "mongodb_retryable_read_error": mongodb.retryable_read_error,
    "mongodb_surfaced_error": mongodb.surfaced_error,
    "mongodb_eligibility": mongodb.eligibility,
    "mongodb_decide": mongodb.decide,
    "mongodb_overload_backoff": mongodb.overload_backoff,
    "mongodb_transaction_labels": mongodb.transaction_labels,
    "mongodb_transaction_backoff": mongodb.transaction_backoff,
    "mongodb_with_transaction": mongodb.with_transaction,
    "mongodb_transaction_step": mongodb.transaction_step,
    "mongodb_idempotency": mongodb.idempotency,
    "mongodb_duplicate_key": mongodb.duplicate_key,
    "mongodb_pending_token_rewrite": mongodb.pending_token_rewrite,
    "http_classify": http.classify,
    "http_retry_after": http.retry_after,
    "http_date": http.parse_date,
    "http_next": http.next_step,
}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(CASES.rglob("*.json")):
        doc = json.loads(path.read_text())
        if doc["function"] in FUNCTIONS:
            found += [(doc["function"], c) for c in doc["cases"] if "expect_error" not in c]
    return found


def test_every_domain_function_is_covered_by_fixtures() -> None:
    assert {f for f, _ in _cases()} == set(FUNCTIONS)


@pytest.mark.parametrize(("function", "case"), _cases(), ids=lambda c: c["id"] if isinstance(c, dict) else c)
def test_fixture_inputs_and_the_cores_answers_fit_the_typeddicts(function: str, case: dict[str, Any]) -> None:
    fn = FUNCTIONS[function]
    hints = _hints(fn)
    problems = []
    unpacked = [get_args(h)[0] for h in hints.values() if get_origin(h) is Unpack]
    if unpacked:  # ``**operation: Unpack[OperationDoc]``: the whole input is one document
        problems += _problems(case["input"], unpacked[0], "**")
    else:
        problems += [p for name, value in case["input"].items() for p in _problems(value, hints[name], name)]
    problems += _problems(fn(**case["input"]), hints["return"], "result")
    assert problems == []


def test_a_wrong_shape_is_caught_by_the_checker() -> None:
    """The checker itself can fail: a missing key, an unknown key, a wrong literal, a wrong tag."""
    assert _problems({"attempts": 1}, http.LoopState, "s") == ["s: LoopState lacks 'elapsed_ms'"]
    assert _problems({"attempts": 1, "elapsed_ms": 0, "delay": 1}, http.LoopState, "s")
    assert _problems({"kind": "network", "sent": True}, http.Attempt, "a")
    assert _problems({"kind": "response", "status": True}, http.Attempt, "a")
    assert not _problems({"kind": "network_error"}, http.Attempt, "a")


# Each line of must_not_typecheck.py that mypy --strict must reject ends with "# E: <error code>".
MUST_FAIL = HERE.parent / "typecheck" / "must_not_typecheck.py"


def test_mypy_strict_rejects_each_marked_line_and_nothing_else() -> None:
    expected = {
        (n, m.group(1))
        for n, line in enumerate(MUST_FAIL.read_text().splitlines(), 1)
        if (m := re.search(r"# E: ([a-z-]+)$", line))
    }
    assert len(expected) >= 5
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir=/dev/null", "--no-error-summary", str(MUST_FAIL)],
        capture_output=True,
        text=True,
        check=False,
    )
    found = {
        (int(m.group(1)), m.group(2))
        for m in re.finditer(r"^[^:\n]+:(\d+): error: .*\[([a-z-]+)\]$", out.stdout, re.M)
    }
    assert found == expected, out.stdout + out.stderr


def test_the_readme_types_block_passes_mypy_strict(tmp_path: pathlib.Path) -> None:
    readme = (HERE.parent / "README.md").read_text()
    block = re.search(r"## Types\n```python\n(.*?)```", readme, re.S)
    assert block is not None
    (tmp_path / "readme_types.py").write_text(block.group(1))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir=/dev/null", "readme_types.py"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr

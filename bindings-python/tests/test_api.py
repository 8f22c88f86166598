"""The Pythonic surface: errors, strategies, logging, threads, the enum, the README quickstart."""

from __future__ import annotations

import logging
import pathlib
import re
import subprocess
import sys
import threading
from datetime import timedelta
from typing import Any

import pytest

import retrypolicy as rp
from retrypolicy import Operation, Request, RetryReason

HERE = pathlib.Path(__file__).resolve().parent


def test_readme_quickstart_runs() -> None:
    text = (HERE.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no python block"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


SUBMODULES = """
import sys
import retrypolicy
assert retrypolicy.http.classify(status=503)["retry_reason"] == "SERVICE_RESPONSE_CODE_INDICATED"
assert retrypolicy.mongodb.run_transaction is not None and retrypolicy.run.Retrying is not None
assert "retrypolicy.httpx" not in sys.modules and sys.modules.get("httpx") is None
"""


LIGHT_IMPORT = """
import sys
import retrypolicy
from retrypolicy.run import AsyncRetrying, Retrying, retry
heavy = {"asyncio", "inspect", "urllib.error"} & set(sys.modules)
assert not heavy, f"import retrypolicy imported {heavy}"
runner = AsyncRetrying(retrypolicy.Operation.kv("get"), timeout=1.0)  # the asyncio runner brings asyncio
assert "asyncio" in sys.modules

async def answer() -> int:
    return 42

import asyncio
assert asyncio.run(runner(answer)) == 42 and retry(retrypolicy.Operation.kv("get"), timeout=1.0)(answer) is not answer
"""


def test_import_retrypolicy_leaves_asyncio_out_until_the_asyncio_runner_is_used() -> None:
    # A fresh interpreter (issue 30: a sync program does not pay for asyncio, 18 ms of 42 ms).
    subprocess.run([sys.executable, "-c", LIGHT_IMPORT], check=True)


def test_submodules_are_attributes_and_httpx_stays_lazy() -> None:
    # A fresh interpreter: this one has imported every submodule already.
    with_httpx = SUBMODULES + "assert retrypolicy.httpx.RetryTransport is not None\n"
    subprocess.run([sys.executable, "-c", with_httpx], check=True)
    # Without httpx installed (its import blocked): the package imports; retrypolicy.httpx says why not.
    without = "import sys\nsys.modules['httpx'] = None\n" + SUBMODULES + (
        "try:\n    retrypolicy.httpx\nexcept ImportError as e:\n    assert 'httpx' in str(e)\nelse:\n    raise AssertionError\n"
    )
    subprocess.run([sys.executable, "-c", without], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(rp, "nope")


def test_enum_mirrors_the_core_table() -> None:
    table = rp._lowlevel.reason_table()
    assert [(m.value, m.name) for m in RetryReason] == [(i, n) for i, n, _, _ in table]
    assert RetryReason.KV_NOT_MY_VBUCKET.always_retry
    assert not RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT.allows_non_idempotent_retry
    assert RetryReason.parse("KV_SYNC_RE_COMMIT_IN_PROGRESS") is RetryReason.KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS


@pytest.mark.parametrize(
    ("call", "exc", "code", "field"),
    [
        (lambda: RetryReason.parse("NOPE"), rp.UnknownReasonError, "unknown_reason", "reason"),
        (lambda: Request(Operation.kv("get"), timeout=-1.0), rp.InvalidDurationError, "invalid_duration", "timeout"),
        (lambda: Request(Operation.kv("get"), timeout=float("nan")), rp.InvalidDurationError, "invalid_duration", "timeout"),
        (lambda: Request(Operation.kv("get"), timeout="2s"), rp.InvalidTypeError, "invalid_type", "timeout"),
        (lambda: Request(Operation.kv("get"), timeout=1, attempts=-1), rp.OutOfRangeError, "out_of_range", "attempts"),
        (lambda: Request(Operation.kv("get"), timeout=1, attempts=True), rp.InvalidTypeError, "invalid_type", "attempts"),
        (lambda: Request(Operation.kv("get"), timeout=1, random=1.0), rp.InvalidRandomError, "invalid_random", "random"),
        (lambda: Request(Operation.kv("get"), timeout=1, strategy="yolo"), rp.UnknownNameError, "unknown_name", "strategy"),
        (lambda: Request("get", timeout=1), rp.InvalidTypeError, "invalid_type", "operation"),
        (lambda: Operation.kv("getx"), rp.UnknownNameError, "unknown_name", "operation"),
        (lambda: Request(Operation.kv("get"), timeout=1).replace(attempt=3), rp.UnknownFieldError, "unknown_field", "attempt"),
        (lambda: rp.decide(Request(Operation.kv("get"), timeout=1), "KV_WHAT"), rp.UnknownReasonError, "unknown_reason", "reason"),
        (lambda: rp.decide(Request(Operation.kv("get"), timeout=1), 99), rp.UnknownReasonError, "unknown_reason", "reason"),
        (lambda: rp.decide(Request(Operation.kv("get"), timeout=1), None), rp.InvalidTypeError, "invalid_type", "reason"),
        (lambda: rp.Policy.from_json("{"), rp.MalformedJsonError, "malformed_json", ""),
        (lambda: rp.policy_from_dict({"version": 2}), rp.UnsupportedVersionError, "unsupported_version", "version"),
        (lambda: rp.policy_from_dict({"stratgy": "x"}), rp.UnknownFieldError, "unknown_field", "stratgy"),
        (lambda: rp.classify_kv("get", 70000), rp.OutOfRangeError, "out_of_range", "status"),
        (lambda: rp.classify_search(-1), rp.OutOfRangeError, "out_of_range", "http_status"),
        (lambda: rp.controlled_backoff_ms(2**32), rp.OutOfRangeError, "out_of_range", "attempt"),
    ],
)
def test_bad_input_raises_typed_errors_naming_the_field(call: Any, exc: type, code: str, field: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, rp.RetryPolicyError)
    assert info.value.code == code
    assert info.value.field == field
    assert field in str(info.value)


def test_every_core_error_code_has_its_own_exception_class() -> None:
    from retrypolicy.errors import ERRORS_BY_CODE

    assert sorted(ERRORS_BY_CODE) == sorted(rp._lowlevel.ERROR_CODES)
    assert all(cls.code == code and cls is not rp.RetryPolicyError for code, cls in ERRORS_BY_CODE.items())


def test_marker_text_in_a_name_cannot_choose_the_error_class() -> None:
    # Found on the old main: the core parsed marker characters out of serde's message, so this
    # unknown operation name raised UnsupportedVersionError.
    with pytest.raises(rp.UnknownNameError) as info:
        Operation.kv("\u0001unsupported_version\u0001pwned\u0001")
    assert not isinstance(info.value, rp.UnsupportedVersionError)
    assert (info.value.code, info.value.field) == ("unknown_name", "operation")


def test_a_long_unknown_name_is_echoed_cut_short() -> None:
    with pytest.raises(rp.UnknownNameError) as info:
        Operation.kv("x" * 10_000)
    message = str(info.value)
    assert "x" * 80 + "…" in message and "x" * 81 not in message
    assert len(message) < 500, message  # the rest is the fixed list of accepted names


@pytest.mark.parametrize(
    "call",
    [
        lambda name: RetryReason.parse(name),
        lambda name: rp.decide(Request(Operation.kv("get"), timeout=1), name),
        lambda name: Request(Operation.kv("get"), timeout=1, previous_reasons=[name]),
        lambda name: rp.request_from_dict(
            {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1, "previous_reasons": [name]}
        ),
    ],
)
def test_a_10000_character_reason_name_gives_a_short_message(call: Any) -> None:
    with pytest.raises(rp.UnknownReasonError) as info:
        call("R" * 10_000)
    message = str(info.value)
    assert "R" * 80 + "…" in message and "R" * 81 not in message
    assert len(message) < 200, message


@pytest.mark.parametrize("digits", [5000, 50])
def test_a_huge_int_is_echoed_cut_short(digits: int) -> None:
    huge = 10**digits
    with pytest.raises(rp.OutOfRangeError) as info:
        Request(Operation.kv("get"), timeout=1, attempts=huge)
    assert info.value.field == "attempts" and len(str(info.value)) < 200
    with pytest.raises(rp.UnknownReasonError) as reason_info:
        rp.decide(Request(Operation.kv("get"), timeout=1), huge)
    assert reason_info.value.field == "reason" and len(str(reason_info.value)) < 200


def test_value_and_type_errors_are_also_builtin_exceptions() -> None:
    with pytest.raises(ValueError):
        Request(Operation.kv("get"), timeout=-1)
    with pytest.raises(TypeError):
        Request(Operation.kv("get"), timeout=[1])


def test_a_user_strategy_exception_propagates_unchanged() -> None:
    class Boom(Exception):
        pass

    sentinel = Boom("from user code")

    class Exploding:
        def retry_after(self, request: Request, reason: RetryReason) -> Any:
            raise sentinel

    with pytest.raises(Boom) as info:
        rp.decide(Request(Operation.kv("get"), timeout=1), RetryReason.KV_LOCKED, strategy=Exploding())
    assert info.value is sentinel


def test_a_user_strategy_sees_the_request_and_its_delay_is_capped() -> None:
    seen: list[tuple[int, RetryReason]] = []

    class Slow:
        def retry_after(self, request: Request, reason: RetryReason) -> Any:
            seen.append((request.attempts, reason))
            return timedelta(seconds=60)

    req = Request(Operation.kv("get"), attempts=3, elapsed=2.0, timeout=2.5)
    d = rp.decide(req, RetryReason.KV_LOCKED, strategy=Slow())
    assert seen == [(3, RetryReason.KV_LOCKED)]
    assert (d.delay_ms, d.capped, d.then_cancel, d.rule) == (500, True, True, "custom_strategy")
    # Always-retry reasons never reach it.
    rp.decide(req, RetryReason.KV_NOT_MY_VBUCKET, strategy=Slow())
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("answer", "exc"),
    [(timedelta(milliseconds=-3), rp.InvalidDurationError), (float("inf"), rp.InvalidDurationError), ("soon", rp.InvalidTypeError)],
)
def test_a_bad_strategy_answer_raises_a_typed_error_naming_it(answer: Any, exc: type) -> None:
    class Bad:
        def retry_after(self, request: Request, reason: RetryReason) -> Any:
            return answer

    with pytest.raises(exc) as info:
        rp.decide(Request(Operation.kv("get"), timeout=1), RetryReason.KV_LOCKED, strategy=Bad())
    assert info.value.field == "strategy.retry_after"


def test_the_two_steps_around_a_host_strategy() -> None:
    req = Request(Operation.kv("get"), elapsed=2.4, timeout=2.5)
    assert rp.decide_before_strategy(req, RetryReason.KV_LOCKED) is None
    d = rp.decide_after_strategy(req, RetryReason.KV_LOCKED, timedelta(milliseconds=900))
    assert (d.delay_ms, d.capped, d.then_cancel, d.rule) == (100, True, True, "custom_strategy")
    assert rp.decide_after_strategy(req, RetryReason.KV_LOCKED, None).cause == "strategy_declined"
    before = rp.decide_before_strategy(req.replace(strategy="fail_fast"), RetryReason.KV_LOCKED)
    assert before is not None and before.rule == "fail_fast"
    with pytest.raises(rp.InvalidTypeError) as info:
        rp.decide_after_strategy(req, RetryReason.KV_LOCKED, "100ms")
    assert info.value.field == "retry_after"


def test_builtin_strategies_and_request_override() -> None:
    req = Request(Operation.kv("get"), timeout=2.5)
    assert rp.decide(req, RetryReason.KV_LOCKED, strategy=rp.FailFast()).rule == "fail_fast"
    assert rp.decide(req.replace(strategy="best_effort"), RetryReason.KV_LOCKED, strategy=rp.FailFast()).is_retry
    slow = rp.policy_from_dict({"backoff": {"kind": "fixed", "delay_ms": 250}})
    assert rp.decide(req, RetryReason.KV_LOCKED, strategy=rp.BestEffort(slow)).delay_ms == 250


def test_decisions_are_immutable_with_a_readable_repr() -> None:
    d = rp.decide(Request(Operation.kv("get"), timeout=2.5), RetryReason.KV_LOCKED)
    with pytest.raises(AttributeError):
        d.delay_ms = 5  # type: ignore[misc]
    assert repr(d).startswith('Decision({"action":"retry","delay_ms":1')
    assert d.delay == timedelta(milliseconds=1)
    assert d.reason is RetryReason.KV_LOCKED


def test_every_decision_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    orch = rp.Orchestrator()
    req = Request(Operation.kv("upsert"), timeout=2.5)
    with caplog.at_level(logging.DEBUG, logger="retrypolicy"):
        orch.decide(req, RetryReason.KV_LOCKED)
        orch.decide(req, RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT)
    records = [r for r in caplog.records if r.name == "retrypolicy"]
    assert len(records) == 2
    assert "retry 1 after 1 ms" in records[0].getMessage() and "KV_LOCKED" in records[0].getMessage()
    assert "no retry" in records[1].getMessage() and "best_effort_not_idempotent" in records[1].getMessage()
    assert records[0].retry_delay_ms == 1 and records[1].retry_delay_ms is None  # type: ignore[attr-defined]


def test_threads_agree_with_a_single_thread() -> None:
    reasons = list(RetryReason)
    requests = [
        Request(Operation.kv(op), attempts=a, elapsed=e / 1000, timeout=2.5)
        for op in ("get", "upsert")
        for a in range(0, 12, 3)
        for e in (0, 1000, 2499, 2500)
    ]
    work = [(r, reason) for r in requests for reason in reasons]
    expected = [rp.decide(r, reason).to_json() for r, reason in work]
    results: dict[int, list[str]] = {}

    def run(n: int) -> None:
        results[n] = [rp.decide(r, reason).to_json() for r, reason in work]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    assert all(r == expected for r in results.values())


def test_simulate_replays_a_schedule() -> None:
    t = rp.simulate(
        {
            "request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
            "outcomes": ["SOCKET_CLOSED_WHILE_IN_FLIGHT", None],
            "latency_ms": 2,
        }
    )
    assert t["ending"] == "succeeded" and len(t["steps"]) == 2 and t["total_ms"] == 5


def test_flaky_counter_example_shows_the_naive_overcount_and_an_exact_policy_count() -> None:
    import subprocess
    import sys

    example = HERE.parents[1] / "examples" / "python" / "flaky_counter.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "counter = 9, pending = []: over-counted" in out.stdout
    assert "7 increments reported done, counter = 7, pending = []: exact" in out.stdout
    assert "command error 2 -> surface" in out.stdout

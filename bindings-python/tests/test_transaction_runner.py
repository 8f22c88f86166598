"""mongodb.run_transaction against a scripted, pymongo-shaped session that replays MongoDB's own
convenient-API tests (``transactions-convenient-api/tests/unified`` in ../shared/peer-specs/mongodb
or PEER_SPECS_DIR; never copied here: absent, the run fails unless RETRYPOLICY_SKIP_CONFORMANCE=1) and the spec's prose tests.

The session plays the server's failCommand fail points and the driver's own parts (labels from
``mongodb.transaction_labels``, one retryable-write retry of commitTransaction); each case checks
the commands the session sent against the spec case's expected events, and the error raised."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest

from retrypolicy import mongodb
from retrypolicy.run import instant_sleeps

HERE = pathlib.Path(__file__).resolve().parent
SPECS = pathlib.Path(os.environ.get("PEER_SPECS_DIR", HERE.parents[2] / "shared" / "peer-specs" / "mongodb"))
UNIFIED = SPECS / "transactions-convenient-api" / "tests" / "unified"

# The server labels these codes TransientTransactionError inside a transaction (the spec tests'
# descriptions name them: "commitTransaction TransientTransactionError (LockTimeout)", ...).
SERVER_TRANSIENT = {24: "LockTimeout", 112: "WriteConflict", 246: "SnapshotUnavailable", 251: "NoSuchTransaction", 267: "PreparedTransactionInProgress"}
CODE_NAMES = {50: "MaxTimeMSExpired", 10107: "NotWritablePrimary", 11000: "DuplicateKey", **SERVER_TRANSIENT}


class OperationFailure(Exception):
    """pymongo-shaped: ``code``, ``_error_labels``, ``details``."""

    def __init__(self, message: str, code: int | None = None, labels: list[str] | None = None, code_name: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self._error_labels = set(labels or ())
        self.details: dict[str, Any] = {"codeName": code_name or CODE_NAMES.get(code or 0)}

    def has_error_label(self, label: str) -> bool:
        return label in self._error_labels


class WriteConcernError(OperationFailure):
    """pymongo's: ``code`` and ``details`` are the writeConcernError document's."""


class ConnectionFailure(OperationFailure):
    """pymongo's network error (the class name is what ``error_document`` reads)."""


def labels_of(exc: BaseException) -> set[str]:
    return set(getattr(exc, "_error_labels", getattr(exc, "labels", ())))


class ScriptedSession:
    """A driver session over a fake server with failCommand fail points."""

    def __init__(self, fail_points: list[dict[str, Any]]) -> None:
        self.fail_points = [{"times": fp["mode"]["times"], **fp["data"]} for fp in fail_points]
        self.state = "no_transaction"
        self.sent: list[str] = []
        self.calls: list[str] = []
        self.ids: set[Any] = set()
        self.pending: set[Any] = set()  # written by the open transaction
        self.callback_starts = 0

    @property
    def in_transaction(self) -> bool:
        return self.state in ("starting", "in_progress")

    def _send(self, command: str) -> None:
        """The server: records the command, then fails it if a fail point says so."""
        self.sent.append(command)
        for fp in self.fail_points:
            if command in fp["failCommands"] and fp["times"] > 0:
                fp["times"] -= 1
                if fp.get("closeConnection"):
                    raise ConnectionFailure("connection closed")
                if "writeConcernError" in fp:
                    wce = fp["writeConcernError"]
                    raise WriteConcernError(wce["errmsg"], wce["code"], code_name=wce.get("codeName", CODE_NAMES.get(wce["code"])))
                code = fp["errorCode"]
                labels = list(fp.get("errorLabels", [])) + (["TransientTransactionError"] if code in SERVER_TRANSIENT else [])
                raise OperationFailure(f"failCommand {code}", code, labels)

    def _labelled(self, command: str, exc: OperationFailure) -> OperationFailure:
        """The driver adds the transaction labels (``transactions.md``), from the core's rules."""
        exc._error_labels |= set(mongodb.transaction_labels(command, mongodb.error_document(exc))["labels"])
        return exc

    def start_transaction(self) -> None:
        self.calls.append("start_transaction")
        self.state = "starting"
        self.pending = set()

    def insert_one(self, document: dict[str, Any]) -> None:
        self.calls.append("insert_one")
        in_transaction = self.in_transaction
        if in_transaction:
            self.state = "in_progress"  # the first command carries startTransaction
        try:
            self._send("insert")
            if document["_id"] in self.ids | self.pending:
                raise OperationFailure("E11000 duplicate key error", 11000)
        except OperationFailure as exc:
            raise self._labelled("other", exc) if in_transaction else exc
        (self.pending if in_transaction else self.ids).add(document["_id"])

    def commit_transaction(self) -> None:
        self.calls.append("commit_transaction")
        if self.state == "starting":
            self.state = "committed"
            return
        self.state = "committed"
        try:
            self._send("commitTransaction")
        except OperationFailure as first:
            if not (isinstance(first, ConnectionFailure) or first.has_error_label("RetryableWriteError")):
                raise self._labelled("commit", first)
            try:  # the driver retries a retryable commit once (retryable writes)
                self._send("commitTransaction")
            except OperationFailure as second:
                raise self._labelled("commit", second)
        self.ids |= self.pending

    def abort_transaction(self) -> None:
        self.calls.append("abort_transaction")
        if self.state == "in_progress":
            self._send("abortTransaction")
        self.state = "aborted"
        self.pending = set()


def spec_cases() -> list[Any]:
    if not UNIFIED.is_dir():
        if os.environ.get("RETRYPOLICY_SKIP_CONFORMANCE") == "1":  # skipped on purpose, as core/tests/conformance.rs
            why = f"{UNIFIED} is absent and RETRYPOLICY_SKIP_CONFORMANCE=1"
            return [pytest.param(None, id="peer-specs-absent", marks=pytest.mark.skip(reason=why))]
        return [pytest.param(None, id="peer-specs-absent")]  # fails in test_spec_case, naming the folder
    cases = []
    for path in sorted(UNIFIED.glob("*.json")):
        for test in json.loads(path.read_text())["tests"]:
            cases.append(pytest.param(test, id=f"{path.stem}: {test['description']}"))
    return cases


def run_callback_ops(session: ScriptedSession, ops: list[dict[str, Any]]) -> None:
    """The unified test's callback: its operations in turn; an error is checked and raised on."""
    for op in ops:
        try:
            if op["name"] == "insertOne":
                session.insert_one(op["arguments"]["document"])
            elif op["name"] == "commitTransaction":
                session.commit_transaction()
            elif op["name"] == "abortTransaction":
                session.abort_transaction()
            elif op["name"] == "startTransaction":
                session.callback_starts += 1
                session.start_transaction()
            else:
                raise AssertionError(f"unexpected callback operation {op['name']}")
        except OperationFailure as exc:
            if op.get("ignoreResultAndError"):
                raise
            assert "expectError" in op, f"{op['name']} raised {exc!r}"
            assert not labels_of(exc) & set(op["expectError"].get("errorLabelsOmit", []))
            raise
        assert "expectError" not in op


def check_error(exc: BaseException, expect: dict[str, Any]) -> None:
    labels = labels_of(exc)
    assert set(expect.get("errorLabelsContain", [])) <= labels
    assert not labels & set(expect.get("errorLabelsOmit", []))
    if "errorCodeName" in expect:
        assert getattr(exc, "details", {}).get("codeName") == expect["errorCodeName"]
    if "errorContains" in expect:
        assert expect["errorContains"] in str(exc)


@pytest.mark.parametrize("test", spec_cases())
def test_convenient_api_spec_case(test: dict[str, Any] | None) -> None:
    if test is None:
        pytest.fail(
            f"the MongoDB specs folder {UNIFIED} is absent: put the specs at ../shared/peer-specs/mongodb, "
            "name them with PEER_SPECS_DIR, or set RETRYPOLICY_SKIP_CONFORMANCE=1 to skip them on purpose"
        )
    fail_points = [op["arguments"]["failPoint"] for op in test["operations"] if op["name"] == "failPoint"]
    session = ScriptedSession(fail_points)
    sleeps: list[float] = []
    for op in test["operations"]:
        if op["name"] != "withTransaction":
            continue
        ops = op["arguments"]["callback"]
        try:
            mongodb.run_transaction(session, lambda s: run_callback_ops(session, ops), sleep=sleeps.append)
        except OperationFailure as exc:
            assert "expectError" in op, f"withTransaction raised {exc!r}"
            check_error(exc, op["expectError"])
        else:
            assert "expectError" not in op
    expected = [e["commandStartedEvent"]["commandName"] for x in test.get("expectEvents", []) for e in x["events"]]
    assert session.sent == expected
    # A backoff before each transaction the runner started again.
    assert len(sleeps) == session.calls.count("start_transaction") - session.callback_starts - 1


class Clock:
    """Fake monotonic time that the script moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_prose_callback_error_propagates_and_value_returns() -> None:
    class Custom(Exception):
        pass

    session = ScriptedSession([])

    def raises(s: Any) -> None:
        session.insert_one({"_id": 1})
        raise Custom("mine")

    with pytest.raises(Custom):
        mongodb.run_transaction(session, raises)
    assert session.calls == ["start_transaction", "insert_one", "abort_transaction"]
    session = ScriptedSession([])
    assert mongodb.run_transaction(session, lambda s: {"value": 42}) == {"value": 42}
    assert session.calls == ["start_transaction", "commit_transaction"]


@pytest.mark.parametrize(
    ("where", "fail_point", "calls"),
    [
        ("callback", {"failCommands": ["insert"], "closeConnection": True}, ["start_transaction", "insert_one", "abort_transaction"]),
        ("commit", {"failCommands": ["commitTransaction"], "errorCode": 10107, "errorLabels": ["RetryableWriteError"]}, ["start_transaction", "insert_one", "commit_transaction"]),
        ("commit", {"failCommands": ["commitTransaction"], "errorCode": 251}, ["start_transaction", "insert_one", "commit_transaction"]),
    ],
)
def test_prose_retry_timeout_is_enforced(where: str, fail_point: dict[str, Any], calls: list[str]) -> None:
    clock = Clock()
    session = ScriptedSession([{"mode": {"times": 10}, "data": fail_point}])

    def callback(s: Any) -> None:
        clock.now += 200.0  # past the spec's 120 s limit
        session.insert_one({"_id": 1})

    with pytest.raises(mongodb.TransactionTimeoutError) as info:
        mongodb.run_transaction(session, callback, clock=clock, sleep=lambda s: None)
    assert session.calls == calls
    last = info.value.__cause__
    assert isinstance(last, OperationFailure) and info.value.last_error is last
    assert set(info.value.labels) == labels_of(last) and not info.value.csot
    assert info.value.has_error_label("UnknownTransactionCommitResult" if fail_point.get("errorCode") == 10107 else "TransientTransactionError")


def test_prose_retry_backoff_is_enforced() -> None:
    def total_backoff(draw: float) -> float:
        session = ScriptedSession([{"mode": {"times": 13}, "data": {"failCommands": ["commitTransaction"], "errorCode": 251}}])
        sleeps: list[float] = []
        mongodb.run_transaction(session, lambda s: session.insert_one({"_id": len(session.calls)}), random=lambda: draw, sleep=sleeps.append)
        assert len(sleeps) == 13 and session.sent.count("commitTransaction") == 14
        return sum(sleeps)

    # The spec's backoff before transaction attempt k + 1: jitter × min(5 ms × 1.5^k, 500 ms).
    ceiling = sum(min(5 * 1.5**k, 500) for k in range(1, 14)) / 1000
    assert total_backoff(0.0) == 0
    assert ceiling - 0.014 <= total_backoff(0.9999) <= ceiling


def test_testing_switch_keeps_the_runs_decisions() -> None:
    """With sleeps instant, each skipped backoff still moves the clock: a transaction whose commit
    fails until its 1 s timeout makes the commits a run sleeping on the same fake clock makes (before,
    the clock stood still and it ran to the failpoint's end)."""

    def commits(testing: bool) -> tuple[int, int]:
        clock = Clock()
        sleeps: list[float] = []

        def sleep(seconds: float) -> None:
            sleeps.append(seconds)
            clock.now += seconds

        session = ScriptedSession([{"mode": {"times": 500}, "data": {"failCommands": ["commitTransaction"], "errorCode": 251}}])
        with instant_sleeps(testing), pytest.raises(mongodb.TransactionTimeoutError):
            mongodb.run_transaction(
                session, lambda s: session.insert_one({"_id": len(session.calls)}), timeout=1, clock=clock, random=lambda: 0.5, sleep=sleep
            )
        return session.sent.count("commitTransaction"), len(sleeps)

    real, skipped = commits(False), commits(True)
    assert 5 < real[0] < 100 and real[1] == real[0] - 1  # the timeout, not the failpoint, ended it
    assert skipped == (real[0], 0)


@pytest.mark.parametrize(("skip", "code"), [(None, 1), ("1", 0)])
def test_absent_specs_fail_the_run_unless_skipped_on_purpose(skip: str | None, code: int, tmp_path: pathlib.Path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "RETRYPOLICY_SKIP_CONFORMANCE"}
    env["PEER_SPECS_DIR"] = str(tmp_path / "absent")
    if skip is not None:
        env["RETRYPOLICY_SKIP_CONFORMANCE"] = skip
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", f"{__file__}::test_convenient_api_spec_case"],
        env=env, cwd=HERE, capture_output=True, text=True,
    )
    assert run.returncode == code, run.stdout
    assert ("is absent" in run.stdout) and ("RETRYPOLICY_SKIP_CONFORMANCE=1" in run.stdout)

"""``mongodb.run_transaction``: withTransaction over a driver's session, every step decided by the
core's state machine (``transactions-convenient-api.md``, via ``mongodb.transaction_step``)."""

from __future__ import annotations

import logging
import random as _random
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Protocol, TypeVar, cast

from ._json_api import call
from ._log import LOGGER, name_of, type_name
from ._mongodb_types import FailureKind, MongoError, RaiseTimeoutAction, SessionState, TransactionState, TransactionStep
from .run import _Skipped, is_testing

T = TypeVar("T")
_Event = dict[str, Any]
"""A ``TransactionEvent`` being built (its keys depend on the event)."""


class Session(Protocol):
    """What the runner needs of a driver session (pymongo's ``ClientSession`` has it)."""

    def start_transaction(self) -> Any: ...
    def commit_transaction(self) -> Any: ...
    def abort_transaction(self) -> Any: ...
    @property
    def in_transaction(self) -> bool: ...


S = TypeVar("S", bound=Session)
"""The driver's session type (pymongo's ``ClientSession``): the callback gets the session it was given."""


class TransactionTimeoutError(TimeoutError):
    """No time was left for another attempt: exposes the last error (``__cause__``, ``last_error``)
    and copies its labels (the spec's "Timeout error propagation")."""

    def __init__(self, action: RaiseTimeoutAction, last_error: Exception) -> None:
        super().__init__(f"withTransaction: no time left to retry ({action['rule']}): {last_error}")
        self.labels: list[str] = list(action["labels"])
        self.csot: bool = action["csot"]
        self.last_error = last_error

    def has_error_label(self, label: str) -> bool:
        """Whether the last error carried ``label``."""
        return label in self.labels


def _names(exc: Exception) -> set[str]:
    """The names of the error's classes."""
    return {c.__name__ for c in type(exc).__mro__}


def _kind(exc: Exception) -> FailureKind:
    """The core's failure kind from a pymongo-shaped error's class names."""
    names = _names(exc)
    if "ServerSelectionTimeoutError" in names:
        return "server_selection"
    if "PoolClearedError" in names:
        return "pool_cleared"
    if names & {"ConnectionFailure", "AutoReconnect", "NetworkTimeout"}:
        return "network"
    return "server"


def error_document(exc: Exception) -> MongoError:
    """A pymongo-shaped error (``code``, ``_error_labels`` or ``error_labels``,
    ``details["writeConcernError"]["code"]``, the exception class names: ``WriteConcernError``,
    ``ConnectionFailure``, ``ServerSelectionTimeoutError``, ...) in the core's form."""
    doc: MongoError = {"kind": _kind(exc)}
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        # pymongo raises an ok: 1 reply's writeConcernError as WriteConcernError with its code.
        if "WriteConcernError" in _names(exc):
            doc["write_concern_code"] = code
        else:
            doc["code"] = code
    labels: Iterable[str] = getattr(exc, "error_labels", None) or getattr(exc, "_error_labels", None) or ()
    doc["labels"] = sorted(labels)
    details = getattr(exc, "details", None)
    wce = details.get("writeConcernError") if isinstance(details, dict) else None
    if isinstance(wce, dict) and isinstance(wce.get("code"), int):
        doc["write_concern_code"] = wce["code"]
    return doc


def _abort(session: Session) -> None:
    """abortTransaction, whose errors are never reported to the application (``transactions.md``)."""
    try:
        session.abort_transaction()
    except Exception:  # noqa: BLE001 - the spec ignores them
        pass


def run_transaction(
    session: S,
    callback: Callable[[S], T],
    *,
    timeout: float | timedelta | None = None,
    clock: Callable[[], float] = time.monotonic,
    random: Callable[[], float] = _random.random,
    sleep: Callable[[float], object] = time.sleep,
    error_document: Callable[[Exception], MongoError] = error_document,
    logger: logging.Logger = LOGGER,
    log_level: int = logging.DEBUG,
    give_up_log_level: int = logging.INFO,
) -> T:
    """withTransaction: starts a transaction, runs ``callback(session)``, commits; retries the
    commit or the whole transaction as the core decides, then returns the callback's value or
    raises its error as is (``TransactionTimeoutError`` when time ran out). ``timeout``: the
    CSOT timeoutMS, or None for the spec's fixed limit. Each step is logged on ``logger`` at
    ``log_level``, the last error's raise (a give-up) at ``give_up_log_level``, with
    ``retry_function`` (the callback), ``retry_error_type`` (the last error's class),
    ``retry_rule``, ``retry_delay_ms``, ``retry_attempt`` and ``retry_attempts`` (the transaction
    attempt) and ``retry_end`` (``gave_up`` or ``timed_out`` on a raise) as record attributes."""
    timeout_ms = None if timeout is None else round((timeout.total_seconds() if isinstance(timeout, timedelta) else timeout) * 1000)
    state: TransactionState = call("mongodb_with_transaction", {"events": []}, timeout_ms=timeout_ms)["state"]
    skipped = _Skipped(clock) if is_testing() else None  # testing: backoffs skipped, the clock moved by each
    if skipped is not None:
        clock = skipped
    start = clock()
    last: Exception | None = None
    result: Any = None

    def failed(name: str, exc: Exception, **more: Any) -> _Event:
        nonlocal last
        last = exc
        return {"event": name, "error": error_document(exc), **more}

    def timed() -> dict[str, Any]:
        return {"elapsed_ms": round((clock() - start) * 1000), "random": random()}

    def attempt() -> _Event:
        nonlocal result
        try:
            session.start_transaction()
        except Exception as exc:
            return failed("start_failed", exc)
        try:
            result = callback(session)
        except Exception as exc:
            return failed("callback_raised", exc, session=_state(session), **timed())
        return {"event": "callback_returned", "session": _state(session)}

    event: _Event = {"event": "begin"}
    while True:
        step = cast(TransactionStep, call("mongodb_transaction_step", {"state": state, "event": event}))
        state, action = step["state"], step["action"]
        name = action["action"]
        end = _ENDS.get(name)
        level = log_level if end is None else give_up_log_level
        if logger.isEnabledFor(level):
            number = state["transaction_attempt"]
            logger.log(
                level,
                "withTransaction %s attempt %d: %s after %s",
                name_of(callback),
                number,
                name,
                event["event"],
                extra={
                    "retry_function": name_of(callback),
                    "retry_error_type": None if last is None or "error" not in event else type_name(last),
                    "retry_rule": action.get("rule"),
                    "retry_delay_ms": action.get("backoff_ms"),
                    "retry_attempt": number,
                    "retry_attempts": number,
                    "retry_end": end,
                },
            )
        if action.get("abort_first"):
            _abort(session)
        if name == "start_transaction":
            event = attempt()
        elif name in ("commit", "retry_commit"):
            try:
                session.commit_transaction()
                event = {"event": "commit_succeeded"}
            except Exception as exc:
                event = failed("commit_failed", exc, **timed())
        elif action["action"] == "retry_transaction":
            if skipped is None:
                sleep(action["backoff_ms"] / 1000)
            else:
                skipped.skip(action["backoff_ms"])
            event = attempt()
        elif name == "return":
            return cast(T, result)
        elif action["action"] == "raise_timeout" and last is not None:
            raise TransactionTimeoutError(action, last) from last
        elif last is not None:  # raise
            raise last
        else:
            raise RuntimeError(f"withTransaction: unexpected action {action}")


_ENDS = {"raise": "gave_up", "raise_timeout": "timed_out"}
"""The actions that give up, and the end each logs as ``retry_end``."""


def _state(session: Session) -> SessionState:
    """The session's transaction state as the core names it: active or not is what it uses."""
    return "in_progress" if session.in_transaction else "no_transaction"

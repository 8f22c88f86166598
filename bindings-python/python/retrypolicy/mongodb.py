"""MongoDB retry rules from the core: error classification, retryable reads and writes, overload
backoff, withTransaction (the state machine, and ``run_transaction`` driving it over a driver's
session), and the idempotency analysis of seeds 000 and 003.

Documents are plain dicts in the JSON shapes of ``spec-fixtures/README.md`` (snake_case keys),
typed as the ``TypedDict``s below for type checkers only; each function returns the core's answer
as a dict. Durations are integer milliseconds (``*_ms``); random draws are
floats in [0, 1) that the caller supplies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

from . import _mongodb_types
from ._json_api import call
from ._mongodb_types import *  # noqa: F403 - the documents' types, listed in its __all__
from ._transaction import Session, TransactionTimeoutError, error_document, run_transaction

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "Session",
    "TransactionTimeoutError",
    "classify_error",
    "decide",
    "duplicate_key",
    "eligibility",
    "error_document",
    "idempotency",
    "overload_backoff",
    "pending_token_rewrite",
    "retryable_read_error",
    "retryable_write_error",
    "run_transaction",
    "surfaced_error",
    "transaction_backoff",
    "transaction_labels",
    "transaction_step",
    "with_transaction",
]
__all__ += _mongodb_types.__all__


def classify_error(error: MongoError) -> ErrorClassification:
    """Network, command or state-change error, with the code's name, group and retryability."""
    return cast(ErrorClassification, call("mongodb_classify_error", {"error": error}))


def retryable_write_error(error: MongoError, server: ServerKind | None = None, retry_writes: bool | None = None) -> WriteVerdict:
    """Whether a write may be retried after ``error`` (RetryableWriteError label, pre-4.4 codes)."""
    return cast(WriteVerdict, call("mongodb_retryable_write_error", {"error": error}, server=server, retry_writes=retry_writes))


def retryable_read_error(error: MongoError) -> Verdict:
    """Whether a read may be retried after ``error``."""
    return cast(Verdict, call("mongodb_retryable_read_error", {"error": error}))


def surfaced_error(kind: Literal["write", "read", "command"], errors: list[MongoError]) -> SurfacedError:
    """Which of the attempts' errors surfaces to the user (the NoWritesPerformed rules)."""
    return cast(SurfacedError, call("mongodb_surfaced_error", {"kind": kind, "errors": errors}))


def eligibility(operation: MongoOperation, retry_writes: bool | None = None, retry_reads: bool | None = None) -> Eligibility:
    """Whether an operation takes part in retryable writes or reads at all."""
    return cast(Eligibility, call("mongodb_eligibility", {"operation": operation}, retry_writes=retry_writes, retry_reads=retry_reads))


def decide(request: MongoRequest, error: MongoError) -> MongoDecision:
    """Retry once, retry after an overload backoff, or surface: one attempt's decision."""
    return cast(MongoDecision, call("mongodb_decide", {"request": request, "error": error}))


def overload_backoff(attempt: int, random: float, base_backoff_ms: int | None = None) -> OverloadBackoff:
    """The client-backpressure backoff for an overload retry."""
    return cast(OverloadBackoff, call("mongodb_overload_backoff", {"attempt": attempt, "random": random}, base_backoff_ms=base_backoff_ms))


def transaction_labels(command: TransactionCommand, error: MongoError) -> Labels:
    """The TransientTransactionError / UnknownTransactionCommitResult labels an error carries."""
    return cast(Labels, call("mongodb_transaction_labels", {"command": command, "error": error}))


def transaction_backoff(transaction_attempt: int, random: float) -> TransactionBackoff:
    """The backoff before retrying a whole transaction."""
    return cast(TransactionBackoff, call("mongodb_transaction_backoff", {"transaction_attempt": transaction_attempt, "random": random}))


def with_transaction(events: list[TransactionEvent], timeout_ms: int | None = None) -> WithTransactionResult:
    """Replays withTransaction over a list of events; returns the actions and the final state."""
    return cast(WithTransactionResult, call("mongodb_with_transaction", {"events": events}, timeout_ms=timeout_ms))


def transaction_step(state: TransactionState, event: TransactionEvent) -> TransactionStep:
    """One step of the withTransaction state machine: (state, event) -> (state, action)."""
    return cast(TransactionStep, call("mongodb_transaction_step", {"state": state, "event": event}))


def idempotency(**operation: Unpack[OperationDoc]) -> IdempotencyReport:
    """Seed 000's analysis of an operation (op, filter, update, documents, unique_fields, upsert)."""
    return cast(IdempotencyReport, call("mongodb_idempotency", operation))


def duplicate_key(document_id: Json, error: DuplicateKeyError) -> DuplicateKeyVerdict:
    """Whether a DuplicateKeyError on a retried insert means the first attempt succeeded."""
    return cast(DuplicateKeyVerdict, call("mongodb_duplicate_key", {"document_id": document_id, "error": error}))


def pending_token_rewrite(
    filter: dict[str, Json], update: Json, token: Json, upsert: bool | None = None, pending_field: str | None = None
) -> PendingTokenRewrite:
    """Seed 000's two-step pending-token rewrite of a non-idempotent update (step1, step2)."""
    inputs = {"filter": filter, "update": update, "token": token}
    return cast(PendingTokenRewrite, call("mongodb_pending_token_rewrite", inputs, upsert=upsert, pending_field=pending_field))

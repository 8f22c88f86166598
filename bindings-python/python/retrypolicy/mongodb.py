"""MongoDB retry rules from the core: error classification, retryable reads and writes, overload
backoff, withTransaction (the state machine, and ``run_transaction`` driving it over a driver's
session), and the idempotency analysis of seeds 000 and 003.

Documents are plain dicts in the JSON shapes of ``spec-fixtures/README.md``; each function returns
the core's answer as a dict. Durations are integer milliseconds (``*_ms``); random draws are
floats in [0, 1) that the caller supplies.
"""

from __future__ import annotations

from typing import Any

from ._json_api import call
from ._transaction import Session, TransactionTimeoutError, error_document, run_transaction

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

Doc = dict[str, Any]


def classify_error(error: Doc) -> Doc:
    """Network, command or state-change error, with the code's name, group and retryability."""
    return call("mongodb_classify_error", {"error": error})


def retryable_write_error(error: Doc, server: str | None = None, retry_writes: bool | None = None) -> Doc:
    """Whether a write may be retried after ``error`` (RetryableWriteError label, pre-4.4 codes)."""
    return call("mongodb_retryable_write_error", {"error": error}, server=server, retry_writes=retry_writes)


def retryable_read_error(error: Doc) -> Doc:
    """Whether a read may be retried after ``error``."""
    return call("mongodb_retryable_read_error", {"error": error})


def surfaced_error(kind: str, errors: list[Doc]) -> Doc:
    """Which of the attempts' errors surfaces to the user (the NoWritesPerformed rules)."""
    return call("mongodb_surfaced_error", {"kind": kind, "errors": errors})


def eligibility(operation: Doc, retry_writes: bool | None = None, retry_reads: bool | None = None) -> Doc:
    """Whether an operation takes part in retryable writes or reads at all."""
    return call("mongodb_eligibility", {"operation": operation}, retry_writes=retry_writes, retry_reads=retry_reads)


def decide(request: Doc, error: Doc) -> Doc:
    """Retry once, retry after an overload backoff, or surface: one attempt's decision."""
    return call("mongodb_decide", {"request": request, "error": error})


def overload_backoff(attempt: int, random: float, base_backoff_ms: int | None = None) -> Doc:
    """The client-backpressure backoff for an overload retry."""
    return call("mongodb_overload_backoff", {"attempt": attempt, "random": random}, base_backoff_ms=base_backoff_ms)


def transaction_labels(command: str, error: Doc) -> Doc:
    """The TransientTransactionError / UnknownTransactionCommitResult labels an error carries."""
    return call("mongodb_transaction_labels", {"command": command, "error": error})


def transaction_backoff(transaction_attempt: int, random: float) -> Doc:
    """The backoff before retrying a whole transaction."""
    return call("mongodb_transaction_backoff", {"transaction_attempt": transaction_attempt, "random": random})


def with_transaction(events: list[Doc], timeout_ms: int | None = None) -> Doc:
    """Replays withTransaction over a list of events; returns the actions and the final state."""
    return call("mongodb_with_transaction", {"events": events}, timeout_ms=timeout_ms)


def transaction_step(state: Doc, event: Doc) -> Doc:
    """One step of the withTransaction state machine: (state, event) -> (state, action)."""
    return call("mongodb_transaction_step", {"state": state, "event": event})


def idempotency(**operation: Any) -> Doc:
    """Seed 000's analysis of an operation (op, filter, update, documents, unique_fields, upsert)."""
    return call("mongodb_idempotency", operation)


def duplicate_key(document_id: Any, error: Doc) -> Doc:
    """Whether a DuplicateKeyError on a retried insert means the first attempt succeeded."""
    return call("mongodb_duplicate_key", {"document_id": document_id, "error": error})


def pending_token_rewrite(
    filter: Doc, update: Doc, token: Any, upsert: bool | None = None, pending_field: str | None = None
) -> Doc:
    """Seed 000's two-step pending-token rewrite of a non-idempotent update (step1, step2)."""
    return call("mongodb_pending_token_rewrite", {"filter": filter, "update": update, "token": token}, upsert=upsert, pending_field=pending_field)

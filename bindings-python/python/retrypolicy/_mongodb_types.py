"""The MongoDB documents of ``spec-fixtures/README.md`` as ``TypedDict``s (typing only: at run time
they are plain dicts with the core's snake_case keys). Keys the core defaults are ``NotRequired``
in inputs; outputs with an ``action`` or ``event`` are unions that narrow on it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

if TYPE_CHECKING:
    from typing import NotRequired

__all__ = [
    "BeginEvent",
    "CallbackRaisedEvent",
    "CallbackReturnedEvent",
    "CommitAction",
    "CommitFailedEvent",
    "CommitSucceededEvent",
    "DuplicateKeyError",
    "DuplicateKeyVerdict",
    "Eligibility",
    "ErrorClassification",
    "FailureKind",
    "IdempotencyReport",
    "Json",
    "Labels",
    "MongoDecision",
    "MongoError",
    "MongoOperation",
    "MongoRequest",
    "OperationDoc",
    "OperationName",
    "OverloadBackoff",
    "PendingTokenRewrite",
    "Phase",
    "PositionalHazard",
    "RaiseAction",
    "RaiseTimeoutAction",
    "RetryCommitAction",
    "RetryMongo",
    "RetryTransactionAction",
    "ReturnAction",
    "ServerKind",
    "SessionState",
    "StartFailedEvent",
    "StartTransactionAction",
    "SurfaceMongo",
    "SurfacedError",
    "TransactionAction",
    "TransactionBackoff",
    "TransactionCommand",
    "TransactionEvent",
    "TransactionState",
    "TransactionStep",
    "UpdateStep",
    "Verdict",
    "WithTransactionResult",
    "WriteVerdict",
]

Json = Any
"""Any JSON value (a filter, an update, a document, an ``_id``)."""
FailureKind = Literal["server", "network", "pool_cleared", "server_selection", "handshake"]
"""Where a failure came from."""
ServerKind = Literal["modern", "legacy_mongod", "legacy_mongos"]
"""Which server answered (pre-4.4 servers need the driver to add RetryableWriteError)."""
OperationName = Literal[
    "insertOne", "insertMany", "updateOne", "replaceOne", "updateMany", "deleteOne", "deleteMany",
    "findOneAndDelete", "findOneAndReplace", "findOneAndUpdate", "bulkWrite", "clientBulkWrite",
    "aggregate", "find", "findOne", "distinct", "count", "estimatedDocumentCount", "countDocuments",
    "watch", "listDatabases", "listDatabaseNames", "listCollections", "listCollectionNames",
    "listIndexes", "listIndexNames", "mapReduce", "getMore", "runCommand", "commitTransaction",
    "abortTransaction", "createIndexes", "dropIndexes", "create", "drop",
]  # fmt: skip
"""The driver operations, named as the specs name them (camelCase)."""
TransactionCommand = Literal["commit", "abort", "other"]
"""The command whose error is labelled."""
SessionState = Literal["no_transaction", "starting", "in_progress", "committed", "aborted"]
"""The session's transaction state."""
Phase = Literal["not_started", "in_callback", "committing", "done"]
"""Where a withTransaction call is."""


class MongoError(TypedDict, total=False):
    """One failed attempt as the driver saw it (``kind`` defaults to ``server``)."""

    kind: FailureKind
    code: int
    labels: list[str]
    write_concern_code: int
    write_error_codes: list[int]
    base_backoff_ms: int
    message: str


# "class" is a keyword: these keys are declared in the functional form.
ErrorClassification = TypedDict(
    "ErrorClassification",
    {
        "class": Literal["network", "state_change", "command", "client"],
        "code_name": Union[str, None],
        "group": Union[Literal["state_change", "routing", "other"], None],
        "retryable_write_code": bool,
        "retryable_read_code": bool,
        "unsupported_deployment_message": Union[str, None],
    },
)
"""``mongodb_classify_error``: the error's class, and its code's name, group and retryability."""


class Verdict(TypedDict):
    """A yes/no answer with the rule that gave it and its spec section."""

    retryable: bool
    rule: str
    section: str


class WriteVerdict(Verdict):
    """``mongodb_retryable_write_error``: the verdict and the labels after the driver adds
    RetryableWriteError."""

    labels: list[str]


class SurfacedError(TypedDict):
    """``mongodb_surfaced_error``: which attempt's error surfaces (its index, code and labels)."""

    index: int
    code: int | None
    labels: list[str]


class MongoOperation(TypedDict):
    """An operation and the facts that decide its retryability."""

    name: OperationName
    multi: NotRequired[bool]
    unacknowledged: NotRequired[bool]
    write_stage: NotRequired[bool]
    in_transaction: NotRequired[bool]


Eligibility = TypedDict(
    "Eligibility",
    {
        "class": Literal["read", "write", "command"],
        "retryable_write": bool,
        "retryable_read": bool,
        "overload_retry": bool,
        "rule": str,
        "section": str,
    },
)
"""``mongodb_eligibility``: whether an operation takes part in retryable writes, reads, overload retries."""


class MongoRequest(TypedDict):
    """One command when an attempt failed; the client options default to the specs' defaults."""

    operation: MongoOperation
    retry_writes: NotRequired[bool]
    retry_reads: NotRequired[bool]
    server: NotRequired[ServerKind]
    max_adaptive_retries: NotRequired[int]
    attempts: NotRequired[int]
    overloaded: NotRequired[bool]
    elapsed_ms: NotRequired[int]
    timeout_ms: NotRequired[int]
    random: NotRequired[float]


class _Decided(TypedDict):
    """What both kinds of ``mongodb_decide`` answer carry."""

    attempts: int
    overloaded: bool
    labels: list[str]
    rule: str
    section: str


class RetryMongo(_Decided):
    """``mongodb_decide``: retry after ``delay_ms``, as a retryable write, read or overload retry."""

    action: Literal["retry"]
    delay_ms: int
    retryable_as: Literal["write", "read", "overload"]


class SurfaceMongo(_Decided):
    """``mongodb_decide``: surface the error."""

    action: Literal["surface"]


MongoDecision = Union[RetryMongo, SurfaceMongo]
"""One attempt's decision, by ``action``."""


class OverloadBackoff(TypedDict):
    """``mongodb_overload_backoff``: the delay and its ceiling."""

    delay_ms: int
    ceiling_ms: int


class Labels(TypedDict):
    """``mongodb_transaction_labels``."""

    labels: list[str]


class TransactionBackoff(TypedDict):
    """``mongodb_transaction_backoff``."""

    backoff_ms: int


class TransactionState(TypedDict):
    """The state of one withTransaction call (the limit: timeoutMS, else 120 000 ms)."""

    timeout_ms: int
    csot: NotRequired[bool]
    transaction_attempt: NotRequired[int]
    phase: Phase


class BeginEvent(TypedDict):
    """withTransaction was called."""

    event: Literal["begin"]


class StartFailedEvent(TypedDict):
    """startTransaction raised."""

    event: Literal["start_failed"]
    error: MongoError


class CallbackReturnedEvent(TypedDict):
    """The callback returned, leaving the session in ``session``."""

    event: Literal["callback_returned"]
    session: SessionState


class CallbackRaisedEvent(TypedDict):
    """The callback raised ``error``, ``elapsed_ms`` after the call began."""

    event: Literal["callback_raised"]
    session: SessionState
    error: MongoError
    elapsed_ms: int
    random: NotRequired[float]


class CommitSucceededEvent(TypedDict):
    """commitTransaction succeeded."""

    event: Literal["commit_succeeded"]


class CommitFailedEvent(TypedDict):
    """commitTransaction raised ``error``, ``elapsed_ms`` after the call began."""

    event: Literal["commit_failed"]
    error: MongoError
    elapsed_ms: int
    random: NotRequired[float]


TransactionEvent = Union[
    BeginEvent, StartFailedEvent, CallbackReturnedEvent, CallbackRaisedEvent, CommitSucceededEvent, CommitFailedEvent
]
"""What happened, by ``event``."""


class StartTransactionAction(TypedDict):
    """Start a transaction, then invoke the callback."""

    action: Literal["start_transaction"]


class CommitAction(TypedDict):
    """Invoke commitTransaction."""

    action: Literal["commit"]


class RetryCommitAction(TypedDict):
    """Invoke commitTransaction again."""

    action: Literal["retry_commit"]
    rule: str
    section: str


class RetryTransactionAction(TypedDict):
    """Abort first when ``abort_first``, sleep ``backoff_ms``, then start again."""

    action: Literal["retry_transaction"]
    abort_first: bool
    backoff_ms: int
    rule: str
    section: str


class RaiseAction(TypedDict):
    """Abort first when ``abort_first``, then propagate ``error`` as is."""

    action: Literal["raise"]
    abort_first: bool
    error: MongoError
    rule: str
    section: str


class RaiseTimeoutAction(TypedDict):
    """Abort first when ``abort_first``, then raise a timeout error wrapping ``cause``, with its labels."""

    action: Literal["raise_timeout"]
    abort_first: bool
    labels: list[str]
    csot: bool
    cause: MongoError
    rule: str
    section: str


class ReturnAction(TypedDict):
    """The transaction committed (or the callback ended it): return."""

    action: Literal["return"]


TransactionAction = Union[
    StartTransactionAction,
    CommitAction,
    RetryCommitAction,
    RetryTransactionAction,
    RaiseAction,
    RaiseTimeoutAction,
    ReturnAction,
]
"""What the host does next, by ``action``."""


class WithTransactionResult(TypedDict):
    """``mongodb_with_transaction``: the actions' names, the last action, the backoffs and the state."""

    actions: list[str]
    last: TransactionAction | None
    backoffs_ms: list[int]
    state: TransactionState


class TransactionStep(TypedDict):
    """``mongodb_transaction_step``: the next state and the action."""

    state: TransactionState
    action: TransactionAction


class OperationDoc(TypedDict):
    """``mongodb_idempotency``'s input: an application operation (``filter`` defaults to ``{}``,
    ``unique_fields`` to ``["_id"]``)."""

    op: Literal[
        "find", "findOne", "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany"
    ]
    filter: NotRequired[dict[str, Json]]
    update: NotRequired[dict[str, Json] | list[dict[str, Json]]]
    documents: NotRequired[list[dict[str, Json]]]
    unique_fields: NotRequired[list[str]]
    upsert: NotRequired[bool]


class PositionalHazard(TypedDict):
    """An update path addressing an array element by index (seed 003) and its safer form."""

    operator: str
    path: str
    array_path: str
    index: str
    suggested_path: str
    element_id_field: str
    nested: bool
    section: str


class IdempotencyReport(TypedDict):
    """``mongodb_idempotency``: whether a retry is safe, why, and the positional hazards."""

    idempotent: bool
    rule: str
    section: str
    non_idempotent_operators: list[str]
    duplicate_key_on_retry_is_success: bool
    hazards: list[PositionalHazard]


class DuplicateKeyError(TypedDict):
    """A DuplicateKeyError (code 11000) as the server reported it."""

    code: int
    key_pattern: NotRequired[dict[str, Json]]
    index: NotRequired[str]
    key_value: NotRequired[dict[str, Json]]


class DuplicateKeyVerdict(TypedDict):
    """``mongodb_duplicate_key``: whether the retried insert's first attempt succeeded."""

    first_attempt_succeeded: bool
    rule: str
    section: str


class UpdateStep(TypedDict):
    """One ``updateOne(filter, update, upsert)``."""

    filter: dict[str, Json]
    update: Json
    upsert: bool


class PendingTokenRewrite(TypedDict):
    """``mongodb_pending_token_rewrite``: seed 000's two steps, and the cleanup pipeline for a pure ``$inc``."""

    step1: UpdateStep
    step2: UpdateStep
    cleanup_pipeline: list[dict[str, Json]] | None
    section: str

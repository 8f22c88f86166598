"""The policy, budget and breaker documents and the budget and breaker snapshots as ``TypedDict``s
(the JSON shapes of ``spec-fixtures/README.md``; typing only: at run time they are plain dicts).
Times are integer milliseconds (a decimal string past 2**53, which no real clock reaches)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict, Union

from .http import Backoff, Jitter

if TYPE_CHECKING:
    from typing import NotRequired

__all__ = [
    "BreakerDocument",
    "BreakerSnapshot",
    "BucketSnapshot",
    "BudgetDocument",
    "BudgetSnapshot",
    "CompatOptions",
    "PercentageDocument",
    "PolicyDocument",
    "RetryQuotaDocument",
    "TokenBucketDocument",
]

BudgetKind = Literal["token_bucket", "retry_quota", "percentage"]
"""gRPC's token bucket (gRFC A6), the AWS SDKs' retry quota, Finagle's percentage."""


class TokenBucketDocument(TypedDict):
    """gRPC's retry throttling: ``max_tokens`` and ``token_ratio`` are required unless ``lenient``."""

    kind: Literal["token_bucket"]
    version: NotRequired[int]
    max_tokens: NotRequired[float]
    token_ratio: NotRequired[float]
    lenient: NotRequired[bool]


class RetryQuotaDocument(TypedDict):
    """The AWS SDKs' standard-mode retry quota (defaults 500, 5, 10, 5, 1; ``costs`` picks the table)."""

    kind: Literal["retry_quota"]
    version: NotRequired[int]
    capacity: NotRequired[int]
    retry_cost: NotRequired[int]
    timeout_cost: NotRequired[int]
    throttling_cost: NotRequired[int]
    costs: NotRequired[Literal["classic", "2026"]]
    no_retry_increment: NotRequired[int]


class PercentageDocument(TypedDict):
    """Finagle's retry budget: ``percent`` of the window's requests plus ``min_retries_per_sec``."""

    kind: Literal["percentage"]
    version: NotRequired[int]
    percent: NotRequired[float]
    ttl_ms: NotRequired[int]
    min_retries_per_sec: NotRequired[int]


BudgetDocument = Union[TokenBucketDocument, RetryQuotaDocument, PercentageDocument]
"""A retry budget's configuration, by ``kind``."""


class BucketSnapshot(TypedDict):
    """One slice (a tenth) of a percentage budget's window."""

    slice: int
    requests: int
    retries: int


class BudgetSnapshot(TypedDict):
    """A budget's state (``RetryBudget.snapshot()``): the balance, or a percentage's slices."""

    kind: BudgetKind
    version: NotRequired[int]
    balance: NotRequired[int]
    buckets: NotRequired[list[BucketSnapshot]]


class BreakerDocument(TypedDict, total=False):
    """A circuit breaker's configuration (Couchbase's defaults: 20, 50 %, 5 s, 1 min, 5 s)."""

    version: int
    enabled: bool
    volume_threshold: int
    error_threshold_percentage: int
    sleep_window_ms: int
    rolling_window_ms: int
    canary_timeout_ms: int


class BreakerSnapshot(TypedDict):
    """A breaker's state (``CircuitBreaker.snapshot()``)."""

    state: Literal["closed", "open", "half_open"]
    total: int
    failures: int
    version: NotRequired[int]
    since_ms: NotRequired[int]
    window_start_ms: NotRequired[int]


class CompatOptions(TypedDict, total=False):
    """Deviations from RFC 0049, all off by default (README, "Compatibility options")."""

    collection_outdated_not_always_retry: bool
    retry_kv_busy: bool
    query_retry_4040_to_4090: bool
    retry_unknown_if_idempotent: bool


class PolicyDocument(TypedDict, total=False):
    """A policy (``policy_from_dict``): every key optional, RFC 0049's defaults otherwise."""

    version: int
    strategy: Literal["best_effort", "fail_fast"]
    backoff: Backoff
    jitter: Jitter
    compat: CompatOptions
    budget: BudgetDocument
    breaker: BreakerDocument

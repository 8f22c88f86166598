"""The AWS SDKs' retry modes, decided by the core: standard (and adaptive, whose retry decisions are
standard's), botocore's legacy, and adaptive mode's client-side rate limiter.

One ``aws_decide`` per failed attempt. The retry quota is a ``RetryBudget`` of kind
``retry_quota`` (``{"kind": "retry_quota", "costs": "2026"}`` for the 2026 behaviour): ask it with
the decision's ``cause`` (``quota.try_retry(now_ms, d.cause)``) when the decision says retry, and
when it refuses decide again with its verdict (``budget_verdict=``), which turns the retry into a
no-retry with the quota's rule. Documents and snapshots are dicts typed below as ``TypedDict``s
(snake_case keys, times in integer milliseconds), for type checkers only; the core reads no clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from ._lowlevel import AcquireVerdict, AdaptiveRateLimiter, AwsDecision, AwsRetryConfig, RateUpdate, aws_decide

if TYPE_CHECKING:
    from typing import NotRequired

__all__ = [
    "AcquireVerdict",
    "AdaptiveRateLimiter",
    "AwsDecision",
    "AwsError",
    "AwsRetryConfig",
    "AwsRetryDocument",
    "Behavior",
    "Cause",
    "Mode",
    "RateLimiterDocument",
    "RateLimiterSnapshot",
    "RateUpdate",
    "aws_decide",
]

Mode = Literal["standard", "adaptive", "legacy"]
"""The SDKs' ``retry_mode``."""

Behavior = Literal["classic", "2026"]
"""Standard mode's timing: classic, or the SDKs' 2026 update (``AWS_NEW_RETRIES_2026``)."""

Cause = Literal["error", "timeout", "throttling"]
"""What a retry is charged for in the quota (``AwsDecision.cause``, ``RetryBudget.try_retry``)."""


class AwsRetryDocument(TypedDict, total=False):
    """An AWS retry configuration: every key optional (standard, classic, 3 attempts, 20 s
    ``MAX_BACKOFF``); legacy mode has no ``behavior``, ``max_backoff_ms`` or ``long_polling``."""

    version: int
    mode: Mode
    behavior: Behavior
    max_attempts: int
    service: str
    max_backoff_ms: int
    long_polling: bool


class AwsError(TypedDict, total=False):
    """What a failed attempt produced: a response (``status``, the AWS error ``code``, the modeled
    shape's ``retryable_trait``, ``x-amz-retry-after`` as ``retry_after``, DynamoDB's
    ``crc32_mismatch``) or none (``connection_error``, ``timeout``), never both."""

    code: str
    status: int
    connection_error: bool
    timeout: bool
    retryable_trait: Literal["transient", "throttling"]
    retry_after: str
    crc32_mismatch: bool


class RateLimiterDocument(TypedDict, total=False):
    """The limiter's constants (botocore's: 0.5, 0.7, 0.4, 0.8)."""

    version: int
    min_fill_rate: float
    beta: float
    scale_constant: float
    smoothing: float


class RateLimiterSnapshot(TypedDict):
    """A limiter's state (``AdaptiveRateLimiter.snapshot()``)."""

    version: NotRequired[int]
    enabled: bool
    fill_rate: float
    max_capacity: float
    capacity: float
    last_refill_ms: int
    last_max_rate: float
    last_throttle_ms: int
    measured_rate: float
    last_bucket_ms: int
    request_count: int

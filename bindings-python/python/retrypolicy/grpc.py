"""gRPC's retry and hedging policy (gRFC A6), decided by the core: the service config's policies
validated and matched by method, the decision after each attempt of a retried call, and the step
machine of a hedged call, with gRPC's ``retryThrottling`` bucket as a ``RetryBudget``.

Policies are gRPC's own JSON (camelCase keys, proto3 durations such as ``".1s"``, status codes by
name in any case or by number); the call's state, an attempt and a hedging event are dicts typed
below as ``TypedDict``s (snake_case keys, times in integer milliseconds), for type checkers only.
The core reads no clock: the throttling bucket is told ``now_ms``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict, Union

from ._lowlevel import (
    GrpcHedgeStep,
    GrpcRetryDecision,
    HedgingPolicy,
    RetryPolicy,
    ServiceConfig,
    grpc_hedge,
    grpc_retry,
)

if TYPE_CHECKING:
    from typing import NotRequired

__all__ = [
    "Attempt",
    "AttemptEnded",
    "GrpcHedgeStep",
    "GrpcRetryDecision",
    "HedgeEvent",
    "HedgeState",
    "HedgingPolicy",
    "HedgingPolicyDocument",
    "Jitter",
    "MethodConfig",
    "MethodName",
    "Reach",
    "RetryPolicy",
    "RetryPolicyDocument",
    "RetryState",
    "RetryThrottlingDocument",
    "ServiceConfig",
    "ServiceConfigDocument",
    "StatusCode",
    "grpc_hedge",
    "grpc_retry",
]

StatusCode = Literal[
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
]
"""A gRPC status code's canonical name (inputs also take its number, 0 to 16, or any case)."""

Jitter = Literal["full", "plus_minus_20_percent"]
"""The default ``"plus_minus_20_percent"``, ``bound × (0.8 + 0.4 r)`` (A6's text since 2024-08-29),
or ``"full"``, a draw from ``[0, bound)`` (A6's text before)."""

Reach = Literal["processed", "never_sent", "unprocessed"]
"""How far a failed attempt got (A6 "Transparent Retries")."""


class RetryPolicyDocument(TypedDict):
    """``retryPolicy``: every key required (A6's validation)."""

    maxAttempts: int
    initialBackoff: str
    maxBackoff: str
    backoffMultiplier: float
    retryableStatusCodes: list[StatusCode | int]


class HedgingPolicyDocument(TypedDict):
    """``hedgingPolicy``: ``hedgingDelay`` absent or ``"0s"`` sends every attempt at once."""

    maxAttempts: int
    hedgingDelay: NotRequired[str]
    nonFatalStatusCodes: NotRequired[list[StatusCode | int]]


class RetryThrottlingDocument(TypedDict):
    """``retryThrottling``: ``maxTokens`` in (0, 1000], ``tokenRatio`` above 0 (read to the thousandth)."""

    maxTokens: int
    tokenRatio: float


class MethodName(TypedDict, total=False):
    """A method config's name: no method is the service's default, no service the default config."""

    service: str
    method: str


class MethodConfig(TypedDict):
    """One method config: its names and at most one of the two policies (other keys are ignored)."""

    name: list[MethodName]
    retryPolicy: NotRequired[RetryPolicyDocument]
    hedgingPolicy: NotRequired[HedgingPolicyDocument]


class ServiceConfigDocument(TypedDict, total=False):
    """The part of a service config A6 reads (``ServiceConfig`` takes any mapping: gRPC's other
    fields, such as ``loadBalancingPolicy``, are ignored)."""

    methodConfig: list[MethodConfig]
    retryThrottling: RetryThrottlingDocument


class RetryState(TypedDict):
    """A retried call before a decision: attempts sent that count toward ``maxAttempts`` (the
    failed one included), retries so far (transparent ones too), retries since the last pushback
    (the backoff's exponent), ms since the call started and its deadline (ms from its start)."""

    attempts: int
    retries: NotRequired[int]
    retries_since_pushback: NotRequired[int]
    elapsed_ms: NotRequired[int]
    deadline_ms: NotRequired[int | None]


class Attempt(TypedDict):
    """How one attempt ended: its status, the ``grpc-retry-pushback-ms`` values in order, whether
    the call was committed (response headers arrived), and how far it got."""

    status: StatusCode | int
    pushback: NotRequired[list[str]]
    committed: NotRequired[bool]
    reach: NotRequired[Reach]


class HedgeState(TypedDict):
    """A hedged call (``GrpcHedgeStep.state``): attempts sent and out, whether hedging stopped and
    the call is over, the last failed attempt's status."""

    sent: int
    outstanding: int
    stopped: bool
    done: bool
    last_status: NotRequired[StatusCode]


class AttemptEnded(TypedDict):
    """One attempt of a hedged call ended (its ``committed`` and ``reach`` are not read)."""

    event: Literal["attempt_ended"]
    attempt: Attempt


class _BareEvent(TypedDict):
    event: Literal["start", "hedge_due", "committed"]


HedgeEvent = Union[Literal["start", "hedge_due", "committed"], _BareEvent, AttemptEnded]
"""What happened to a hedged call: it starts, the wait a step asked for is over, an attempt
ended, or the host committed it to one attempt."""

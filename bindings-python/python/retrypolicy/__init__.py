"""retrypolicy: one retry-policy engine for every SDK (Couchbase RFC 0049), decided in Rust.

Durations: inputs accept ``datetime.timedelta`` or seconds (int/float); outputs are integer
milliseconds (``*_ms``), and ``Decision.delay`` is also offered as a ``timedelta``.
"""

from __future__ import annotations

import importlib
import json
import logging
from typing import TYPE_CHECKING, Any, Protocol

from . import _json_api, _lowlevel, http, mongodb, run
from ._lowlevel import (
    AdaptiveRateLimiter,
    AwsRetryConfig,
    BestEffort,
    BreakerChange,
    BreakerVerdict,
    BudgetVerdict,
    CircuitBreaker,
    Classification,
    Decision,
    FailFast,
    Operation,
    Policy,
    Request,
    Run,
    RunConfig,
    RunStats,
    RunStep,
    ServiceConfig,
    aws_decide,
    classify_analytics,
    classify_dispatch,
    classify_query,
    classify_search,
    classify_views,
    controlled_backoff_ms,
    backoff_delay_ms,
    decide,
    decide_after_strategy,
    decide_before_strategy,
    decide_with_budget,
    explain_with_budget,
    grpc_hedge,
    grpc_retry,
    RetryBudget,
)
from ._decision import NoRetryDecision, RetryDecision
from ._log import LOGGER, log_decision
from ._reason import RetryReason
from .errors import (
    InvalidDurationError,
    InvalidRandomError,
    InvalidTypeError,
    MalformedJsonError,
    MissingFieldError,
    OutOfRangeError,
    RetryPolicyError,
    UnknownFieldError,
    UnknownNameError,
    UnknownReasonError,
    UnsupportedVersionError,
)

__version__: str = _lowlevel.__version__

# ``retrypolicy.httpx`` and ``retrypolicy.otel`` are imported on first use: httpx and
# opentelemetry-api are optional dependencies (the ``[httpx]`` and ``[opentelemetry]`` extras). The other submodules are imported above, so ``retrypolicy.http`` works without a
# separate import. ``retrypolicy.grpc`` and ``retrypolicy.aws`` too, on first access: their
# classes and functions are the native module's (above), the modules add the documents' types.
# The documents' TypedDicts (``_documents.py``) too, on first access: typing is their use (1 ms of
# import time, issue 30).
if TYPE_CHECKING:
    from . import aws, grpc, httpx, otel
    from ._documents import (
        BreakerDocument,
        BreakerSnapshot,
        BucketSnapshot,
        BudgetDocument,
        BudgetSnapshot,
        CompatOptions,
        PercentageDocument,
        PolicyDocument,
        RetryQuotaDocument,
        TokenBucketDocument,
    )
else:

    def __getattr__(name: str) -> Any:
        """``retrypolicy.httpx`` and ``retrypolicy.otel`` imported on first access (they need httpx
        and opentelemetry-api installed), ``retrypolicy.grpc``, ``retrypolicy.aws`` and the
        documents' types."""
        if name in ("httpx", "otel", "grpc", "aws"):
            return importlib.import_module(f".{name}", __name__)
        if name in _DOCUMENTS:
            return getattr(importlib.import_module("._documents", __name__), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    _DOCUMENTS = frozenset(
        ("BreakerDocument", "BreakerSnapshot", "BucketSnapshot", "BudgetDocument", "BudgetSnapshot", "CompatOptions")
        + ("PercentageDocument", "PolicyDocument", "RetryQuotaDocument", "TokenBucketDocument")
    )

__all__ = [
    "AdaptiveRateLimiter",
    "AwsRetryConfig",
    "BestEffort",
    "BreakerChange",
    "BreakerDocument",
    "BreakerSnapshot",
    "BreakerVerdict",
    "BucketSnapshot",
    "BudgetDocument",
    "BudgetSnapshot",
    "BudgetVerdict",
    "CompatOptions",
    "PercentageDocument",
    "PolicyDocument",
    "RetryQuotaDocument",
    "TokenBucketDocument",
    "CircuitBreaker",
    "Classification",
    "Decision",
    "FailFast",
    "InvalidDurationError",
    "InvalidRandomError",
    "InvalidTypeError",
    "MalformedJsonError",
    "MissingFieldError",
    "NoRetryDecision",
    "Operation",
    "Orchestrator",
    "OutOfRangeError",
    "Policy",
    "Request",
    "RetryPolicyError",
    "RetryBudget",
    "RetryDecision",
    "RetryReason",
    "RetryStrategy",
    "Run",
    "RunConfig",
    "RunStats",
    "RunStep",
    "ServiceConfig",
    "UnknownFieldError",
    "UnknownNameError",
    "UnknownReasonError",
    "UnsupportedVersionError",
    "aws",
    "aws_decide",
    "backoff_delay_ms",
    "classify_analytics",
    "classify_dispatch",
    "classify_kv",
    "classify_query",
    "classify_search",
    "classify_views",
    "controlled_backoff_ms",
    "decide",
    "decide_after_strategy",
    "decide_before_strategy",
    "decide_with_budget",
    "explain",
    "explain_with_budget",
    "grpc",
    "grpc_hedge",
    "grpc_retry",
    "http",
    "mongodb",
    "policy_from_dict",
    "request_from_dict",
    "run",
    "simulate",
    "simulate_storm",
]


class RetryStrategy(Protocol):
    """What ``decide`` calls for reasons that are not always-retry: a delay, or None for no retry."""

    def retry_after(self, request: Request, reason: RetryReason) -> Any:
        """Return a ``timedelta`` or seconds to retry after, or None to fail the request."""


def classify_kv(
    operation: str,
    status: int | str,
    *,
    error_map: str | dict[str, Any] | None = None,
    policy: Policy | None = None,
) -> Classification:
    """Classifies a KV status (an int, or hex text such as ``"0xa2"``) for an operation; ``error_map``
    is the server's map (JSON text or dict)."""
    text = _json_api.dumps(error_map) if isinstance(error_map, dict) else error_map
    return _lowlevel.classify_kv(operation, status, error_map=text, policy=policy)


def policy_from_dict(document: PolicyDocument) -> Policy:
    """Loads a policy from its JSON-shaped dict; errors name the offending field."""
    return Policy.from_json(_json_api.dumps(document))


def request_from_dict(document: dict[str, Any]) -> Request:
    """Loads a request from the spec-fixture form (``*_ms`` integer milliseconds)."""
    return Request.from_json(_json_api.dumps(document))


def explain(request: Request, reason: RetryReason | str, policy: Policy | None = None) -> str:
    """The decision for ``request`` as one plain sentence naming the rule and the spec section."""
    name = reason.name if isinstance(reason, RetryReason) else reason
    inputs: dict[str, Any] = {"request": json.loads(request.to_json()), "reason": name}
    if policy is not None:
        inputs["policy"] = json.loads(policy.to_json())
    sentence: str = _json_api.call("explain", inputs)["sentence"]
    return sentence


def simulate(scenario: dict[str, Any]) -> dict[str, Any]:
    """Replays a whole schedule (request, outcomes, latency_ms, policy, draws) and returns the timeline."""
    result: dict[str, Any] = json.loads(_lowlevel.simulate_json(_json_api.dumps(scenario)))
    return result


def simulate_storm(scenario: dict[str, Any]) -> dict[str, Any]:
    """Replays a retry storm (many requests under a failure rate, through ``decide``, an optional
    shared ``budget`` and ``breaker`` document) and reports the amplification (attempts / requests)."""
    return _json_api.call("simulate_storm", scenario)


class Orchestrator:
    """``decide`` plus one log line per retry and per non-retry on the ``retrypolicy`` logger (RFC 0049)."""

    def __init__(
        self,
        policy: Policy | None = None,
        strategy: RetryStrategy | None = None,
        *,
        logger: logging.Logger | None = None,
        level: int = logging.DEBUG,
    ) -> None:
        self.policy = policy
        self.strategy = strategy
        self.logger = logger or LOGGER
        self.level = level

    def decide(self, request: Request, reason: RetryReason | str) -> Decision:
        """Decides, logs the decision record, and returns it."""
        decision = decide(request, reason, self.policy, self.strategy)
        log_decision(self.logger, self.level, request.operation, decision)
        return decision

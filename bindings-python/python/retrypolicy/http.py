"""HTTP and saga retry rules from the core: status classes, Retry-After, and a bounded retry loop.

Documents are plain dicts in the JSON shapes of ``spec-fixtures/README.md`` (snake_case keys),
typed below as ``TypedDict``s for type checkers only; times are integer milliseconds (a decimal
string past 2**53, which no real delay reaches), and "now" is passed in as Unix milliseconds
(the core reads no clock).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union, cast

from ._json_api import call
from ._lowlevel import BudgetVerdict

if TYPE_CHECKING:
    from typing import NotRequired

__all__ = [
    "Attempt",
    "Backoff",
    "Classification",
    "ControlledBackoff",
    "DateResult",
    "ExponentialBackoff",
    "FixedBackoff",
    "HttpClass",
    "Jitter",
    "Loop",
    "LoopState",
    "NetworkErrorAttempt",
    "ResponseAttempt",
    "RetryAfterResult",
    "RetryStep",
    "Step",
    "StopStep",
    "classify",
    "next_step",
    "parse_date",
    "retry_after",
]

HttpClass = Literal["success", "redirect", "rejection", "transient"]
"""What a status or network error means to a caller."""
Jitter = Literal["none", "full", "equal", "decorrelated"]
"""How a random draw spreads a backoff delay."""


class ExponentialBackoff(TypedDict):
    """``min_ms`` × ``factor``^attempt within [``min_ms``, ``max_ms``] (defaults 1 ms, 500 ms, 2)."""

    kind: Literal["exponential"]
    min_ms: NotRequired[int]
    max_ms: NotRequired[int]
    factor: NotRequired[float]
    first: NotRequired[Literal["min", "zero"]]


class ControlledBackoff(TypedDict):
    """RFC 0049's controlled backoff table."""

    kind: Literal["controlled"]


class FixedBackoff(TypedDict):
    """The same delay every time."""

    kind: Literal["fixed"]
    delay_ms: int


Backoff = Union[ExponentialBackoff, ControlledBackoff, FixedBackoff]
"""A backoff calculator, by ``kind``."""


class Loop(TypedDict, total=False):
    """A bounded retry loop: ``max_attempts`` (the first included) and/or ``deadline_ms`` (at least
    one); the backoff when no Retry-After applies (default 100 ms × 2^n up to 10 s); the method
    and the caller's ``idempotent`` for RFC 9110's method rule."""

    max_attempts: int
    deadline_ms: int
    backoff: Backoff
    jitter: Jitter
    method: str
    idempotent: bool


class LoopState(TypedDict):
    """Attempts made (the one that just finished included), ms since the first started, and the
    previous delay (for decorrelated jitter)."""

    attempts: int
    elapsed_ms: int
    previous_delay_ms: NotRequired[int]


class ResponseAttempt(TypedDict):
    """An attempt that got a response, with its ``Retry-After`` header if any."""

    kind: Literal["response"]
    status: int
    retry_after: NotRequired[str]


class NetworkErrorAttempt(TypedDict):
    """An attempt without a response; ``sent: False`` only when the request surely did not leave."""

    kind: Literal["network_error"]
    sent: NotRequired[bool]


Attempt = Union[ResponseAttempt, NetworkErrorAttempt]
"""What one attempt produced, by ``kind``."""

# "class" is a keyword: these keys are declared in the functional form.
_Classified = TypedDict("_Classified", {"class": HttpClass, "rule": str, "section": str})


class Classification(_Classified):
    """``http_classify``: the class, the saga outcome, whether Retry-After is honoured, and the
    RFC 0049 reason a generic runner gives a transient result (None for a final one)."""

    outcome: Literal["final", "transient"]
    retry_after: bool
    retry_reason: str | None


class RetryStep(_Classified):
    """``http_next``: send the request again after ``delay_ms`` (``retry_after_ms`` when the wait
    came from Retry-After)."""

    action: Literal["retry"]
    delay_ms: int
    from_retry_after: bool
    retry_after_ignored: bool
    retry_after_ms: NotRequired[int]


class StopStep(_Classified):
    """``http_next``: stop with the step's ``outcome``; ``retry_after_ms`` is the server's wait when
    it reached the deadline (rule ``deadline_before_retry``)."""

    action: Literal["stop"]
    outcome: Literal["final", "transient"]
    from_retry_after: bool
    retry_after_ignored: bool
    retry_after_ms: NotRequired[int]


Step = Union[RetryStep, StopStep]
"""The loop's ruling after an attempt, by ``action``: ``if step["action"] == "retry"`` narrows it."""


class RetryAfterResult(TypedDict):
    """``http_retry_after``: the header as a delay."""

    delay_ms: int


class DateResult(TypedDict):
    """``http_date``: the date as Unix milliseconds."""

    unix_ms: int


def classify(status: int | None = None, network_error: bool | None = None) -> Classification:
    """Final success, final rejection or transient, for an HTTP status or a network error."""
    return cast(Classification, call("http_classify", {}, status=status, network_error=network_error))


def retry_after(value: str, now_unix_ms: int | None = None) -> RetryAfterResult:
    """A Retry-After header (seconds or an HTTP date) as a delay in milliseconds."""
    return cast(RetryAfterResult, call("http_retry_after", {"value": value}, now_unix_ms=now_unix_ms))


def parse_date(value: str, now_unix_ms: int | None = None) -> DateResult:
    """An HTTP-date (IMF-fixdate, RFC 850 or asctime) as Unix milliseconds; RFC 850's two-digit
    year needs ``now_unix_ms``."""
    return cast(DateResult, call("http_date", {"value": value}, now_unix_ms=now_unix_ms))


def next_step(
    loop: Loop,
    state: LoopState,
    attempt: Attempt,
    now_unix_ms: int | None = None,
    random: float | None = None,
    budget_verdict: BudgetVerdict | dict[str, Any] | None = None,
) -> Step:
    """What a bounded retry loop does after an attempt: retry after a delay, or stop and why; a
    retry that `budget_verdict` (from `RetryBudget.try_retry`) refuses stops, transient."""
    inputs = {"loop": loop, "state": state, "attempt": attempt}
    verdict = json.loads(budget_verdict.to_json()) if isinstance(budget_verdict, BudgetVerdict) else budget_verdict
    return cast(Step, call("http_next", inputs, now_unix_ms=now_unix_ms, random=random, budget_verdict=verdict))

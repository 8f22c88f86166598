"""A failed attempt as the run machine's outcome: the runners' default classifiers.

An outcome is the machine's JSON form (``{"kind": "network", "sent": False}``); what each one
allows (retry a maybe-sent request or not, how long to wait) is the machine's rule, not decided
here. Only what Python alone knows is here: which exception types mean a connection failed or
timed out, and where httpx, requests and urllib keep a status error's response.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Union

from ._ending import RetryTimeoutError
from ._reason import RetryReason

Outcome = dict[str, Any]
"""An attempt's outcome in the run machine's JSON form (``{"kind": "http", "status": 503}``)."""
Classifier = Callable[[Exception], Union[RetryReason, Outcome, None]]
"""Maps an error to the reason to retry it for, or to its outcome; None: a final failure."""

NOT_SENT: Outcome = {"kind": "network", "sent": False}
MAYBE_SENT: Outcome = {"kind": "network"}
TIMEOUT: Outcome = {"kind": "timeout"}
FINAL: Outcome = {"kind": "final"}

BY_TYPE: dict[type[BaseException], Outcome] = {}
"""``network_errors``' answers by exception type (they depend on the type alone), at most 64."""


def network_errors(exc: Exception) -> Outcome | None:
    """Connection refused: not sent; any other ``ConnectionError``: maybe sent; a ``TimeoutError``
    (not a run's own ``RetryTimeoutError``): the attempt timed out; else None."""
    outcome = None
    if isinstance(exc, ConnectionRefusedError):
        outcome = NOT_SENT
    elif isinstance(exc, ConnectionError):
        outcome = MAYBE_SENT
    elif isinstance(exc, TimeoutError) and not isinstance(exc, RetryTimeoutError):
        outcome = TIMEOUT
    if outcome is not None and len(BY_TYPE) < 64:
        BY_TYPE[type(exc)] = outcome
    return outcome


def http_status_errors(exc: Exception) -> Outcome | None:
    """An HTTP status error (httpx's and requests' ``exc.response.status_code``, or
    ``urllib.error.HTTPError``) as an ``http`` outcome with its ``Retry-After`` header; else None."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    headers = getattr(response, "headers", None)
    # urllib's HTTPError only if urllib.error was imported (no exception can be one otherwise): a
    # program that never uses urllib does not import it for this check (issue 30: weight).
    urllib_error = sys.modules.get("urllib.error")
    if status is None and urllib_error is not None and isinstance(exc, urllib_error.HTTPError):
        status, headers = exc.code, exc.headers
    if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status <= 599:
        return None
    outcome: Outcome = {"kind": "http", "status": status}
    header = None if headers is None else headers.get("retry-after", headers.get("Retry-After"))
    if isinstance(header, str):
        outcome["retry_after"] = header
    return outcome


def first_of(*classifiers: Classifier) -> Classifier:
    """A classifier that asks each in turn and returns the first answer that is not None."""

    def classify(exc: Exception) -> RetryReason | Outcome | None:
        for c in classifiers:
            got = c(exc)
            if got is not None:
                return got
        return None

    return classify


def default_classifier(exc: Exception) -> Outcome | None:
    """Network errors and HTTP status errors (the runners' default)."""
    return network_errors(exc) or http_status_errors(exc)


def outcome_of(exc: Exception, classify: Classifier) -> Outcome:
    """The outcome of an attempt that raised ``exc``: a run's own timeout is final (an outer run
    never retries it); else ``classify``'s answer, None being final."""
    if isinstance(exc, RetryTimeoutError):
        return FINAL
    got = classify(exc)
    if got is None:
        return FINAL
    if isinstance(got, RetryReason):
        return {"kind": "reason", "reason": got, "timeout": isinstance(exc, TimeoutError)}
    return got

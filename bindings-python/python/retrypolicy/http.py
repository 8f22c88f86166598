"""HTTP and saga retry rules from the core: status classes, Retry-After, and a bounded retry loop.

Documents are plain dicts in the JSON shapes of ``spec-fixtures/README.md``; times are integer
milliseconds, and "now" is passed in as Unix milliseconds (the core reads no clock).
"""

from __future__ import annotations

from typing import Any

from ._json_api import call

Doc = dict[str, Any]


def classify(status: int | None = None, network_error: bool | None = None) -> Doc:
    """Final success, final rejection or transient, for an HTTP status or a network error."""
    return call("http_classify", {}, status=status, network_error=network_error)


def retry_after(value: str, now_unix_ms: int | None = None) -> Doc:
    """A Retry-After header (seconds or an HTTP date) as a delay in milliseconds."""
    return call("http_retry_after", {"value": value}, now_unix_ms=now_unix_ms)


def parse_date(value: str, now_unix_ms: int | None = None) -> Doc:
    """An HTTP-date (IMF-fixdate, RFC 850 or asctime) as Unix milliseconds; RFC 850's two-digit
    year needs ``now_unix_ms``."""
    return call("http_date", {"value": value}, now_unix_ms=now_unix_ms)


def next_step(
    loop: Doc, state: Doc, attempt: Doc, now_unix_ms: int | None = None, random: float | None = None
) -> Doc:
    """What a bounded retry loop does after an attempt: retry after a delay, or stop and why."""
    return call("http_next", {"loop": loop, "state": state, "attempt": attempt}, now_unix_ms=now_unix_ms, random=random)

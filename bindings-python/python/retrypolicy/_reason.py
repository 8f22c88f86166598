"""RetryReason: the RFC 0049 vocabulary as a Python enum whose flags come from the core."""

from __future__ import annotations

import enum

from . import _lowlevel


class RetryReason(enum.IntEnum):
    """Why an operation is a candidate for retry (RFC 0049 "RetryReason"); values are table rows."""

    UNKNOWN = 0
    SOCKET_NOT_AVAILABLE = 1
    SERVICE_NOT_AVAILABLE = 2
    NODE_NOT_AVAILABLE = 3
    KV_NOT_MY_VBUCKET = 4
    KV_COLLECTION_OUTDATED = 5
    KV_ERROR_MAP_RETRY_INDICATED = 6
    KV_LOCKED = 7
    KV_TEMPORARY_FAILURE = 8
    KV_SYNC_WRITE_IN_PROGRESS = 9
    KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS = 10
    SERVICE_RESPONSE_CODE_INDICATED = 11
    SOCKET_CLOSED_WHILE_IN_FLIGHT = 12
    CIRCUIT_BREAKER_OPEN = 13
    QUERY_PREPARED_STATEMENT_FAILURE = 14
    QUERY_INDEX_NOT_FOUND = 15
    ANALYTICS_TEMPORARY_FAILURE = 16
    SEARCH_TOO_MANY_REQUESTS = 17
    VIEWS_TEMPORARY_FAILURE = 18
    VIEWS_NO_ACTIVE_PARTITION = 19
    QUERY_ERROR_RETRYABLE = 20

    @property
    def allows_non_idempotent_retry(self) -> bool:
        """Whether a non-idempotent request may be retried for this reason."""
        return _FLAGS[self.value][0]

    @property
    def always_retry(self) -> bool:
        """Whether this reason is retried regardless of the strategy."""
        return _FLAGS[self.value][1]

    @classmethod
    def parse(cls, name: str) -> RetryReason:
        """The member for a name, accepting the RFC's alias spellings; raises UnknownReasonError."""
        return cls(_lowlevel.parse_reason(name))

    def __str__(self) -> str:
        return self.name


# The flags come from the core's table; tests check the member list mirrors it exactly.
_FLAGS: dict[int, tuple[bool, bool]] = {i: (ni, ar) for i, _, ni, ar in _lowlevel.reason_table()}

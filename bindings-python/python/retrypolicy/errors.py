"""Exceptions: one base class, one subclass per stable core error code."""

from __future__ import annotations


class RetryPolicyError(Exception):
    """Base of every error retrypolicy raises; ``code`` is the core's stable code, ``field`` the input."""

    code: str = "retry_policy_error"

    def __init__(self, message: str, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.field: str = field or ""


class UnknownReasonError(RetryPolicyError, ValueError):
    """A retry reason name that is not in the RFC 0049 table."""

    code = "unknown_reason"


class UnknownNameError(RetryPolicyError, ValueError):
    """A service, operation, strategy or mode name the core does not know."""

    code = "unknown_name"


class InvalidDurationError(RetryPolicyError, ValueError):
    """A negative, non-finite or too large duration."""

    code = "invalid_duration"


class InvalidRandomError(RetryPolicyError, ValueError):
    """A random draw outside [0, 1)."""

    code = "invalid_random"


class OutOfRangeError(RetryPolicyError, ValueError):
    """A number outside the range its field accepts."""

    code = "out_of_range"


class InvalidTypeError(RetryPolicyError, TypeError):
    """A value of the wrong type."""

    code = "invalid_type"


class UnknownFieldError(RetryPolicyError, ValueError):
    """A field the format does not have."""

    code = "unknown_field"


class MissingFieldError(RetryPolicyError, ValueError):
    """A required field that is absent."""

    code = "missing_field"


class MalformedJsonError(RetryPolicyError, ValueError):
    """Text that is not JSON."""

    code = "malformed_json"


class UnsupportedVersionError(RetryPolicyError, ValueError):
    """A policy document version this release cannot read."""

    code = "unsupported_version"


ERRORS_BY_CODE: dict[str, type[RetryPolicyError]] = {
    cls.code: cls
    for cls in (
        UnknownReasonError,
        UnknownNameError,
        InvalidDurationError,
        InvalidRandomError,
        OutOfRangeError,
        InvalidTypeError,
        UnknownFieldError,
        MissingFieldError,
        MalformedJsonError,
        UnsupportedVersionError,
    )
}

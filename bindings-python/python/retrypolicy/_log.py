"""The records on the ``retrypolicy`` logger: the RFC 0049 decision record (the Orchestrator) and a
run's steps after a failed attempt (the runners and the httpx transports)."""

from __future__ import annotations

import functools
import logging
from typing import Any

from ._lowlevel import Decision, Operation, RunStep

LOGGER = logging.getLogger("retrypolicy")


def log_decision(logger: logging.Logger, level: int, operation: Operation, decision: Decision) -> None:
    """Logs one decision: the operation, the attempt count and the decision's line, with
    ``retry_reason``, ``retry_rule``, ``retry_delay_ms`` and ``retry_attempts`` as record attributes."""
    if logger.isEnabledFor(level):
        logger.log(
            level,
            "%s attempt %d: %s",
            operation.to_json(),
            decision.attempts,
            decision,
            extra={
                "retry_reason": decision.reason.name,
                "retry_rule": decision.rule,
                "retry_delay_ms": decision.delay_ms,
                "retry_attempts": decision.attempts,
            },
        )


def name_of(fn: object) -> str:
    """``module.qualname`` of a function (of the one a ``functools.partial`` wraps), else its repr."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    qualname = getattr(fn, "__qualname__", None)
    if not isinstance(qualname, str):
        return repr(fn)
    module = getattr(fn, "__module__", None)
    return qualname if module in (None, "builtins") else f"{module}.{qualname}"


def type_name(error: BaseException) -> str:
    """The error's class as ``module.qualname`` (a builtin's bare name)."""
    cls = type(error)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def log_step(
    logger: logging.Logger,
    level: int,
    step: RunStep,
    function: str,
    error_type: str | None,
    decision: object = None,
    **more: Any,
) -> None:
    """Logs a run's step after a failed attempt: a retry (a wait) or the run's end, described by
    the RFC 0049 ``decision`` behind it when given (else by the step), with
    ``retry_function``, ``retry_error_type``, ``retry_reason``, ``retry_rule``, ``retry_delay_ms``,
    ``retry_attempt`` (the attempt that failed; at the end, attempts sent), ``retry_attempts``
    (retries before it, RFC 0049's count) and ``retry_end`` (None on a retry) as record
    attributes, and ``more``."""
    waits = step.signal == "retry"
    attempt = step.attempt - 1 if waits else step.attempt
    reason = step.reason
    fields = {
        "retry_function": function,
        "retry_error_type": error_type,
        "retry_reason": None if reason is None else reason.name,
        "retry_rule": step.rule,
        "retry_delay_ms": step.delay_ms,
        "retry_attempt": attempt,
        "retry_attempts": max(attempt - 1, 0),
        "retry_end": step.end,
        **more,
    }
    what = step if decision is None else decision
    if waits:
        logger.log(level, "%s: attempt %d failed (%s): %s", function, attempt, error_type, what, extra=fields)
    elif step.signal == "give_up":
        logger.log(level, "%s: gave up (%s, last error %s): %s", function, step.end, error_type, what, extra=fields)
    else:
        logger.log(level, "%s: %s", function, what, extra=fields)

"""The RFC 0049 decision record on the ``retrypolicy`` logger, shared by the Orchestrator and the runners."""

from __future__ import annotations

import logging

from ._lowlevel import Decision, Operation

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

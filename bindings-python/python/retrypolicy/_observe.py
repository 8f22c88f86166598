"""What a run and a breaker report as they go, without OpenTelemetry installed: the breaker's state
changes (its ``on_state_change`` callback and the ``retrypolicy.breaker`` logger), and the hand-off
to ``retrypolicy.otel`` when it is instrumented (``sink``). Nothing here imports OpenTelemetry."""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ._lowlevel import BreakerChange, CircuitBreaker, RunStep

BREAKER_LOGGER = logging.getLogger("retrypolicy.breaker")
"""One INFO record per state change of any breaker (``breaker_from``, ``breaker_to``, ``breaker_rule``)."""


class Sink(Protocol):
    """Where the signals of runs and breakers go when ``retrypolicy.otel.instrument()`` was called."""

    def step(self, step: RunStep, http: bool, breaker: CircuitBreaker | None) -> None:
        """Records one step of a run over ``breaker`` (or none; ``http``: the run follows the HTTP rules)."""

    def breaker_changed(self, change: BreakerChange, name: str) -> None:
        """Records one change of the state of the breaker named ``name``."""


sink: Sink | None = None
"""The OpenTelemetry recorder while instrumented, else None (the runners read it once per step)."""


_delivering = threading.local()
"""Per thread, ``queues``: the changes of each breaker (by id) being delivered, waiting their turn."""


def breaker_changes(breaker: CircuitBreaker, changes: list[BreakerChange]) -> None:
    """Reports ``changes``, all made by one call on ``breaker``, in order, each by
    ``breaker_changed``. All of them are queued before the first is delivered, and the changes a
    callback makes (calling the breaker again) are delivered after them: each listener hears a
    breaker's changes in the order they happened."""
    queues: dict[int, deque[BreakerChange]] = _delivering.__dict__.setdefault("queues", {})
    queued = queues.get(id(breaker))
    if queued is not None:
        queued.extend(changes)  # made by a callback of this breaker: delivered after those queued
        return
    queue = deque(changes)
    queues[id(breaker)] = queue
    try:
        while queue:
            breaker_changed(breaker, queue.popleft())
    finally:
        del queues[id(breaker)]


def breaker_changed(breaker: CircuitBreaker, change: BreakerChange) -> None:
    """Reports a change of ``breaker``'s state, once the call that made it (a direct ``permit`` or
    ``record``, or a run's step) has released the breaker's lock: an INFO record on the
    ``retrypolicy.breaker`` logger, OpenTelemetry's signals when instrumented, then the breaker's
    ``on_state_change(old, new, rule)``. An ``Exception`` the callback raises is logged there at
    ERROR with its traceback and goes no further: the change stands and the call (or the run) goes
    on as if the callback had returned. A ``BaseException`` (``KeyboardInterrupt``) propagates from
    the call, the change made."""
    old, new, rule = change.from_state, change.to_state, change.rule
    if BREAKER_LOGGER.isEnabledFor(logging.INFO):
        BREAKER_LOGGER.info(
            "circuit breaker %s -> %s (%s)",
            old,
            new,
            rule,
            extra={"breaker_from": old, "breaker_to": new, "breaker_rule": rule, "breaker": breaker},
        )
    if sink is not None:
        sink.breaker_changed(change, breaker.name)
    callback = breaker.on_state_change
    if callback is not None:
        try:
            callback(old, new, rule)
        except Exception:
            BREAKER_LOGGER.exception(
                "on_state_change raised for the change %s -> %s (%s): ignored, the breaker changed all the same",
                old,
                new,
                rule,
                extra={"breaker_from": old, "breaker_to": new, "breaker_rule": rule, "breaker": breaker},
            )

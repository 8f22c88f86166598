"""How a run that does not succeed ends for its caller, for the runners and the httpx transports:
the errors it raises when it has no failure of its own to raise, and the cancel of a run that an
exception leaves."""

from __future__ import annotations

from typing import Callable

from ._lowlevel import Decision, Run, RunStats, RunStep


class RetryTimeoutError(TimeoutError):
    """The run ended because no time was left for another attempt; ``__cause__`` is the last error
    (None when the breaker kept every attempt back); ``step`` is the machine's last step,
    ``retry_stats`` what the run did."""

    __module__ = "retrypolicy.run"  # its public home (tracebacks, pickling)

    def __init__(
        self, step: RunStep, last_error: Exception | None, decision: Decision | None = None, stats: RunStats | None = None
    ) -> None:
        super().__init__(f"retrypolicy: gave up after {step.attempt} attempts, no time left: {step}")
        self.step = step
        self.reason = step.reason
        self.retry_decision = decision
        self.retry_stats = stats
        self.last_error = last_error


class CircuitOpenError(Exception):
    """The run gave up before any attempt was sent: the circuit breaker kept each back; ``step``
    is the machine's last step (reason ``CIRCUIT_BREAKER_OPEN``), ``retry_stats`` what the run did."""

    __module__ = "retrypolicy.run"  # its public home (tracebacks, pickling)

    def __init__(self, step: RunStep, stats: RunStats | None = None) -> None:
        super().__init__(f"retrypolicy: circuit open, no attempt sent: {step}")
        self.step = step
        self.reason = step.reason
        self.retry_stats = stats


def decision_of(exc: BaseException) -> Decision | None:
    """The decision a runner attached to the error it raised, if any."""
    decision = getattr(exc, "retry_decision", None)
    return decision if isinstance(decision, Decision) else None


def stats_of(exc: BaseException) -> RunStats | None:
    """What the run did (``RunStats``) that ended by raising ``exc``, when a runner or transport
    attached it (a give-up or timeout: the last error, ``RetryTimeoutError``, ``CircuitOpenError``)."""
    stats = getattr(exc, "retry_stats", None)
    return stats if isinstance(stats, RunStats) else None


def abandon(run: Run, clock: Callable[[], float], exc: BaseException, failure: BaseException | None) -> None:
    """``exc`` leaves the run (the caller cancelled; a hook, classifier, clock or sleep raised): the
    run is cancelled (a breaker's canary released), and ``exc``, raised while handling the
    attempt's ``failure``, carries it as its ``__context__``."""
    if failure is not None and exc is not failure and exc.__context__ is None and exc.__cause__ is None:
        exc.__context__ = failure
    if run.phase != "done":
        try:
            now = clock() * 1000
        except Exception:  # the clock is what failed: 0 reads as no time passing
            now = 0.0
        run.cancel(now)

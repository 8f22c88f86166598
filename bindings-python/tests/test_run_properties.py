"""Properties of the runners (hypothesis), with a fake clock and fake sleep: never sleeps past the
deadline, never retries a non-idempotent operation after a failure whose reason does not allow
it, and counts attempts exactly."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from retrypolicy import Decision, Operation, RetryReason
from retrypolicy.run import AsyncRetrying, Retrying, RetryTimeoutError, decision_of

OPERATIONS = [Operation.kv("get"), Operation.kv("upsert"), Operation.kv("increment"), Operation.query(readonly=False)]
REASONS = [r for r in RetryReason if r is not RetryReason.UNKNOWN]


class Failure(Exception):
    """A failure carrying the reason the test's classifier returns for it."""

    def __init__(self, reason: RetryReason) -> None:
        super().__init__(reason.name)
        self.reason = reason


@dataclass
class World:
    """Fake time, the scripted failures (each with its cost in seconds), and what the runner did."""

    failures: list[tuple[RetryReason, float]]
    now: float = 50.0
    calls: list[float] = field(default_factory=list)
    sleeps: list[tuple[float, float]] = field(default_factory=list)
    retried: list[tuple[Decision, RetryReason]] = field(default_factory=list)
    given_up: list[Decision] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append((self.now, seconds))
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def call(self) -> str:
        self.calls.append(self.now)
        n = len(self.calls)
        if n > len(self.failures):
            return "ok"
        reason, cost = self.failures[n - 1]
        self.now += cost
        raise Failure(reason)

    async def acall(self) -> str:
        return self.call()

    def options(self) -> dict[str, Any]:
        return {
            "classify": lambda e: e.reason if isinstance(e, Failure) else None,
            "clock": self.clock,
            "on_retry": lambda d, e: self.retried.append((d, e.reason)),
            "on_give_up": lambda d, e: self.given_up.append(d),
        }


runs = st.tuples(
    st.sampled_from(OPERATIONS),
    st.floats(min_value=0.001, max_value=3.0),
    st.lists(st.tuples(st.sampled_from(REASONS), st.floats(min_value=0.0, max_value=0.5)), max_size=12),
    st.booleans(),
)


def run(operation: Operation, timeout: float, world: World, use_async: bool) -> Exception | None:
    """Runs the world's call through a runner; returns the error it raised, if any."""
    try:
        if use_async:
            asyncio.run(AsyncRetrying(operation, timeout=timeout, sleep=world.asleep, **world.options())(world.acall))
        else:
            Retrying(operation, timeout=timeout, sleep=world.sleep, **world.options())(world.call)
    except (Failure, RetryTimeoutError) as e:
        return e
    return None


@settings(max_examples=150, deadline=None)
@given(runs)
def test_runner_properties(case: tuple[Operation, float, list[tuple[RetryReason, float]], bool]) -> None:
    operation, timeout, failures, use_async = case
    world = World(failures)
    start = world.now
    error = run(operation, timeout, world, use_async)

    # Never sleeps past the deadline, and never starts an attempt at or after it.
    for at, seconds in world.sleeps:
        assert at + seconds < start + timeout
    assert all(t < start + timeout for t in world.calls[1:])

    # Never retries a non-idempotent operation after a failure whose reason does not allow it.
    for decision, reason in world.retried:
        assert operation.idempotent or reason.allows_non_idempotent_retry or reason.always_retry

    # Attempts counted exactly: the n-th failure's decision says n - 1 retries so far; one sleep
    # per retry; the run ends with a success, or with one give-up decision on the last call.
    decisions = [d for d, _ in world.retried] + world.given_up
    assert [d.attempts for d in decisions] == list(range(len(decisions)))
    assert len(world.sleeps) == len(world.retried) == len(world.calls) - 1
    if error is None:
        assert len(world.calls) == len(failures) + 1 and world.given_up == []
    else:
        assert len(world.given_up) == 1 and decision_of(error) is world.given_up[0]
        assert world.given_up[0].attempts == len(world.calls) - 1
        timed_out = world.given_up[0].then_cancel or world.given_up[0].cause == "deadline_passed"
        assert isinstance(error, RetryTimeoutError) == timed_out

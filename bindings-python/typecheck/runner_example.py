"""User code wrapping calls with the runners and the httpx transports, type-checked with mypy --strict."""

from __future__ import annotations

import asyncio

import httpx

import retrypolicy
from retrypolicy import Decision, Operation, RetryDecision, RetryReason, mongodb
from retrypolicy.httpx import AsyncRetryTransport, RetryTransport
from retrypolicy.run import AsyncRetrying, CircuitOpenError, Retrying, decision_of, first_of, http_status_errors, network_errors, retry, instant_sleeps

calls = {"n": 0}


@retry(Operation.kv("get"), timeout=2.5)
def fetch(key: str) -> bytes:
    """Fails once with a reset connection, then returns."""
    calls["n"] += 1
    if calls["n"] == 1:
        raise ConnectionResetError(key)
    return key.encode()


@retry(Operation.query(readonly=True), timeout=1.0, classify=first_of(network_errors, http_status_errors))
async def query(text: str) -> list[str]:
    """Returns at once."""
    await asyncio.sleep(0)
    return [text]


def locked(exc: Exception) -> RetryReason | None:
    """A classifier of the user's own errors."""
    return RetryReason.KV_LOCKED if isinstance(exc, KeyError) else None


def log_retry(decision: RetryDecision, exc: Exception) -> None:
    """An on_retry hook: it only sees decisions to retry, so delay_ms is an int."""
    print(f"retrying in {decision.delay_ms / 1000} s: {exc!r}")


def log_give_up(decision: Decision | None, exc: Exception) -> None:
    """An on_give_up hook: either kind of decision (a retry whose delay would pass the timeout), or
    None when none ended the run (the deadline passed during a wait)."""
    print(f"giving up ({decision.cause or decision.rule if decision else 'deadline passed'}): {exc!r}")


def log_http_retry(step: retrypolicy.http.Step, result: httpx.Response | httpx.TransportError) -> None:
    """An on_retry hook of the httpx transports: the step narrows on its action."""
    if step["action"] == "retry":
        print(f"HTTP retry in {step['delay_ms'] / 1000} s after {result!r}")


def log_breaker_wait(step: retrypolicy.RunStep) -> None:
    """An on_breaker_wait hook (runners and transports): the step waiting for the breaker's window."""
    print(f"breaker open: waiting {step.delay_ms} ms ({step.signal}, {step.rule})")


def log_http_give_up(step: retrypolicy.http.Step | None, result: httpx.Response | httpx.TransportError) -> None:
    """An on_give_up hook of the httpx transports: no HTTP step when the breaker or a passed deadline ended the run."""
    print(f"HTTP gave up ({step['rule'] if step else 'no HTTP decision'}): {result!r}")


def give_up() -> str:
    """A non-idempotent upsert whose connection closed in flight is not retried."""
    runner = Retrying(
        Operation.kv("upsert"), timeout=1.0, on_retry=log_retry, on_breaker_wait=log_breaker_wait, on_give_up=log_give_up
    )

    def upsert(key: str, value: int) -> int:
        raise ConnectionResetError(f"{key}={value}")

    try:
        return str(runner(upsert, "k", 1))
    except ConnectionResetError as exc:
        decision = decision_of(exc)
        return f"gave up: {decision.cause if decision else None}"


class Session:
    """A driver-shaped session (pymongo's ClientSession has these)."""

    def __init__(self) -> None:
        self.active = False

    def start_transaction(self) -> None:
        self.active = True

    def commit_transaction(self) -> None:
        self.active = False

    def abort_transaction(self) -> None:
        self.active = False

    @property
    def in_transaction(self) -> bool:
        return self.active


def transfer(session: mongodb.Session) -> int:
    """A withTransaction callback."""
    return 10


def storm_guarded() -> str:
    """A runner behind a shared retry budget and circuit breaker."""
    budget = retrypolicy.RetryBudget({"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1})
    breaker = retrypolicy.CircuitBreaker()

    def down() -> bytes:
        raise ConnectionResetError("down")

    try:
        return Retrying(Operation.kv("get"), timeout=1.0, budget=budget, breaker=breaker)(down).decode()
    except (ConnectionResetError, CircuitOpenError) as exc:
        decision = decision_of(exc)
        return f"gave up: {decision.cause if decision is not None else None}"


async def main() -> None:
    print(fetch("a"), await query("select 1"), give_up(), storm_guarded())
    n = await AsyncRetrying(Operation.kv("get"), timeout=1.0, classify=locked)(asyncio.sleep, 0, 7)
    print(n)
    moved: int = mongodb.run_transaction(Session(), transfer)
    print(moved)
    shared = retrypolicy.RetryBudget({"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1})
    transport = RetryTransport(
        deadline=5.0, max_attempts=3, on_retry=log_http_retry, on_breaker_wait=log_breaker_wait,
        on_give_up=log_http_give_up, breaker=retrypolicy.CircuitBreaker(), budget=shared,
    )
    # The submodules as attributes of the package.
    reason = retrypolicy.http.classify(status=503)["retry_reason"]
    assert reason == "SERVICE_RESPONSE_CODE_INDICATED" and retrypolicy.run.is_testing()
    put = retrypolicy.httpx.RetryTransport(backoff={"kind": "fixed", "delay_ms": 10}, idempotent=False)
    put.close()
    client = httpx.Client(transport=transport)
    client.close()
    async with httpx.AsyncClient(transport=AsyncRetryTransport(idempotent=True)) as aclient:
        assert aclient.timeout is not None


if __name__ == "__main__":
    with instant_sleeps():
        asyncio.run(main())

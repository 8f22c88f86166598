"""What issue 30 asked of the types, checked by mypy --strict in `make test` (and run there, with
no server): ``mongodb.run_transaction`` takes a callback typed with the driver's own session
(pymongo's ``ClientSession``) and returns its value's type; the budget, breaker and policy
documents and snapshots are ``TypedDict``s, and the httpx transports' last step is ``http.Step``."""

from __future__ import annotations

import httpx
from pymongo.client_session import ClientSession

import retrypolicy
from retrypolicy import BreakerSnapshot, BudgetDocument, BudgetSnapshot, PolicyDocument, http, mongodb
from retrypolicy.httpx import RetryTransport, step_of


def transfer(session: ClientSession) -> int:
    """A withTransaction callback typed as a pymongo user types it: the driver's session."""
    return 1 if session.in_transaction else 0


def with_pymongo(session: ClientSession) -> int:
    """The callback's own return type comes back (not ``Any``)."""
    moved: int = mongodb.run_transaction(session, transfer, timeout=5.0)
    return moved


def documents() -> tuple[int, str]:
    """The guards' documents and snapshots have their keys' types."""
    doc: BudgetDocument = {"kind": "retry_quota", "capacity": 500, "costs": "2026"}
    budget = retrypolicy.RetryBudget(doc)
    kept: BudgetSnapshot = budget.snapshot()
    balance: int = kept.get("balance", 0)
    again = retrypolicy.RetryBudget.restore(budget.document, kept)
    breaker = retrypolicy.CircuitBreaker({"volume_threshold": 4, "sleep_window_ms": 1000})
    state: BreakerSnapshot = breaker.snapshot()
    policy_doc: PolicyDocument = {"strategy": "best_effort", "backoff": {"kind": "fixed", "delay_ms": 5}, "budget": doc}
    retrypolicy.policy_from_dict(policy_doc)
    return balance + again.snapshot().get("balance", 0), state["state"]


def last_step(response: httpx.Response) -> str | None:
    """The transports' last step is the HTTP loop's ``http.Step``: ``action`` narrows it."""
    step: http.Step | None = step_of(response)
    if step is not None and step["action"] == "retry":
        return f"retry after {step['delay_ms']} ms"
    return None if step is None else step["rule"]


def with_a_transport() -> str | None:
    """A response that went through no transport has no step."""
    transport = RetryTransport(max_attempts=1)
    transport.close()
    return last_step(httpx.Response(200))


if __name__ == "__main__":
    print(documents(), with_a_transport())

"""The gRPC and AWS APIs as a typed host uses them, checked by mypy --strict in `make test` (and run
there): a retried gRPC call and a hedged one against scripted attempts, an AWS call through the
retry quota and the adaptive limiter; every document, state and event a ``TypedDict``."""

from __future__ import annotations

import retrypolicy as rp
from retrypolicy import aws, grpc

SERVICE_CONFIG: grpc.ServiceConfigDocument = {
    "methodConfig": [
        {
            "name": [{"service": "helloworld.Greeter"}],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": ".1s",
                "maxBackoff": "1s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ],
    "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1},
}


def retried_call(statuses: list[grpc.StatusCode]) -> list[str]:
    """A unary call whose attempts end with ``statuses``: the waits and the end, as text."""
    config = grpc.ServiceConfig(SERVICE_CONFIG)
    policy = config.policy_for("helloworld.Greeter", "SayHello")
    assert isinstance(policy, grpc.RetryPolicy)
    throttling = config.throttling
    bucket = rp.RetryBudget(throttling) if throttling is not None else None
    state: grpc.RetryState = {"attempts": 1}
    said = []
    for now_ms, status in enumerate(statuses):
        attempt: grpc.Attempt = {"status": status}
        d = grpc.grpc_retry(policy, state, attempt, random=0.5, throttling=bucket, now_ms=now_ms)
        if d.action != "retry" or d.next is None:
            said.append(f"{d.action} ({d.rule})")
            break
        said.append(f"wait {d.delay_ms} ms")
        state = d.next
    return said


def hedged_call() -> list[int]:
    """A hedged call: the attempts each step sends."""
    policy = grpc.HedgingPolicy({"maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE"]})
    ended: grpc.AttemptEnded = {"event": "attempt_ended", "attempt": {"status": "UNAVAILABLE"}}
    events: list[grpc.HedgeEvent] = ["start", ended, "hedge_due", {"event": "attempt_ended", "attempt": {"status": 0}}]
    state: grpc.HedgeState | None = None
    sends = []
    for event in events:
        step = grpc.grpc_hedge(policy, state, event)
        sends.append(step.send)
        state = step.state
        if step.end is not None:
            break
    return sends


def aws_call(errors: list[aws.AwsError | None]) -> list[str]:
    """An AWS call in standard mode (2026) whose attempts end with ``errors`` (None: success),
    through the retry quota, told of each response by the adaptive limiter."""
    config = aws.AwsRetryConfig({"mode": "adaptive", "behavior": "2026"})
    quota = rp.RetryBudget({"kind": "retry_quota", "costs": "2026"})
    limiter = aws.AdaptiveRateLimiter()
    said = []
    last_cause: aws.Cause | None = None
    for attempts, error in enumerate(errors, 1):
        if not limiter.acquire(0).acquired:
            said.append("limited")
        if error is None:
            limiter.record(0, False)
            quota.record(0, "success", after_retry=last_cause)
            said.append(f"success, quota {quota.snapshot().get('balance')}")
            break
        d = aws.aws_decide(config, attempts, error, random=0.5)
        limiter.record(0, d.throttling)
        if d.is_retry and d.cause is not None:
            verdict = quota.try_retry(0, d.cause)
            if not verdict.permitted:
                d = aws.aws_decide(config, attempts, error, random=0.5, budget_verdict=verdict)
            last_cause = d.cause
        said.append(f"{d.action} {d.delay_ms} ({d.rule})")
        if not d.is_retry:
            break
    return said


if __name__ == "__main__":
    print(retried_call(["UNAVAILABLE", "UNAVAILABLE", "OK"]))
    print(hedged_call())
    print(aws_call([{"status": 503}, {"code": "ThrottlingException", "status": 400}, None]))

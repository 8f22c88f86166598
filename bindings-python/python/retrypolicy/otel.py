"""OpenTelemetry for every run and breaker (``pip install 'retrypolicy[opentelemetry]'``).

``instrument()`` once at start-up, and from then on every run of the runners (``retrypolicy.run``)
and of the httpx transports records, through ``opentelemetry-api``: the metrics below on the meter
``retrypolicy``, and a span event for each retry and for the give-up on the span current when the
step is taken (none when no span is current). Every breaker's state change records
``retrypolicy.breaker.state_changes`` and the ``retrypolicy.breaker.state`` gauge, made by a run or
by a direct ``permit``/``record``. A host that drives a ``retrypolicy.Run`` itself hands each step
to ``record``. The names, units and attributes are the table of ``spec-fixtures/observability.json``
(README, "Observability"), shared with the Node binding:

- ``retrypolicy.attempts`` ({attempt}): each attempt sent;
- ``retrypolicy.retries`` ({retry}; ``retrypolicy.reason``, ``retrypolicy.rule``): each retry decided;
- ``retrypolicy.give_ups`` ({run}; ``retrypolicy.end``, ``retrypolicy.reason``, ``retrypolicy.rule``):
  each run that gave up or timed out;
- ``retrypolicy.budget.refusals`` ({retry}; ``retrypolicy.budget.kind``, ``retrypolicy.rule``);
- ``retrypolicy.breaker.rejections`` ({attempt}; ``retrypolicy.breaker.name``, ``retrypolicy.rule``);
- ``retrypolicy.breaker.state_changes`` ({change}; ``retrypolicy.breaker.name``, ``retrypolicy.breaker.from``,
  ``retrypolicy.breaker.to``, ``retrypolicy.rule``), and the gauge ``retrypolicy.breaker.state`` ({state}:
  0 closed, 1 open, 2 half-open; ``retrypolicy.breaker.name``: one point per breaker, named by
  ``CircuitBreaker(name=...)``, ``"default"`` when unnamed);
- span events ``retrypolicy.retry`` (``retrypolicy.attempt``: the attempt that failed, reason, rule,
  ``retrypolicy.delay_ms``; on HTTP ``http.request.resend_count``) and ``retrypolicy.give_up``
  (``retrypolicy.attempt``: attempts sent, end, reason, rule).

Importing this module imports ``opentelemetry``; ``import retrypolicy`` and a run that is not
instrumented never do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opentelemetry import metrics, trace

from . import _observe
from .errors import InvalidTypeError
from ._lowlevel import BreakerChange, CircuitBreaker, RunStep, __version__

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

__all__ = ["instrument", "is_instrumented", "record", "uninstrument"]

SCOPE = "retrypolicy"
ATTEMPT = "retrypolicy.attempt"
REASON = "retrypolicy.reason"
RULE = "retrypolicy.rule"
DELAY = "retrypolicy.delay_ms"
END = "retrypolicy.end"
BUDGET_KIND = "retrypolicy.budget.kind"
BREAKER_FROM = "retrypolicy.breaker.from"
BREAKER_TO = "retrypolicy.breaker.to"
BREAKER_NAME = "retrypolicy.breaker.name"
DEFAULT_BREAKER_NAME = "default"
"""The name of a breaker given none (``breaker_name_default`` in the table)."""
RESEND_COUNT = "http.request.resend_count"
STATES = {"closed": 0, "open": 1, "half_open": 2}
"""The breaker state gauge's values (resilience4j's numbering)."""


def _why(step: RunStep) -> dict[str, AttributeValue]:
    """The step's reason (when it has one) and rule."""
    reason = step.reason
    return {RULE: step.rule} if reason is None else {REASON: reason.name, RULE: step.rule}


class _Recorder:
    """The instruments of one meter, and what each step and state change records on them."""

    def __init__(self, meter: metrics.Meter) -> None:
        self.attempts = meter.create_counter("retrypolicy.attempts", "{attempt}", "Attempts sent")
        self.retries = meter.create_counter("retrypolicy.retries", "{retry}", "Retries decided after a failed attempt")
        self.give_ups = meter.create_counter("retrypolicy.give_ups", "{run}", "Runs that gave up or timed out")
        self.budget_refusals = meter.create_counter(
            "retrypolicy.budget.refusals", "{retry}", "Retries the retry budget refused"
        )
        self.breaker_rejections = meter.create_counter(
            "retrypolicy.breaker.rejections", "{attempt}", "Attempts the circuit breaker kept back"
        )
        self.state_changes = meter.create_counter(
            "retrypolicy.breaker.state_changes", "{change}", "Changes of a circuit breaker's state"
        )
        self.state = meter.create_gauge(
            "retrypolicy.breaker.state", "{state}", "A circuit breaker's state after its last change: 0 closed, 1 open, 2 half-open"
        )

    def step(self, step: RunStep, http: bool, breaker: CircuitBreaker | None) -> None:
        """Records ``step``, in the table's order: a budget refusal, a breaker rejection, then the
        attempt, the retry (counter, then span event) or the give-up (the same)."""
        budget = step.budget
        if budget is not None and not budget.permitted:
            self.budget_refusals.add(1, {BUDGET_KIND: budget.kind, RULE: budget.rule})
        verdict = step.breaker
        if verdict is not None and not verdict.permitted:
            name = DEFAULT_BREAKER_NAME if breaker is None else breaker.name
            self.breaker_rejections.add(1, {BREAKER_NAME: name, RULE: verdict.rule})
        if step.action == "send":
            self.attempts.add(1)
        signal = step.signal  # the core's: a retry, a give-up, or neither
        if signal == "retry":
            why = _why(step)
            self.retries.add(1, why)
            event: dict[str, AttributeValue] = {ATTEMPT: step.attempt - 1, **why, DELAY: step.delay_ms or 0}
            if http:
                event[RESEND_COUNT] = step.attempt - 1
            trace.get_current_span().add_event("retrypolicy.retry", event)
        elif signal == "give_up" and (end := step.end) is not None:
            ended: dict[str, AttributeValue] = {END: end, **_why(step)}
            self.give_ups.add(1, ended)
            trace.get_current_span().add_event("retrypolicy.give_up", {ATTEMPT: step.attempt, **ended})

    def breaker_changed(self, change: BreakerChange, name: str) -> None:
        """Records a state change of the breaker named ``name``: the counter, then the state gauge
        (one point per breaker name)."""
        to = change.to_state
        self.state_changes.add(1, {BREAKER_NAME: name, BREAKER_FROM: change.from_state, BREAKER_TO: to, RULE: change.rule})
        self.state.set(STATES[to], {BREAKER_NAME: name})


def instrument(meter_provider: metrics.MeterProvider | None = None) -> None:
    """Records every run's and breaker's signals from now on, on the meter ``retrypolicy`` of
    ``meter_provider`` (default: the global one, ``opentelemetry.metrics``), and span events on the
    current span. Calling it again replaces the meter."""
    _observe.sink = _Recorder(metrics.get_meter(SCOPE, __version__, meter_provider))


def uninstrument() -> None:
    """Stops recording: runs and breakers record nothing from now on."""
    _observe.sink = None


def is_instrumented() -> bool:
    """Whether ``instrument`` was called (and ``uninstrument`` not since)."""
    return _observe.sink is not None


def record(step: RunStep, *, http: bool = False, breaker: CircuitBreaker | None = None) -> None:
    """Records one step of a ``retrypolicy.Run`` the host drives itself (``http``: its rules are
    the HTTP ones, so a retry event carries ``http.request.resend_count``; ``breaker``: the run's,
    whose name a breaker rejection carries), as the runners do for theirs; nothing when not
    instrumented. A breaker's state change is recorded by the breaker. A ``breaker`` that is not a
    ``CircuitBreaker`` (or None) is an ``InvalidTypeError`` naming ``breaker``."""
    if breaker is not None and not isinstance(breaker, CircuitBreaker):
        raise InvalidTypeError(
            f"breaker: expected a CircuitBreaker (the run's) or None, found {type(breaker).__name__}", field="breaker"
        )
    sink = _observe.sink
    if sink is not None:
        sink.step(step, http, breaker)

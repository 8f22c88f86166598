"""OpenTelemetry (``retrypolicy.otel``) held to the one table Python and Node share
(``spec-fixtures/observability.json``), read back from the OpenTelemetry SDK's own in-memory
metric reader and span exporter; and ``import retrypolicy`` without it imports none of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import Counter, MeterProvider, _Gauge  # _Gauge: the SDK's exported name of the sync gauge
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import retrypolicy as rp
from conftest import ROOT, MsClock
from retrypolicy import otel
from retrypolicy.httpx import RetryTransport, stats_of
from retrypolicy.run import Retrying, RetryTimeoutError
from test_spec_fixtures import _run

TABLE: dict[str, Any] = json.loads((ROOT / "spec-fixtures" / "observability.json").read_text())
METRICS = {m["name"]: m for m in TABLE["metrics"]}
EVENTS = {e["name"]: e for e in TABLE["span_events"]}
KV_GET = rp.Operation.kv("get")

Signal = dict[str, Any]


class Telemetry:
    """The SDK's meter provider with an in-memory reader (delta temporality: each collection holds
    what was recorded since the last one) and a tracer provider exporting to memory."""

    def __init__(self) -> None:
        delta = AggregationTemporality.DELTA
        self.reader = InMemoryMetricReader(preferred_temporality={Counter: delta, _Gauge: delta})
        self.meters = MeterProvider(metric_readers=[self.reader])
        self.spans = InMemorySpanExporter()
        self.tracers = TracerProvider()
        self.tracers.add_span_processor(SimpleSpanProcessor(self.spans))
        self.instruments: dict[str, Any] = {}

    def collect(self) -> list[Signal]:
        """The data points recorded since the last collection, on the scope ``retrypolicy``; each
        instrument's unit and kind noted for the table's check."""
        data = self.reader.get_metrics_data()
        points: list[Signal] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                assert scope.scope.name == TABLE["scope"]
                for metric in scope.metrics:
                    kind = "counter" if getattr(metric.data, "is_monotonic", False) else type(metric.data).__name__.lower()
                    self.instruments[metric.name] = (kind, metric.unit)
                    for p in metric.data.data_points:
                        points.append({"metric": metric.name, "value": p.value, "attributes": dict(p.attributes or {})})
        return points

    def events(self) -> list[Signal]:
        """The span events of every finished span, in order."""
        return [
            {"event": e.name, "attributes": dict(e.attributes or {})} for s in self.spans.get_finished_spans() for e in s.events
        ]


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    t = Telemetry()
    otel.instrument(meter_provider=t.meters)
    try:
        yield t
    finally:
        otel.uninstrument()


# The table's "order" sentence, as the names in it stand for the signals.
ORDER_WORDS = {
    "state_changes": "retrypolicy.breaker.state_changes",
    "state gauge": "retrypolicy.breaker.state",
    "budget.refusals": "retrypolicy.budget.refusals",
    "breaker.rejections": "retrypolicy.breaker.rejections",
    "attempts": "retrypolicy.attempts",
    "retries": "retrypolicy.retries",
    "retry event": "retrypolicy.retry",
    "give_ups": "retrypolicy.give_ups",
    "give-up event": "retrypolicy.give_up",
}


class _Noted:
    """An instrument that also notes its name in ``log`` at each record (the SDK's still records it)."""

    def __init__(self, instrument: Any, name: str, log: list[str]) -> None:
        self.instrument, self.name, self.log = instrument, name, log

    def add(self, amount: int, attributes: Any = None) -> None:
        self.log.append(self.name)
        self.instrument.add(amount, attributes)

    def set(self, amount: int, attributes: Any = None) -> None:
        self.log.append(self.name)
        self.instrument.set(amount, attributes)


class _NotingMeters:
    """A meter provider over ``meters`` whose counters and gauges note each record in ``log``, in the
    order they are made (a reader hands metrics over in the instruments' order, not the records')."""

    def __init__(self, meters: MeterProvider, log: list[str]) -> None:
        self.meters, self.log = meters, log

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        meter, log = self.meters.get_meter(*args, **kwargs), self.log

        class Meter:
            def create_counter(self, name: str, *a: Any, **k: Any) -> _Noted:
                return _Noted(meter.create_counter(name, *a, **k), name, log)

            def create_gauge(self, name: str, *a: Any, **k: Any) -> _Noted:
                return _Noted(meter.create_gauge(name, *a, **k), name, log)

        return Meter()


def _rank(signal: Signal) -> int:
    """Where the table's order puts ``signal`` within a step."""
    word = next(w for w, name in ORDER_WORDS.items() if name == signal.get("metric", signal.get("event")))
    return TABLE["order"].index(word)


def test_the_order_sentence_names_every_signal() -> None:
    assert set(ORDER_WORDS.values()) == set(METRICS) | set(EVENTS)
    assert all(word in TABLE["order"] for word in ORDER_WORDS)


def _fixture_case(case_id: str) -> dict[str, Any]:
    for path in sorted((ROOT / "spec-fixtures" / "cases").rglob("*.json")):
        doc = json.loads(path.read_text())
        if doc["function"] == "run":
            for case in doc["cases"]:
                if case["id"] == case_id:
                    return dict(case)
    raise LookupError(case_id)


def _held_to_the_table(signals: list[Signal], instruments: dict[str, Any]) -> None:
    """Every signal's name, unit, kind and attribute names are the table's."""
    for s in signals:
        if "metric" in s:
            row = METRICS[s["metric"]]
            assert instruments[s["metric"]] == (row["instrument"], row["unit"]), s
            assert set(s["attributes"]) <= set(row["attributes"]), s
        else:
            assert set(s["attributes"]) <= set(EVENTS[s["event"]]["attributes"]), s
        assert set(s["attributes"]) <= set(TABLE["attributes"]), s


@pytest.mark.parametrize("example", TABLE["examples"], ids=[e["run_fixture"] for e in TABLE["examples"]])
def test_each_example_run_records_exactly_its_signals(telemetry: Telemetry, example: dict[str, Any]) -> None:
    """The example's run fixture replayed through the public ``Run`` (with the binding's budget and
    breaker), each step handed to ``otel.record`` as the runners do: the metrics read back after
    each step and the span events of the span it ran in, step by step, are the example's signals,
    and the order ``otel`` made them in (noted as it records) is theirs."""
    case = _fixture_case(example["run_fixture"])
    http = "http" in case["input"]["run"]["rules"]
    tracer = telemetry.tracers.get_tracer("test")
    signals: list[Signal] = []
    made: list[str] = []
    otel.instrument(meter_provider=_NotingMeters(telemetry.meters, made))  # type: ignore[arg-type]
    with tracer.start_as_current_span("run") as span:
        add_event = span.add_event

        def noted_event(name: str, attributes: Any = None, timestamp: int | None = None) -> Any:
            made.append(name)
            return add_event(name, attributes, timestamp)

        span.add_event = noted_event  # type: ignore[method-assign]

        def observe(step: rp.RunStep) -> None:
            seen = len(span.events)  # type: ignore[attr-defined]
            otel.record(step, http=http)
            events = [{"event": e.name, "attributes": dict(e.attributes or {})} for e in span.events[seen:]]  # type: ignore[attr-defined]
            # the reader's order is the instruments': put the metrics in the table's, as the example lists them
            signals.extend(sorted(telemetry.collect() + events, key=_rank))

        _run(case["input"], observe)
    assert signals == example["signals"]
    assert made == [s.get("metric", s.get("event")) for s in example["signals"]]
    assert [s for s in signals if "event" in s] == telemetry.events()
    _held_to_the_table(signals, telemetry.instruments)


def _totals(signals: list[Signal]) -> dict[tuple[str, str], Any]:
    """Each metric's total per attribute set (a gauge's last value)."""
    totals: dict[tuple[str, str], Any] = {}
    for s in signals:
        key = (s["metric"], json.dumps(s["attributes"], sort_keys=True))
        gauge = METRICS[s["metric"]]["instrument"] == "gauge"
        totals[key] = s["value"] if gauge else totals.get(key, 0) + s["value"]
    return totals


def _attrs(**a: Any) -> str:
    return json.dumps({f"retrypolicy.{k.replace('__', '.')}": v for k, v in a.items()}, sort_keys=True)


def test_a_runner_with_two_retries_a_budget_refusal_and_a_breaker_that_opens_and_closes(telemetry: Telemetry) -> None:
    """Worked out by hand. Call 1 fails every attempt (KV_TEMPORARY_FAILURE): attempt 1 at 0 trips
    the breaker (volume 1); the retry quota (10 tokens, 5 a retry) allows the retry, 1 ms; at 1 the
    breaker, open since 0, keeps attempt 2 back (a wait of 100 ms); at 101 attempt 2 is the canary
    (open -> half-open) and fails (half-open -> open); the quota allows the second retry, 4 ms
    (1 ms x 2^2: the breaker's wait counts as a retry in RFC 0049's request); at 105 the breaker
    keeps attempt 3 back until 202 (101 ms after it opened at 101), when it goes as the canary and
    fails; the quota (0 tokens) refuses the third retry: the run gives up. Call 2 at 500 succeeds
    as the canary: the breaker closes."""
    t = MsClock()
    changes: list[tuple[str, str, str]] = []
    breaker = rp.CircuitBreaker(
        {"volume_threshold": 1, "sleep_window_ms": 100},
        on_state_change=lambda old, new, rule: changes.append((old, new, rule)),
        name="kv",
    )
    runner = Retrying(
        KV_GET,
        timeout=10,
        clock=t.clock,
        sleep=t.sleep,
        classify=lambda exc: rp.RetryReason.KV_TEMPORARY_FAILURE,
        budget=rp.RetryBudget({"kind": "retry_quota", "capacity": 10, "retry_cost": 5}),
        breaker=breaker,
    )

    def fail() -> None:
        raise ConnectionResetError("busy")

    with telemetry.tracers.get_tracer("test").start_as_current_span("call 1"):
        with pytest.raises(ConnectionResetError) as info:
            runner(fail)
    assert t.ms == 202
    t.ms = 500
    with telemetry.tracers.get_tracer("test").start_as_current_span("call 2"):
        assert runner(lambda: "ok") == "ok"

    signals = telemetry.collect()
    _held_to_the_table(signals + telemetry.events(), telemetry.instruments)
    reason, backoff, refused = "KV_TEMPORARY_FAILURE", "best_effort_backoff", "retry_quota_exhausted"
    assert _totals(signals) == {
        ("retrypolicy.attempts", "{}"): 4,
        ("retrypolicy.retries", _attrs(reason=reason, rule=backoff)): 2,
        ("retrypolicy.give_ups", _attrs(end="gave_up", reason=reason, rule=refused)): 1,
        ("retrypolicy.budget.refusals", _attrs(budget__kind="retry_quota", rule=refused)): 1,
        ("retrypolicy.breaker.rejections", _attrs(breaker__name="kv", rule="breaker_open")): 2,
        ("retrypolicy.breaker.state_changes", _attrs(breaker__name="kv", breaker__from="closed", breaker__to="open", rule="breaker_tripped")): 1,
        ("retrypolicy.breaker.state_changes", _attrs(breaker__name="kv", breaker__from="open", breaker__to="half_open", rule="breaker_canary")): 3,
        ("retrypolicy.breaker.state_changes", _attrs(breaker__name="kv", breaker__from="half_open", breaker__to="open", rule="canary_failed")): 2,
        ("retrypolicy.breaker.state_changes", _attrs(breaker__name="kv", breaker__from="half_open", breaker__to="closed", rule="canary_succeeded")): 1,
        ("retrypolicy.breaker.state", _attrs(breaker__name="kv")): 0,
    }
    retry = {"retrypolicy.reason": reason, "retrypolicy.rule": backoff}
    assert telemetry.events() == [
        {"event": "retrypolicy.retry", "attributes": {"retrypolicy.attempt": 1, **retry, "retrypolicy.delay_ms": 1}},
        {"event": "retrypolicy.retry", "attributes": {"retrypolicy.attempt": 2, **retry, "retrypolicy.delay_ms": 4}},
        {
            "event": "retrypolicy.give_up",
            "attributes": {"retrypolicy.attempt": 3, "retrypolicy.end": "gave_up", "retrypolicy.reason": reason, "retrypolicy.rule": refused},
        },
    ]
    assert [s.name for s in telemetry.spans.get_finished_spans()] == ["call 1", "call 2"]
    assert [len(s.events) for s in telemetry.spans.get_finished_spans()] == [3, 0]
    # The same run, as the statistics (the give-up error's, and the runner's after call 2) and the callback saw it.
    stats = rp.run.stats_of(info.value)
    assert stats is not None
    assert (stats.attempts, stats.retries, stats.waited_ms, stats.budget_refusals, stats.breaker_rejections) == (3, 2, 202, 1, 2)
    assert (stats.end, stats.last_rule, stats.elapsed_ms) == ("gave_up", refused, 202)
    assert runner.statistics is not None and (runner.statistics.attempts, runner.statistics.end) == (1, "succeeded")
    assert changes == [
        ("closed", "open", "breaker_tripped"),
        ("open", "half_open", "breaker_canary"),
        ("half_open", "open", "canary_failed"),
        ("open", "half_open", "breaker_canary"),
        ("half_open", "open", "canary_failed"),
        ("open", "half_open", "breaker_canary"),
        ("half_open", "closed", "canary_succeeded"),
    ]


def test_an_http_retry_event_carries_the_resend_count(telemetry: Telemetry) -> None:
    """503, 503, 200 through the httpx transport (backoff 100 ms x 2^n): two retry events with
    ``http.request.resend_count`` 1 and 2, three attempts, no give-up; the response carries the
    run's statistics."""
    answers = iter([503, 503, 200])
    t = MsClock()
    transport = RetryTransport(
        httpx.MockTransport(lambda request: httpx.Response(next(answers))), clock=t.clock, sleep=t.sleep, random=lambda: 0.0
    )
    with telemetry.tracers.get_tracer("test").start_as_current_span("GET"):
        with httpx.Client(transport=transport) as client:
            response = client.get("http://example.test/")
    assert response.status_code == 200
    events = telemetry.events()
    assert [(e["event"], e["attributes"]["http.request.resend_count"], e["attributes"]["retrypolicy.delay_ms"]) for e in events] == [
        ("retrypolicy.retry", 1, 100),
        ("retrypolicy.retry", 2, 200),
    ]
    signals = telemetry.collect()
    assert _totals(signals)[("retrypolicy.attempts", "{}")] == 3
    assert not [s for s in signals if s["metric"] == "retrypolicy.give_ups"]
    stats = stats_of(response)
    assert stats is not None and (stats.attempts, stats.retries, stats.waited_ms, stats.end) == (3, 2, 300, "succeeded")


def test_a_direct_breaker_call_records_its_change(telemetry: Telemetry) -> None:
    breaker = rp.CircuitBreaker({"volume_threshold": 1})
    assert breaker.name == TABLE["breaker_name_default"] == "default"
    breaker.record(0, "failure")
    name = {"retrypolicy.breaker.name": "default"}
    assert telemetry.collect() == [
        {
            "metric": "retrypolicy.breaker.state_changes",
            "value": 1,
            "attributes": {**name, "retrypolicy.breaker.from": "closed", "retrypolicy.breaker.to": "open", "retrypolicy.rule": "breaker_tripped"},
        },
        {"metric": "retrypolicy.breaker.state", "value": 1, "attributes": name},
    ]


def test_two_named_breakers_keep_their_own_gauge_points(telemetry: Telemetry) -> None:
    """Two breakers, "kv" tripped (open) and "query" tripped then sending its canary (half-open):
    the gauge holds one point per name, read back from the in-memory reader."""
    kv = rp.CircuitBreaker({"volume_threshold": 1}, name="kv")
    query = rp.CircuitBreaker.restore({"volume_threshold": 1, "sleep_window_ms": 100}, rp.CircuitBreaker({"volume_threshold": 1}).snapshot(), name="query")
    assert (kv.name, query.name) == ("kv", "query")
    kv.record(0, "failure")
    query.record(0, "failure")
    assert query.permit(101).canary
    points = telemetry.collect()
    gauge = {p["attributes"]["retrypolicy.breaker.name"]: p["value"] for p in points if p["metric"] == "retrypolicy.breaker.state"}
    assert gauge == {"kv": 1, "query": 2}
    changes = sorted(
        (p["attributes"]["retrypolicy.breaker.name"], p["attributes"]["retrypolicy.rule"], p["value"])
        for p in points
        if p["metric"] == "retrypolicy.breaker.state_changes"
    )
    assert changes == [("kv", "breaker_tripped", 1), ("query", "breaker_canary", 1), ("query", "breaker_tripped", 1)]
    with pytest.raises(rp.InvalidTypeError) as info:
        rp.CircuitBreaker(name=7)  # type: ignore[arg-type]
    assert info.value.field == "name"


def test_record_refuses_a_breaker_that_is_not_one_naming_the_field(telemetry: Telemetry) -> None:
    """A breaker's name where the breaker goes is a typed error (before: an AttributeError)."""
    b = rp.CircuitBreaker({"volume_threshold": 1, "sleep_window_ms": 100})
    b.record(0, "failure")
    run = rp.Run({"rules": {"decide": {"operation": {"service": "kv", "operation": "get"}}}, "timeout_ms": 10000}, breaker=b)
    step = run.start(10)  # kept back by the open breaker
    with pytest.raises(rp.InvalidTypeError) as info:
        otel.record(step, breaker="kv")  # type: ignore[arg-type]
    assert info.value.field == "breaker"
    assert info.value.code == "invalid_type"
    otel.record(step, breaker=b)  # the breaker itself is fine


def test_nothing_is_recorded_once_uninstrumented(telemetry: Telemetry) -> None:
    assert otel.is_instrumented()
    otel.uninstrument()
    assert not otel.is_instrumented()
    runner = Retrying(KV_GET, timeout=1, sleep=lambda s: None, breaker=rp.CircuitBreaker({"volume_threshold": 1}))

    def fail() -> None:
        raise ConnectionResetError()

    with pytest.raises(RetryTimeoutError):  # the breaker opened (5 s) past the deadline (1 s)
        runner(fail)
    assert telemetry.collect() == [] and telemetry.events() == []


def _modules_after(code: str) -> list[str]:
    """The ``opentelemetry`` modules loaded in a fresh interpreter after ``code``."""
    script = textwrap.dedent(code) + "\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return list(json.loads(out.strip().replace("'", '"')))


def test_import_and_an_uninstrumented_run_import_nothing_of_opentelemetry() -> None:
    assert _modules_after("import retrypolicy") == []
    assert _modules_after(
        """
        import retrypolicy as rp
        from retrypolicy.run import Retrying, RetryTimeoutError
        calls = []
        def flaky():
            calls.append(1)
            if len(calls) == 1:
                raise ConnectionResetError()
            return 1
        breaker = rp.CircuitBreaker({"volume_threshold": 1, "sleep_window_ms": 0})
        Retrying(rp.Operation.kv("get"), timeout=1, sleep=lambda s: None, breaker=breaker)(flaky)
        assert breaker.last_changes != []  # the run changed the breaker's state: reported, no OpenTelemetry
        """
    ) == []
    assert "opentelemetry.metrics" in _modules_after("import retrypolicy.otel")  # the check can see them


def test_the_readme_example_prints_what_the_readme_says() -> None:
    """The bindings-python README's "Observability" program, run as written: its output worked
    out by hand (three attempts at a KV GET that keeps failing, capped at 3; the breaker of volume
    3 trips on the third failure)."""
    readme = (ROOT / "bindings-python" / "README.md").read_text()
    section = readme.split("## Observability\n", 1)[1].split("\n## ", 1)[0]
    (program,) = re.findall(r"```python\n(.*?)```", section, re.S)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "breaker: closed -> open (breaker_tripped)",
        "3 2 gave_up max_attempts_reached",
        "['retrypolicy.retry', 'retrypolicy.retry', 'retrypolicy.give_up']",
    ]
    reason, rule = "'retrypolicy.reason': 'SOCKET_CLOSED_WHILE_IN_FLIGHT'", "'retrypolicy.rule'"
    assert sorted(lines[3:]) == sorted(
        [
            "retrypolicy.attempts 3 {}",
            f"retrypolicy.retries 2 {{{reason}, {rule}: 'best_effort_backoff'}}",
            f"retrypolicy.give_ups 1 {{'retrypolicy.end': 'gave_up', {reason}, {rule}: 'max_attempts_reached'}}",
            "retrypolicy.breaker.state_changes 1 {'retrypolicy.breaker.name': 'kv', 'retrypolicy.breaker.from': 'closed', "
            f"'retrypolicy.breaker.to': 'open', {rule}: 'breaker_tripped'}}",
            "retrypolicy.breaker.state 1 {'retrypolicy.breaker.name': 'kv'}",
        ]
    )
    records = done.stderr.splitlines()
    assert records[0] == "retrypolicy.breaker INFO circuit breaker closed -> open (breaker_tripped)"
    assert records[1].startswith("retrypolicy INFO __main__.down: gave up (gave_up, last error ConnectionResetError)")
    assert len(records) == 2  # the retries are DEBUG records


def test_the_root_readme_renders_the_table() -> None:
    """The root README's "Observability" tables name each metric, span event and attribute of the
    table with its kind, unit and attributes, so the rendered copy cannot drift from the JSON."""
    section = (ROOT / "README.md").read_text().split("## Observability\n", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(): line for line in section.splitlines() if line.startswith("| `")}
    for m in TABLE["metrics"]:
        attributes = ", ".join(f"`{a}`" for a in m["attributes"]) or "none"
        assert f"| `{m['name']}` | {m['instrument']} | `{m['unit']}` | {attributes} |" in rows[f"`{m['name']}`"]
    for e in TABLE["span_events"]:
        assert ", ".join(f"`{a}`" for a in e["attributes"]) in rows[f"`{e['name']}`"]
    assert set(TABLE["attributes"]) | set(METRICS) | set(EVENTS) == {name.strip("`") for name in rows}

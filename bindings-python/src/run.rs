//! `Run` and `RunStep`: the core's retry run machine, its steps as typed values. The run's budget
//! and breaker are the binding's shared objects, locked per call (the budget first, then the
//! breaker); no Python code runs while they are locked (a host strategy is asked beforehand).

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use retrypolicy as core;
use retrypolicy::run::{Clock, Guards, Outcome, RunAction, RunConfig as CoreConfig, RunDecision};
use retrypolicy::{RetryStrategy, StrategyVerdict};

use crate::aws::AwsDecision;
use crate::breaker::{BreakerChange, BreakerVerdict, CircuitBreaker};
use crate::budget::{BudgetVerdict, RetryBudget};
use crate::convert::{echo, from_py_json, int_in, opt_bool, opt_draw, text, to_py_json, wrong_type};
use crate::decision::Decision;
use crate::errors::{CoreError, IntoPy};
use crate::grpc::GrpcRetryDecision;
use crate::reason;
use crate::strategy::HostAnswers;

/// A run's configuration (`{"rules": ..., "timeout_ms"?, "max_attempts"?, "attempt_timeout_ms"?}`),
/// parsed and checked once; a `Run` may be made of it many times.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct RunConfig {
    /// A run of this configuration, checked and not started: each `Run` made of it is a copy
    /// (checking the policy again per run cost about 20 ns of the runner's 2 µs, bench_runner.py).
    ready: core::run::Run,
}

#[pymethods]
impl RunConfig {
    /// A configuration from its JSON form (a dict); errors name `config.<field>`.
    #[new]
    fn new(config: &Bound<'_, PyAny>) -> PyResult<Self> {
        let inner: CoreConfig = from_py_json("config", config)?;
        let ready = core::run::Run::new(inner).map_err(|e| placed("config", e)).py()?;
        Ok(RunConfig { ready })
    }
    /// A run of this configuration with the optional shared `budget` and `breaker` and a host
    /// `strategy`, started at `now_ms`: `(run, its first step)`, as `Run(...)` then `start` in one call.
    #[pyo3(signature = (now_ms, budget = None, breaker = None, strategy = None))]
    fn start(
        &self,
        py: Python<'_>,
        now_ms: &Bound<'_, PyAny>,
        budget: Option<Py<RetryBudget>>,
        breaker: Option<Py<CircuitBreaker>>,
        strategy: Option<Py<PyAny>>,
    ) -> PyResult<(Run, RunStep)> {
        let mut run = Run {
            inner: self.ready.clone(),
            budget,
            breaker,
            strategy: strategy.filter(|s| !s.is_none(py)),
        };
        let step = run.start(py, now_ms, None)?;
        Ok((run, step))
    }
    /// The configuration as a JSON-shaped dict.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py_json(py, self.ready.config())
    }
    /// `RunConfig(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("RunConfig({})", crate::convert::to_json(self.ready.config()))
    }
}

/// `e` with its field placed under `prefix`.
fn placed(prefix: &str, e: core::Error) -> core::Error {
    match e.field() {
        "" => e.with_field(prefix),
        f => {
            let f = format!("{prefix}.{f}");
            e.with_field(&f)
        }
    }
}

/// One retry run: tell it what happened, do what its `RunStep` says. Not shared between calls.
#[pyclass(module = "retrypolicy._lowlevel")]
pub struct Run {
    inner: core::run::Run,
    budget: Option<Py<RetryBudget>>,
    breaker: Option<Py<CircuitBreaker>>,
    strategy: Option<Py<PyAny>>,
}

/// A clock reading in ms: an int or a float (bools refused; the core checks the range).
fn clock_ms(field: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    if v.is_instance_of::<PyBool>() || !(v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>()) {
        return Err(wrong_type(field, "a clock reading in ms (int or float)", v));
    }
    v.extract::<f64>()
}

/// The host's clock for one event.
fn clock_of(
    now_ms: &Bound<'_, PyAny>,
    random: Option<&Bound<'_, PyAny>>,
    now_unix_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<Clock> {
    let random = match random {
        Some(r) => opt_draw("random", r)?,
        None => None,
    };
    let now_unix_ms = match now_unix_ms.filter(|v| !v.is_none()) {
        Some(v) => Some(int_in::<u64>("now_unix_ms", v, "0..=18446744073709551615")?),
        None => None,
    };
    Ok(Clock {
        now_ms: clock_ms("now_ms", now_ms)?,
        random,
        now_unix_ms,
    })
}

/// The `unknown_field` error for a key of `d` outside `allowed`, when `d` has more keys than the
/// `found` allowed ones it was read for.
fn unknown_key(d: &Bound<'_, PyDict>, found: usize, allowed: &[&str]) -> PyResult<()> {
    if d.len() == found {
        return Ok(());
    }
    for key in d.keys() {
        let k: String = key.extract().unwrap_or_else(|_| echo(&key));
        if !allowed.contains(&k.as_str()) {
            let field = core::error::shorten(&format!("outcome.{k}"));
            return Err(CoreError(core::Error::UnknownField { field }).into());
        }
    }
    Ok(())
}

/// The `missing_field` error for `field`.
fn missing(field: &str) -> PyErr {
    CoreError(core::Error::MissingField {
        field: field.to_owned(),
    })
    .into()
}

/// An outcome of a kind without fields, by name.
fn bare(kind: &str) -> Option<Outcome> {
    match kind {
        "success" => Some(Outcome::Success),
        "final" => Some(Outcome::Final),
        "timeout" => Some(Outcome::Timeout),
        _ => None,
    }
}

/// An outcome: a dict in the JSON form (`{"kind": "http", "status": 503, "retry_after": "1"}`),
/// or a kind's name alone for the kinds without fields (`"success"`, `"final"`, `"timeout"`).
/// The common kinds are read field by field; `kv` and `mongodb` through their JSON form.
fn outcome_of<'py>(v: &Bound<'py, PyAny>) -> PyResult<Outcome> {
    let py = v.py();
    if let Ok(s) = v.cast::<PyString>() {
        return bare(&s.to_cow()?).ok_or_else(|| {
            CoreError(core::Error::OutOfRange {
                field: "outcome".to_owned(),
                value: echo(v),
                expected: "success, final or timeout (other kinds are dicts)".to_owned(),
            })
            .into()
        });
    }
    let d = v
        .cast::<PyDict>()
        .map_err(|_| wrong_type("outcome", "a dict with a kind", v))?;
    // A key set to None counts as absent, as a JSON null does.
    let get = |k: &Bound<'py, PyString>| d.get_item(k).map(|o| o.filter(|x| !x.is_none()));
    let kind = get(pyo3::intern!(py, "kind"))?.ok_or_else(|| missing("outcome.kind"))?;
    let kind = kind
        .cast_into::<PyString>()
        .map_err(|e| wrong_type("outcome.kind", "a str", e.into_inner().as_any()))?;
    let kind = crate::convert::utf8("outcome.kind", &kind)?;
    if let Some(o) = bare(&kind) {
        unknown_key(d, 1, &["kind"])?;
        return Ok(o);
    }
    match kind.as_ref() {
        // A key the kind does not have is refused before a missing one, as JSON reads them.
        "reason" => {
            let r = get(pyo3::intern!(py, "reason"))?;
            let t = get(pyo3::intern!(py, "timeout"))?;
            let found = 1 + usize::from(r.is_some()) + usize::from(t.is_some());
            unknown_key(d, found, &["kind", "reason", "timeout"])?;
            let reason = reason::from_py("outcome.reason", &r.ok_or_else(|| missing("outcome.reason"))?)?;
            let timeout = match t {
                Some(t) => opt_bool("outcome.timeout", &t)?.unwrap_or(false),
                None => false,
            };
            Ok(Outcome::Reason { reason, timeout })
        }
        "network" => {
            let sent = get(pyo3::intern!(py, "sent"))?;
            unknown_key(d, 1 + usize::from(sent.is_some()), &["kind", "sent"])?;
            let sent = match sent {
                Some(s) => opt_bool("outcome.sent", &s)?,
                None => None,
            };
            Ok(Outcome::Network { sent })
        }
        "http" => {
            let s = get(pyo3::intern!(py, "status"))?;
            let h = get(pyo3::intern!(py, "retry_after"))?;
            let found = 1 + usize::from(s.is_some()) + usize::from(h.is_some());
            unknown_key(d, found, &["kind", "status", "retry_after"])?;
            let s = s.ok_or_else(|| missing("outcome.status"))?;
            let status = int_in::<u16>("outcome.status", &s, "100..=599")?;
            let retry_after = match h {
                Some(h) => Some(text("outcome.retry_after", &h)?),
                None => None,
            };
            Ok(Outcome::Http { status, retry_after })
        }
        // kv, mongodb, and a kind the core does not know (its error names it).
        _ => from_py_json("outcome", v),
    }
}

/// A host strategy's answers, asked once without any lock held and replayed under the locks.
struct Replay {
    answers: RefCell<std::collections::VecDeque<StrategyVerdict>>,
}

impl RetryStrategy for Replay {
    fn retry_after(&self, _: &core::Request, _: core::RetryReason) -> Result<StrategyVerdict, core::Error> {
        self.answers
            .borrow_mut()
            .pop_front()
            .ok_or_else(|| core::Error::InvalidType {
                field: "strategy.retry_after".to_owned(),
                message: "the host strategy was asked again".to_owned(),
            })
    }
}

/// One event for the machine, given the strategy as the core sees it.
type Event<'e> = dyn Fn(&mut core::run::Run, Guards<'_>, Option<&dyn RetryStrategy>) -> Result<core::run::RunStep, core::Error>
    + 'e;

impl Run {
    /// Calls `f` with the run's budget and breaker locked (budget first) for the call.
    fn locked<R>(
        py: Python<'_>,
        budget: &Option<Py<RetryBudget>>,
        breaker: &Option<Py<CircuitBreaker>>,
        f: impl FnOnce(Guards<'_>) -> R,
    ) -> R {
        let mut budget_guard = budget.as_ref().map(|b| b.bind(py).get().lock());
        let mut breaker_guard = breaker.as_ref().map(|b| b.bind(py).get().lock());
        let result = f(Guards {
            budget: budget_guard.as_deref_mut(),
            breaker: breaker_guard.as_deref_mut(),
        });
        drop(breaker_guard);
        drop(budget_guard);
        result
    }

    /// Tells the machine `event` under the locks, with the run's strategy: a built-in one is the
    /// core's own; a host one is asked first on a copy of the run and of the breaker's state, with
    /// no lock held (no Python runs under them), and its answers replayed under the locks.
    fn event(&mut self, py: Python<'_>, event: &Event<'_>) -> PyResult<core::run::RunStep> {
        let Run {
            inner,
            budget,
            breaker,
            strategy,
        } = self;
        let Some(strategy) = strategy.as_ref().map(|s| s.bind(py).clone()) else {
            let step = Run::locked(py, budget, breaker, |g| event(inner, g, None)).py()?;
            return reported(py, breaker, step);
        };
        if let Some(builtin) = crate::strategy::builtin(&strategy) {
            let step = Run::locked(py, budget, breaker, |g| event(inner, g, Some(builtin))).py()?;
            return reported(py, breaker, step);
        }
        // The copy sees the breaker as the locked call will: the GIL is held from one to the other
        // unless the strategy runs, and it runs only for a question the copy asked; a breaker
        // refusal and a failure are each asked about once, so the locked call never asks more.
        let mut copy = breaker.as_ref().map(|b| b.bind(py).get().lock().clone());
        let answers = HostAnswers::ask(&strategy, |host| {
            let guards = Guards {
                budget: None,
                breaker: copy.as_mut(),
            };
            event(&mut inner.clone(), guards, Some(host))
        })?;
        let replay = Replay {
            answers: RefCell::new(answers),
        };
        let step = Run::locked(py, budget, breaker, |g| event(inner, g, Some(&replay))).py()?;
        reported(py, breaker, step)
    }
}

/// `step`, once each breaker state change it made is reported, in order, the locks released:
/// the `on_state_change` callback, the log and OpenTelemetry see them before the host sees the step.
fn reported(
    py: Python<'_>,
    breaker: &Option<Py<CircuitBreaker>>,
    step: core::run::RunStep,
) -> PyResult<core::run::RunStep> {
    if let Some(b) = breaker {
        crate::breaker::report(b.bind(py), &step.breaker_changes)?;
    }
    Ok(step)
}

#[pymethods]
impl Run {
    /// A run of `config` (a dict in the JSON form, or a `RunConfig`) with an optional shared
    /// `budget` and `breaker` and a host `strategy` (asked by the `decide` rules).
    #[new]
    #[pyo3(signature = (config, *, budget = None, breaker = None, strategy = None))]
    fn new(
        py: Python<'_>,
        config: &Bound<'_, PyAny>,
        budget: Option<Py<RetryBudget>>,
        breaker: Option<Py<CircuitBreaker>>,
        strategy: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let inner = match config.cast::<RunConfig>() {
            Ok(c) => c.get().ready.clone(),
            Err(_) => RunConfig::new(config)?.ready,
        };
        Ok(Run {
            inner,
            budget,
            breaker,
            strategy: strategy.filter(|s| !s.is_none(py)),
        })
    }

    /// Starts the run at `now_ms` (ms on any monotonic clock): send attempt 1, or wait, or done.
    #[pyo3(signature = (now_ms, random = None))]
    fn start(
        &mut self,
        py: Python<'_>,
        now_ms: &Bound<'_, PyAny>,
        random: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RunStep> {
        let clock = clock_of(now_ms, random, None)?;
        let step = self.event(py, &|r, g, s| r.start_with_strategy(clock, g, s))?;
        Ok(RunStep { inner: step })
    }

    /// The attempt ended with `outcome` at `now_ms`: wait, then retry; or done.
    #[pyo3(signature = (outcome, now_ms, random = None, now_unix_ms = None))]
    fn attempt_ended(
        &mut self,
        py: Python<'_>,
        outcome: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
        random: Option<&Bound<'_, PyAny>>,
        now_unix_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RunStep> {
        let outcome = outcome_of(outcome)?;
        let clock = clock_of(now_ms, random, now_unix_ms)?;
        let step = self.event(py, &|r, g, s| r.attempt_ended(&outcome, clock, g, s))?;
        Ok(RunStep { inner: step })
    }

    /// The attempt succeeded at `now_ms`: the run is done (`attempt_ended("success", now_ms)`
    /// without building the step nobody reads).
    fn succeeded(&mut self, py: Python<'_>, now_ms: &Bound<'_, PyAny>) -> PyResult<()> {
        let clock = clock_of(now_ms, None, None)?;
        let Run {
            inner,
            budget,
            breaker,
            ..
        } = self;
        let step = Run::locked(py, budget, breaker, |g| {
            inner.attempt_ended(&Outcome::Success, clock, g, None)
        })
        .py()?;
        reported(py, breaker, step).map(drop)
    }

    /// The wait of a `wait` step is over at `now_ms`: send the next attempt, or wait, or done.
    #[pyo3(signature = (now_ms, random = None))]
    fn wait_ended(
        &mut self,
        py: Python<'_>,
        now_ms: &Bound<'_, PyAny>,
        random: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RunStep> {
        let clock = clock_of(now_ms, random, None)?;
        let step = self.event(py, &|r, g, s| r.wait_ended_with_strategy(clock, g, s))?;
        Ok(RunStep { inner: step })
    }

    /// The host cancelled the run at `now_ms`: done, cancelled (a canary attempt is released).
    fn cancel(&mut self, py: Python<'_>, now_ms: &Bound<'_, PyAny>) -> PyResult<RunStep> {
        let clock = clock_of(now_ms, None, None)?;
        let Run {
            inner,
            budget,
            breaker,
            ..
        } = self;
        let step = Run::locked(py, budget, breaker, |g| inner.cancel(clock, g)).py()?;
        let step = reported(py, breaker, step)?;
        Ok(RunStep { inner: step })
    }

    /// What the run did so far: attempts, retries, waiting, the budget's and breaker's verdicts.
    #[getter]
    fn stats(&self) -> RunStats {
        RunStats {
            inner: self.inner.stats(),
        }
    }

    /// Attempts sent so far.
    #[getter]
    fn attempts_sent(&self) -> u32 {
        self.inner.attempts_sent()
    }

    /// Where the run is: `ready`, `sending`, `waiting` or `done`.
    #[getter]
    fn phase(&self) -> &'static str {
        match self.inner.phase() {
            core::run::RunPhase::Ready => "ready",
            core::run::RunPhase::Sending => "sending",
            core::run::RunPhase::Waiting => "waiting",
            core::run::RunPhase::Done => "done",
        }
    }
}

/// The machine's answer to one event: send, wait or done, with the rule that decided; immutable.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
pub struct RunStep {
    inner: core::run::RunStep,
}

#[pymethods]
impl RunStep {
    /// `"send"`, `"wait"` or `"done"`.
    #[getter]
    fn action<'py>(&self, py: Python<'py>) -> &Bound<'py, PyString> {
        match self.inner.action {
            RunAction::Send => pyo3::intern!(py, "send"),
            RunAction::Wait => pyo3::intern!(py, "wait"),
            RunAction::Done => pyo3::intern!(py, "done"),
        }
    }
    /// Send: the attempt to send (the first is 1); wait: the attempt that follows; done: attempts sent.
    #[getter]
    fn attempt(&self) -> u32 {
        self.inner.attempt
    }
    /// Send: the attempt must end within this many ms, or None.
    #[getter]
    fn timeout_ms(&self) -> Option<u64> {
        self.inner.timeout_ms
    }
    /// Wait: how long, in ms.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms
    }
    /// Done: `succeeded`, `final`, `gave_up`, `timed_out` or `cancelled`; else None.
    #[getter]
    fn end(&self) -> Option<&'static str> {
        self.inner.end.map(core::run::RunEnd::name)
    }
    /// The reason of the failure behind a wait or an end, or None.
    #[getter]
    fn reason(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.reason.map(|r| reason::to_py(py, r)).transpose()
    }
    /// The rule that decided.
    #[getter]
    fn rule(&self) -> &'static str {
        self.inner.rule
    }
    /// Its source.
    #[getter]
    fn section(&self) -> &'static str {
        self.inner.section
    }
    /// Time since the run started, rounded up to whole ms.
    #[getter]
    fn elapsed_ms(&self) -> u64 {
        self.inner.elapsed_ms
    }
    /// The wait a valid `Retry-After` asked for, or None.
    #[getter]
    fn retry_after_ms(&self) -> Option<u64> {
        self.inner.retry_after_ms
    }
    /// The domain's decision as that domain's function gives it: a `Decision` (the `decide`
    /// rules), a `GrpcRetryDecision`, an `AwsDecision`, the HTTP loop's step or MongoDB's decision
    /// (dicts), or None.
    #[getter]
    fn decision(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(match &self.inner.decision {
            None => None,
            Some(RunDecision::Decide(d)) => Some(Py::new(py, Decision::from(*d))?.into_any()),
            Some(RunDecision::Http(d)) => Some(to_py_json(py, d)?),
            Some(RunDecision::Mongodb(d)) => Some(to_py_json(py, d)?),
            Some(RunDecision::Grpc(d)) => Some(Py::new(py, GrpcRetryDecision::from(*d))?.into_any()),
            Some(RunDecision::Aws(d)) => Some(Py::new(py, AwsDecision::from(*d))?.into_any()),
        })
    }
    /// The budget's verdict when it was asked for this step, or None.
    #[getter]
    fn budget(&self) -> Option<BudgetVerdict> {
        self.inner.budget.map(|inner| BudgetVerdict { inner })
    }
    /// The breaker's verdict when it was asked for this step, or None.
    #[getter]
    fn breaker(&self) -> Option<BreakerVerdict> {
        self.inner.breaker.map(|inner| BreakerVerdict { inner })
    }
    /// The changes of the breaker's state this step's call made, in order (an empty list for none).
    #[getter]
    fn breaker_changes(&self) -> Vec<BreakerChange> {
        self.inner
            .breaker_changes
            .iter()
            .map(|&inner| BreakerChange { inner })
            .collect()
    }
    /// What the step is for an observer: `retry` (a wait after a failed attempt), `give_up` (an
    /// end that gave up or timed out) or `none`; the core decides it.
    #[getter]
    fn signal(&self) -> &'static str {
        self.inner.signal.name()
    }
    /// The step as JSON (the `run` fixtures' form).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    /// One log line.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    /// `RunStep(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("RunStep({})", self.inner.to_json())
    }
}

/// What a run did so far (`Run.stats`): counts, time, and the last step's rule and verdicts;
/// immutable.
#[pyclass(frozen, eq, module = "retrypolicy._lowlevel")]
#[derive(PartialEq)]
pub struct RunStats {
    inner: core::RunStats,
}

#[pymethods]
impl RunStats {
    /// Attempts sent.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts
    }
    /// Retries decided: waits the rules asked for after a failed attempt.
    #[getter]
    fn retries(&self) -> u32 {
        self.inner.retries
    }
    /// All the waiting asked for (the retries' and the breaker's), in ms.
    #[getter]
    fn waited_ms(&self) -> u64 {
        self.inner.waited_ms
    }
    /// Time from the run's start to its last event, rounded up to whole ms.
    #[getter]
    fn elapsed_ms(&self) -> u64 {
        self.inner.elapsed_ms
    }
    /// Retries the budget refused (each ends the run).
    #[getter]
    fn budget_refusals(&self) -> u32 {
        self.inner.budget_refusals
    }
    /// Attempts the breaker kept back.
    #[getter]
    fn breaker_rejections(&self) -> u32 {
        self.inner.breaker_rejections
    }
    /// How the run ended (`succeeded`, `final`, `gave_up`, `timed_out`, `cancelled`), or None.
    #[getter]
    fn end(&self) -> Option<&'static str> {
        self.inner.end.map(core::run::RunEnd::name)
    }
    /// The rule of the last step, or None before the run started.
    #[getter]
    fn last_rule(&self) -> Option<&'static str> {
        self.inner.last_rule
    }
    /// The reason of the last step that had one, or None.
    #[getter]
    fn last_reason(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner.last_reason.map(|r| reason::to_py(py, r)).transpose()
    }
    /// The budget's last verdict in this run, or None.
    #[getter]
    fn last_budget(&self) -> Option<BudgetVerdict> {
        self.inner.last_budget.map(|inner| BudgetVerdict { inner })
    }
    /// The breaker's last verdict in this run, or None.
    #[getter]
    fn last_breaker(&self) -> Option<BreakerVerdict> {
        self.inner.last_breaker.map(|inner| BreakerVerdict { inner })
    }
    /// The statistics as JSON (the `run` fixtures' `stats`).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    /// `RunStats(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("RunStats({})", self.inner.to_json())
    }
}

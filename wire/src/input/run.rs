//! The input of `run`: a run's configuration, its shared budget and breaker, and its events.

use serde::Deserialize;

use retrypolicy::*;

use super::HostStrategyInput;

/// `run`: a run of `run` replayed through `events`, with an optional budget and breaker (each
/// from a document and an optional snapshot) and an optional host strategy given as data.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunInput {
    pub(crate) run: RunConfig,
    #[cfg(feature = "guards")]
    #[serde(default)]
    pub(crate) budget: Option<BudgetDocument>,
    #[cfg(feature = "guards")]
    #[serde(default)]
    pub(crate) budget_state: Option<BudgetSnapshot>,
    #[cfg(feature = "guards")]
    #[serde(default)]
    pub(crate) breaker: Option<BreakerDocument>,
    #[cfg(feature = "guards")]
    #[serde(default)]
    pub(crate) breaker_state: Option<BreakerSnapshot>,
    #[serde(default)]
    pub(crate) host: Option<HostStrategyInput>,
    pub(crate) events: Vec<RunEventInput>,
}

/// The four events a host tells a run.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunEventKind {
    Start,
    AttemptEnded,
    WaitEnded,
    Cancel,
}

/// One event: `{"event": "attempt_ended", "at_ms": 12.5, "outcome": {...}, "random": 0.5}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunEventInput {
    pub(crate) event: RunEventKind,
    pub(crate) at_ms: f64,
    #[serde(default)]
    pub(crate) outcome: Option<Outcome>,
    #[serde(default, deserialize_with = "retrypolicy::serde_form::draw::deserialize")]
    pub(crate) random: Option<f64>,
    #[serde(default, with = "retrypolicy::serde_form::ms::option")]
    pub(crate) now_unix_ms: Option<u64>,
}

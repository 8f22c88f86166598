//! A build without the `guards` feature has no circuit breaker: [`CircuitBreaker`] has no value,
//! so a run's [`crate::run::Guards`] never holds one, and the code that would ask it compiles to
//! nothing. Its methods are the ones a run calls, each unreachable.

use super::{BreakerChange, BreakerOutcome, BreakerVerdict, CanaryToken};

/// No circuit breaker: this build leaves out the `guards` feature (README, "Features").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CircuitBreaker {}

impl CircuitBreaker {
    /// Never called: no breaker exists.
    pub fn permit(&mut self, _now_ms: u64) -> BreakerVerdict {
        match *self {}
    }

    /// Never called: no breaker exists.
    pub fn retry_in_ms(&self, _now_ms: u64) -> u64 {
        match *self {}
    }

    /// Never called: no breaker exists.
    pub fn release_canary(&mut self, _now_ms: u64, _canary: Option<CanaryToken>) {
        match *self {}
    }

    /// Never called: no breaker exists.
    pub fn record(&mut self, _now_ms: u64, _outcome: BreakerOutcome) {
        match *self {}
    }

    /// Never called: no breaker exists.
    pub fn last_changes(&self) -> Vec<BreakerChange> {
        match *self {}
    }
}

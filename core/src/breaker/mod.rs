//! A per-endpoint circuit breaker with Couchbase's parameters, as pure state with no clock.
//!
//! Couchbase's `LazyCircuitBreaker` (couchbase/couchbase-jvm-clients `core-io/src/main/java/com/
//! couchbase/client/core/endpoint/LazyCircuitBreaker.java`, defaults in `CircuitBreakerConfig.java`:
//! enabled, volumeThreshold 20, errorThresholdPercentage 50, sleepWindow 5 s, rollingWindow 1 min;
//! `canaryTimeout` 5 s as in couchbase-net-client's `CircuitBreakerConfiguration` and gocb):
//! - closed: every request passes; outcomes are counted in a window that restarts when it is
//!   older than `rolling_window_ms`; a failure trips the circuit open when the window holds at
//!   least `volume_threshold` outcomes and `failures × 100 / total ≥ error_threshold_percentage`;
//! - open: requests are refused with RFC 0049's `CIRCUIT_BREAKER_OPEN` (which `decide` knows how
//!   to retry) until more than `sleep_window_ms` has passed; then the next request passes as the
//!   one canary and the circuit is half-open;
//! - half-open: every other request is refused; the canary's success closes the circuit (counts
//!   reset), its failure opens it again, and a canary without an answer `canary_timeout_ms` after
//!   it was sent counts as a failure at that moment. As in Couchbase, any outcome recorded while
//!   half-open settles the canary.
//!
//! Outcomes recorded while open still count, as in Couchbase (a failure that keeps the window over
//! the threshold restarts the sleep). A clock reading earlier than a time the breaker holds (the
//! clock went back, or a snapshot came from a clock that ran ahead) moves that time back to the
//! reading: an open circuit then waits its sleep window from now, a half-open one its canary
//! timeout, and a counting window restarts now, so no jump of the clock holds the circuit longer
//! than its own windows (a wall clock that stepped back an hour used to keep a tripped circuit
//! open that hour). Readings past 2^53 − 1 ms (285,000 years) are read as 2^53 − 1.
//!
//! ```
//! use retrypolicy::{BreakerConfig, BreakerOutcome, CircuitBreaker, RetryReason};
//!
//! let mut breaker = CircuitBreaker::new(&BreakerConfig::default());
//! for _ in 0..20 {
//!     breaker.record(0, BreakerOutcome::Failure);
//! }
//! assert_eq!(breaker.permit(1).reason, Some(RetryReason::CircuitBreakerOpen));
//! assert!(breaker.permit(5_001).canary); // the one canary, after the 5 s sleep window
//! assert!(!breaker.permit(5_002).permitted);
//! ```

#[cfg(feature = "guards")]
mod document;
#[cfg(not(feature = "guards"))]
mod unbuilt;

use serde::{Deserialize, Serialize};

use crate::reason::RetryReason;

#[cfg(feature = "guards")]
pub use document::{BreakerConfig, BreakerDocument, BreakerSnapshot, BREAKER_VERSION};
#[cfg(not(feature = "guards"))]
pub use unbuilt::CircuitBreaker;

/// `window_start_ms` before any outcome (no clock reading reaches it: readings stop at 2^53 − 1).
#[cfg(feature = "guards")]
const NO_WINDOW: u64 = u64::MAX;

/// The three states of a circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Requests pass; outcomes are counted.
    Closed,
    /// Requests are refused until the sleep window ends.
    Open,
    /// One canary is out; other requests are refused.
    HalfOpen,
}

impl BreakerState {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// How a request sent through the breaker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerOutcome {
    /// It succeeded.
    Success,
    /// It failed in a way the host counts against the endpoint.
    Failure,
    /// It timed out (a failure).
    Timeout,
}

/// The rule behind a breaker's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerRule {
    /// The breaker is disabled: everything passes.
    BreakerDisabled,
    /// Closed: the request passes.
    BreakerClosed,
    /// Open past the sleep window: this request is the canary.
    BreakerCanary,
    /// Open within the sleep window: refused.
    BreakerOpen,
    /// Half-open with the canary out: refused.
    BreakerCanaryInFlight,
}

impl BreakerRule {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BreakerRule::BreakerDisabled => "breaker_disabled",
            BreakerRule::BreakerClosed => "breaker_closed",
            BreakerRule::BreakerCanary => "breaker_canary",
            BreakerRule::BreakerOpen => "breaker_open",
            BreakerRule::BreakerCanaryInFlight => "breaker_canary_in_flight",
        }
    }

    /// Whether the rule lets the request through.
    pub fn permits(self) -> bool {
        matches!(
            self,
            BreakerRule::BreakerDisabled | BreakerRule::BreakerClosed | BreakerRule::BreakerCanary
        )
    }
}

/// What moved a circuit from one state to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerChangeRule {
    /// Closed (or open, counting on): the window's failures reached the threshold, so it opened.
    BreakerTripped,
    /// Open past the sleep window: a request went out as the canary (half-open).
    BreakerCanary,
    /// The canary succeeded: closed, counts reset.
    CanarySucceeded,
    /// The canary failed: open again for a sleep window.
    CanaryFailed,
    /// The canary went unanswered past `canary_timeout_ms`: open again, as if it failed then.
    CanaryTimedOut,
    /// The host cancelled the canary: open, its sleep window over, so the next request is the canary.
    CanaryReleased,
}

impl BreakerChangeRule {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BreakerChangeRule::BreakerTripped => "breaker_tripped",
            BreakerChangeRule::BreakerCanary => "breaker_canary",
            BreakerChangeRule::CanarySucceeded => "canary_succeeded",
            BreakerChangeRule::CanaryFailed => "canary_failed",
            BreakerChangeRule::CanaryTimedOut => "canary_timed_out",
            BreakerChangeRule::CanaryReleased => "canary_released",
        }
    }
}

/// One change of a circuit's state made by a call of [`CircuitBreaker::permit`],
/// [`CircuitBreaker::record`] or [`CircuitBreaker::release`]: for a breaker's state-change event.
///
/// One call can make two changes (a canary past its timeout counts as failed, then the request
/// that noticed becomes the next canary): [`CircuitBreaker::last_changes`] lists each, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BreakerChange {
    /// The state before this change.
    pub from: BreakerState,
    /// The state after it.
    pub to: BreakerState,
    /// What moved it.
    pub rule: BreakerChangeRule,
}

/// The most changes of state one call can make: a canary found timed out (open), then the
/// request that found it sent as the next canary (half-open).
pub const MAX_BREAKER_CHANGES: usize = 2;

/// The source of every breaker rule.
pub const BREAKER_SOURCE: &str = "Couchbase circuit breaker (couchbase-jvm-clients core-io \
     endpoint/LazyCircuitBreaker.java and CircuitBreakerConfig.java: volumeThreshold 20, \
     errorThresholdPercentage 50, sleepWindow 5 s, rollingWindow 1 min; canaryTimeout 5 s); \
     RFC 0049, RetryReason CIRCUIT_BREAKER_OPEN";

/// Which canary a request is: the one a [`BreakerVerdict`] let out, for
/// [`CircuitBreaker::release_canary`]. Each canary a breaker lets out has its own (a breaker
/// restored from a snapshot starts counting again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CanaryToken(u64);

/// A breaker's answer to "may a request be sent now?". Two verdicts are equal when their answers
/// are (the token names a canary, as a snapshot does not: a restored breaker answers the same).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BreakerVerdict {
    /// Whether the request may be sent.
    pub permitted: bool,
    /// Whether this request is the half-open canary.
    pub canary: bool,
    /// The canary's token, when this request is the canary (not in the JSON form).
    #[serde(skip)]
    pub canary_token: Option<CanaryToken>,
    /// The circuit's state after this call.
    pub state: BreakerState,
    /// `CIRCUIT_BREAKER_OPEN` when refused (the reason to hand `decide`), else null.
    pub reason: Option<RetryReason>,
    /// The rule that decided.
    pub rule: BreakerRule,
    /// The source text of that rule.
    pub source: &'static str,
}

impl PartialEq for BreakerVerdict {
    fn eq(&self, other: &BreakerVerdict) -> bool {
        let answer = |v: &BreakerVerdict| (v.permitted, v.canary, v.state, v.reason, v.rule, v.source);
        answer(self) == answer(other)
    }
}

impl Eq for BreakerVerdict {}

/// A circuit breaker: its configuration and state. A host calling it from several threads wraps
/// it in its own lock: [`CircuitBreaker::permit`] changes state (it lets out at most one canary).
/// Two breakers are equal when their configuration and state are (the last call's changes are not
/// state: a restored snapshot equals the breaker it was taken of).
#[cfg(feature = "guards")]
#[derive(Debug, Clone)]
pub struct CircuitBreaker {
    config: BreakerConfig,
    state: BreakerState,
    /// When the circuit opened (open) or the canary was sent (half-open); 0 when closed.
    since_ms: u64,
    /// When the counting window started; [`NO_WINDOW`] until the first outcome after a reset (a
    /// plain number, not an `Option`: the state holds no uninitialised payload for memcheck to
    /// follow through branch-free code).
    window_start_ms: u64,
    total: u64,
    failures: u64,
    /// The changes the last `permit`, `record` or `release` made, in order; not part of a snapshot.
    changes: [Option<BreakerChange>; MAX_BREAKER_CHANGES],
    /// Canaries let out so far, the last one's token; not part of a snapshot (nor of equality).
    canaries: u64,
}

#[cfg(feature = "guards")]
impl PartialEq for CircuitBreaker {
    fn eq(&self, other: &CircuitBreaker) -> bool {
        (
            self.config,
            self.state,
            self.since_ms,
            self.window_start_ms,
            self.total,
            self.failures,
        ) == (
            other.config,
            other.state,
            other.since_ms,
            other.window_start_ms,
            other.total,
            other.failures,
        )
    }
}

#[cfg(feature = "guards")]
impl Eq for CircuitBreaker {}

#[cfg(feature = "guards")]
impl CircuitBreaker {
    /// A closed breaker of `config` with empty counts.
    pub fn new(config: &BreakerConfig) -> CircuitBreaker {
        CircuitBreaker {
            config: *config,
            state: BreakerState::Closed,
            since_ms: 0,
            window_start_ms: NO_WINDOW,
            total: 0,
            failures: 0,
            changes: [None; MAX_BREAKER_CHANGES],
            canaries: 0,
        }
    }

    /// The state changes the last [`CircuitBreaker::permit`], [`CircuitBreaker::record`] or
    /// [`CircuitBreaker::release`] made, in the order it made them (none, one, or at most
    /// [`MAX_BREAKER_CHANGES`]): one state-change event each for the host.
    pub fn last_changes(&self) -> Vec<BreakerChange> {
        self.changes.iter().flatten().copied().collect()
    }

    /// Starts a state-changing call: forgets the last call's changes.
    fn begin(&mut self) {
        self.changes = [None; MAX_BREAKER_CHANGES];
    }

    /// Notes that the state, `from` before, changed to the current one by `rule`.
    fn changed(&mut self, from: BreakerState, rule: BreakerChangeRule) {
        let change = Some(BreakerChange {
            from,
            to: self.state,
            rule,
        });
        if let Some(free) = self.changes.iter_mut().find(|c| c.is_none()) {
            *free = change;
        }
    }

    /// This breaker's configuration.
    pub fn config(&self) -> BreakerConfig {
        self.config
    }

    /// The state at `now_ms`, counting an unanswered canary past its timeout as failed; changes nothing.
    pub fn state(&self, now_ms: u64) -> BreakerState {
        let mut view = self.clone();
        let now_ms = view.rebase(now_ms);
        view.settle_canary(now_ms);
        view.state
    }

    /// The reading `now_ms`, clamped to 2^53 − 1, with every time held that is later than it
    /// moved back to it (the module's clock rule).
    fn rebase(&mut self, now_ms: u64) -> u64 {
        let now = now_ms.min(crate::serde_form::ms::MAX_SAFE);
        self.since_ms = self.since_ms.min(now);
        if self.window_start_ms != NO_WINDOW && self.window_start_ms > now {
            self.window_start_ms = now;
        }
        now
    }

    /// A canary unanswered for `canary_timeout_ms` failed when that time ran out; says whether
    /// it did.
    fn settle_canary(&mut self, now_ms: u64) -> bool {
        let timed_out = self.state == BreakerState::HalfOpen
            && now_ms.saturating_sub(self.since_ms) >= self.config.canary_timeout_ms;
        if timed_out {
            self.state = BreakerState::Open;
            self.since_ms = self.since_ms.saturating_add(self.config.canary_timeout_ms);
        }
        timed_out
    }

    /// Settles the canary, noting the change (half-open to open) if it timed out.
    fn settle_canary_noting(&mut self, now_ms: u64) {
        if self.settle_canary(now_ms) {
            self.changed(BreakerState::HalfOpen, BreakerChangeRule::CanaryTimedOut);
        }
    }

    fn verdict(&self, rule: BreakerRule) -> BreakerVerdict {
        let canary = rule == BreakerRule::BreakerCanary;
        BreakerVerdict {
            permitted: rule.permits(),
            canary,
            canary_token: canary.then_some(CanaryToken(self.canaries)),
            state: self.state,
            reason: (!rule.permits()).then_some(RetryReason::CircuitBreakerOpen),
            rule,
            source: BREAKER_SOURCE,
        }
    }

    /// Whether a request may be sent at `now_ms`. When the sleep window has passed, this request
    /// becomes the canary and the circuit half-open: call it only for a request about to be sent.
    pub fn permit(&mut self, now_ms: u64) -> BreakerVerdict {
        self.begin();
        if !self.config.enabled {
            return self.verdict(BreakerRule::BreakerDisabled);
        }
        let now_ms = self.rebase(now_ms);
        self.settle_canary_noting(now_ms);
        let rule = match self.state {
            BreakerState::Closed => BreakerRule::BreakerClosed,
            BreakerState::Open if now_ms.saturating_sub(self.since_ms) > self.config.sleep_window_ms => {
                self.state = BreakerState::HalfOpen;
                self.since_ms = now_ms;
                self.canaries = self.canaries.saturating_add(1);
                self.changed(BreakerState::Open, BreakerChangeRule::BreakerCanary);
                BreakerRule::BreakerCanary
            }
            BreakerState::Open => BreakerRule::BreakerOpen,
            BreakerState::HalfOpen => BreakerRule::BreakerCanaryInFlight,
        };
        self.verdict(rule)
    }

    /// How long after `now_ms` a request could next be let through: 0 when one may go now
    /// (closed, disabled, or open past its sleep window); while open, the rest of the sleep
    /// window (a canary goes once more than `sleep_window_ms` has passed); while half-open, the
    /// rest of the canary's timeout (it may be answered sooner). Changes nothing.
    pub fn retry_in_ms(&self, now_ms: u64) -> u64 {
        if !self.config.enabled {
            return 0;
        }
        let mut view = self.clone();
        let now_ms = view.rebase(now_ms);
        view.settle_canary(now_ms);
        let passed = now_ms.saturating_sub(view.since_ms);
        match view.state {
            BreakerState::Closed => 0,
            BreakerState::Open => view
                .config
                .sleep_window_ms
                .saturating_add(1)
                .saturating_sub(passed),
            BreakerState::HalfOpen => view.config.canary_timeout_ms.saturating_sub(passed),
        }
    }

    /// Tells the breaker that a request it let through ended without an answer (the host
    /// cancelled it); `canary` says it was the canary. The canary out now is freed, so the circuit
    /// is open again with its sleep window over and the next request becomes the canary; any other
    /// request changes nothing. A cancelled canary says nothing of the endpoint's health, so it
    /// neither closes nor re-opens the circuit for another sleep window. A host whose canary may
    /// have timed out (and another request's canary gone out since) frees its own only, with
    /// [`CircuitBreaker::release_canary`].
    pub fn release(&mut self, now_ms: u64, canary: bool) {
        let current = canary.then_some(CanaryToken(self.canaries));
        self.release_canary(now_ms, current);
    }

    /// [`CircuitBreaker::release`] of the request `canary` names (its verdict's token; none: not a
    /// canary): only while that canary is the one out. Once it timed out (failed) it is no longer
    /// the breaker's canary, and the canary another request took since stays out.
    pub fn release_canary(&mut self, now_ms: u64, canary: Option<CanaryToken>) {
        self.begin();
        if !self.config.enabled || canary != Some(CanaryToken(self.canaries)) {
            return;
        }
        let now_ms = self.rebase(now_ms);
        self.settle_canary_noting(now_ms);
        if self.state == BreakerState::HalfOpen {
            self.state = BreakerState::Open;
            // Opened long enough ago that the sleep window is over at `now_ms` (a canary went out,
            // so it was over before).
            self.since_ms = now_ms.saturating_sub(self.config.sleep_window_ms.saturating_add(1));
            self.changed(BreakerState::HalfOpen, BreakerChangeRule::CanaryReleased);
        }
    }

    /// Tells the breaker how a request ended at `now_ms`.
    pub fn record(&mut self, now_ms: u64, outcome: BreakerOutcome) {
        self.begin();
        if !self.config.enabled {
            return;
        }
        let now_ms = self.rebase(now_ms);
        self.settle_canary_noting(now_ms);
        let failed = outcome != BreakerOutcome::Success;
        match self.state {
            BreakerState::HalfOpen if failed => {
                self.state = BreakerState::Open;
                self.since_ms = now_ms;
                self.changed(BreakerState::HalfOpen, BreakerChangeRule::CanaryFailed);
            }
            BreakerState::HalfOpen => {
                // A fresh breaker, still counting its canaries (a token stays one canary's).
                *self = CircuitBreaker {
                    canaries: self.canaries,
                    changes: self.changes,
                    ..CircuitBreaker::new(&self.config)
                };
                self.changed(BreakerState::HalfOpen, BreakerChangeRule::CanarySucceeded);
            }
            BreakerState::Closed | BreakerState::Open => {
                let window_over = self.window_start_ms == NO_WINDOW
                    || now_ms.saturating_sub(self.window_start_ms) > self.config.rolling_window_ms;
                if window_over {
                    self.window_start_ms = now_ms;
                    self.total = 0;
                    self.failures = 0;
                }
                self.total = self.total.saturating_add(1);
                if failed {
                    self.failures = self.failures.saturating_add(1);
                    if self.tripped() {
                        let was = self.state;
                        self.state = BreakerState::Open;
                        self.since_ms = now_ms;
                        if was == BreakerState::Closed {
                            self.changed(BreakerState::Closed, BreakerChangeRule::BreakerTripped);
                        }
                    }
                }
            }
        }
    }

    /// Enough outcomes in the window, and enough of them failures.
    fn tripped(&self) -> bool {
        self.total >= self.config.volume_threshold
            && self.failures.saturating_mul(100) / self.total.max(1) >= self.config.error_threshold_percentage
    }
}

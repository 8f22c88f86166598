//! A policy's decisions, precomputed: [`DecisionTable::decide`] makes exactly the decisions
//! [`decide_facts`] makes under the policy, with what the rules conclude for each reason,
//! idempotency and strategy, and the best-effort delays, looked up instead of worked out.
//!
//! The table is derived from [`decide_facts`] itself (one probe per reason, idempotency and
//! strategy), so no rule is written twice. It relies on what the orchestrator guarantees: the
//! rule that decides depends only on the reason, idempotency, strategy and whether the deadline
//! has passed; the delay depends on the attempts alone (and, under jitter, on the draw, which is
//! why a jittering policy keeps no delays and works every decision out); capping happens last.
//! A property test checks the table against [`decide_facts`] over random requests and policies.

use crate::backoff::{backoff_delay, controlled_backoff, Jitter};
use crate::decide::{
    cause_of, check_random, decide_facts, declined, finish_with, Decision, Facts, FlatDecision, NoRetryCause,
    Rule,
};
use crate::error::Error;
use crate::policy::Policy;
use crate::reason::RetryReason;
use crate::strategy::{StrategyKind, StrategyVerdict};

/// Attempts whose best-effort delay the table holds; a request with more is worked out.
const ATTEMPTS: usize = 64;

/// The strategy column for requests without an override.
const OWN: usize = 2;

/// What the rules conclude for one reason, idempotency and strategy, before the deadline check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// No retry, by this rule.
    Declined(Rule),
    /// Retry after the controlled backoff (RFC 0049, always-retry reasons).
    Controlled,
    /// Retry after the policy's best-effort backoff.
    BestEffort,
    /// Anything else: work the decision out.
    WorkOut,
}

/// An [`Outcome`]'s ladder (an index into [`DecisionTable::ladders`]) for declining: all zeros.
const NO_DELAY: u8 = 0;
/// The ladder of the policy's best-effort delays.
const BEST_EFFORT: u8 = 1;
/// The ladder of the controlled backoff.
const CONTROLLED: u8 = 2;
/// Past the ladders: the decision must be worked out.
const WORK_OUT: u8 = 3;

/// An [`Entry`] packed for [`DecisionTable::lookup_flat`]: the delays, the rule and its cause
/// (four bytes, so that one is found by a scaled index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(4))]
struct Outcome {
    ladder: u8,
    rule: Rule,
    cause: Option<NoRetryCause>,
}

impl Outcome {
    /// The outcome of `entry`; every entry is worked out when the policy keeps no delays.
    fn of(entry: Entry, delays: bool) -> Outcome {
        let (ladder, rule) = match entry {
            _ if !delays => (WORK_OUT, Rule::CustomStrategy),
            Entry::Declined(rule) => (NO_DELAY, rule),
            Entry::Controlled => (CONTROLLED, Rule::AlwaysRetryControlledBackoff),
            Entry::BestEffort => (BEST_EFFORT, Rule::BestEffortBackoff),
            Entry::WorkOut => (WORK_OUT, Rule::CustomStrategy),
        };
        let cause = (ladder == NO_DELAY).then(|| cause_of(rule));
        Outcome { ladder, rule, cause }
    }
}

/// A policy with its decisions precomputed by reason, idempotency and strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionTable {
    policy: Policy,
    /// By reason, then idempotent (0 or 1), then strategy: `StrategyKind as usize` for a
    /// request's override, [`OWN`] for none (the policy's own strategy).
    entries: [[[Entry; 3]; 2]; RetryReason::ALL.len()],
    /// `entries` as outcomes, indexed the same way.
    outcomes: [[[Outcome; 3]; 2]; RetryReason::ALL.len()],
    /// The decision once the deadline has passed; `None` when the policy keeps no delays.
    deadline: Option<FlatDecision>,
    /// Delays by attempts: none (all zero), the best-effort delays, the controlled backoff.
    ladders: [[u64; ATTEMPTS]; 3],
    /// Whether the table keeps the best-effort delays (`ladders[BEST_EFFORT]`); not when the
    /// policy jitters (the delay needs the draw).
    kept: bool,
}

impl DecisionTable {
    /// Precomputes `policy`'s decisions (a few hundred probe decisions; build once per policy).
    pub fn new(policy: &Policy) -> DecisionTable {
        let mut entries = [[[Entry::WorkOut; 3]; 2]; RetryReason::ALL.len()];
        for reason in RetryReason::ALL {
            for idempotent in [false, true] {
                let row = &mut entries[reason as usize][usize::from(idempotent)];
                for strategy in [StrategyKind::BestEffort, StrategyKind::FailFast] {
                    row[strategy as usize] = probe(policy, reason, idempotent, strategy);
                }
                row[OWN] = row[policy.strategy as usize];
            }
        }
        let delays = best_effort_delays(policy);
        let kept = delays.is_some();
        let outcomes =
            entries.map(|by_idempotency| by_idempotency.map(|row| row.map(|e| Outcome::of(e, kept))));
        let mut ladders = [[0; ATTEMPTS]; 3];
        ladders[BEST_EFFORT as usize] = delays.unwrap_or([0; ATTEMPTS]);
        for (attempts, delay) in ladders[CONTROLLED as usize].iter_mut().enumerate() {
            *delay = controlled_backoff(attempts as u32);
        }
        DecisionTable {
            policy: *policy,
            kept,
            entries,
            outcomes,
            deadline: kept.then_some(FlatDecision::declined(Rule::DeadlinePassed)),
            ladders,
        }
    }

    /// The best-effort delay by attempts; `None` when the policy jitters.
    #[inline(always)]
    fn delays(&self) -> Option<&[u64; ATTEMPTS]> {
        self.kept.then_some(&self.ladders[BEST_EFFORT as usize])
    }

    /// The policy this table decides for.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Decides as [`decide_facts`] does under [`Self::policy`].
    #[inline(always)]
    pub fn decide(&self, facts: &Facts, reason: RetryReason) -> Result<Decision, Error> {
        match self.lookup(facts, reason) {
            Some(decided) => decided,
            None => self.work_out(*facts, reason),
        }
    }

    /// [`Self::decide`]'s answer when the table holds it; `None` when it must be worked out (a
    /// policy that jitters, more attempts than the table holds): then call [`Self::decide`].
    /// Hosts with the request at hand in memory can take that path without keeping `facts`.
    #[inline(always)]
    pub fn lookup(&self, facts: &Facts, reason: RetryReason) -> Option<Result<Decision, Error>> {
        self.lookup_with(facts, reason, |d| d)
    }

    /// [`Self::lookup`], handing the decision to `f`, which runs once, inlined where each kind
    /// of decision is built (so a host that writes the decision out never merges the two kinds).
    #[inline(always)]
    pub fn lookup_with<R>(
        &self,
        facts: &Facts,
        reason: RetryReason,
        f: impl FnOnce(Decision) -> R,
    ) -> Option<Result<R, Error>> {
        let delays = self.delays()?;
        if let Err(e) = check_random(facts.random) {
            return Some(Err(e));
        }
        let verdict = if facts.elapsed_ms >= facts.timeout_ms {
            declined(Rule::DeadlinePassed)
        } else {
            let column = match facts.strategy {
                Some(strategy) => strategy as usize,
                None => OWN,
            };
            let entry = self.entries[reason as usize][usize::from(facts.idempotent)][column];
            // The common case first, as one comparison.
            if entry == Entry::BestEffort {
                StrategyVerdict {
                    delay_ms: Some(*delays.get(facts.attempts as usize)?),
                    rule: Rule::BestEffortBackoff,
                }
            } else {
                match entry {
                    Entry::Declined(rule) => declined(rule),
                    Entry::Controlled => StrategyVerdict {
                        delay_ms: Some(controlled_backoff(facts.attempts)),
                        rule: Rule::AlwaysRetryControlledBackoff,
                    },
                    Entry::BestEffort | Entry::WorkOut => return None,
                }
            }
        };
        Some(Ok(finish_with(facts, reason, verdict, f)))
    }

    /// [`Self::decide`]'s decision as a [`FlatDecision`] (complete it with
    /// [`FlatDecision::complete`]) when the table holds it; `None` when it must be worked out (a
    /// policy that jitters, more attempts than the table holds) or the request is refused (a
    /// random draw outside [0, 1)): then call [`Self::decide`]. For hosts that write decisions
    /// out field by field (the C library's `rp_decide`).
    #[inline(always)]
    pub fn lookup_flat(&self, facts: &Facts, reason: RetryReason) -> Option<FlatDecision> {
        if let Some(r) = facts.random {
            if !(0.0..1.0).contains(&r) {
                return None;
            }
        }
        let column = match facts.strategy {
            Some(strategy) => strategy as usize,
            None => OWN,
        };
        if facts.elapsed_ms >= facts.timeout_ms {
            return self.deadline;
        }
        let o = self.outcomes[reason as usize][usize::from(facts.idempotent)][column];
        // A declined outcome reads zeros (and zero, with time left, is neither capped nor
        // cancelled); WORK_OUT is past the ladders, like attempts past 63.
        let delay = *self
            .ladders
            .get(usize::from(o.ladder))?
            .get(facts.attempts as usize)?;
        Some(FlatDecision {
            cause: o.cause,
            ..FlatDecision::retry(delay, facts, o.rule)
        })
    }

    /// [`decide_facts`], out of line. The facts come by value so that callers build a copy
    /// only on this path (by reference, the inlined caller keeps one in memory on every path).
    #[cold]
    #[inline(never)]
    fn work_out(&self, facts: Facts, reason: RetryReason) -> Result<Decision, Error> {
        decide_facts(&facts, reason, &self.policy)
    }
}

/// What [`decide_facts`] concludes for a request far from its deadline, by the rule that decided.
fn probe(policy: &Policy, reason: RetryReason, idempotent: bool, strategy: StrategyKind) -> Entry {
    let facts = Facts {
        idempotent,
        attempts: 0,
        elapsed_ms: 0,
        timeout_ms: u64::MAX,
        strategy: Some(strategy),
        random: Some(0.5),
        previous_delay_ms: None,
    };
    match decide_facts(&facts, reason, policy) {
        Ok(Decision::NoRetry(n)) => Entry::Declined(n.rule),
        Ok(Decision::Retry(r)) if r.rule == Rule::AlwaysRetryControlledBackoff => Entry::Controlled,
        Ok(Decision::Retry(r)) if r.rule == Rule::BestEffortBackoff => Entry::BestEffort,
        _ => Entry::WorkOut,
    }
}

/// The best-effort delays for 0..ATTEMPTS attempts, when they do not depend on a draw.
fn best_effort_delays(policy: &Policy) -> Option<[u64; ATTEMPTS]> {
    if policy.jitter != Jitter::None {
        return None;
    }
    let mut delays = [0; ATTEMPTS];
    for (attempts, delay) in delays.iter_mut().enumerate() {
        *delay = backoff_delay(&policy.backoff, Jitter::None, attempts as u32, None, None).ok()?;
    }
    Some(delays)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::Backoff;
    use crate::decide::Request;
    use crate::operation::{KvOperation, Operation};

    #[test]
    fn the_rfc_table_matches_the_rfc_delays() {
        let table = DecisionTable::new(&Policy::RFC);
        // RFC 0049 Best Effort: 1 ms doubling to 500 ms; controlled: 1, 10, 50, 100, 500, 1000 ms.
        let get = Request::new(Operation::Kv(KvOperation::Get), 0, 60_000);
        for (attempts, want) in [
            (0, 1),
            (1, 2),
            (4, 16),
            (8, 256),
            (9, 500),
            (63, 500),
            (64, 500),
            (u32::MAX, 500),
        ] {
            let mut r = get.clone();
            r.attempts = attempts;
            let d = table.decide(&r.facts(), RetryReason::KvLocked).unwrap();
            assert_eq!(d.delay_ms(), Some(want), "attempts {attempts}");
        }
        let mut r = get.clone();
        r.attempts = 2;
        let d = table.decide(&r.facts(), RetryReason::KvNotMyVbucket).unwrap();
        assert_eq!(d.delay_ms(), Some(50));
    }

    #[test]
    fn the_flat_lookup_answers_what_the_table_holds_and_nothing_else() {
        let table = DecisionTable::new(&Policy::RFC);
        let mut r = Request::new(Operation::Kv(KvOperation::Get), 100, 2500);
        r.attempts = 3;
        let flat = |r: &Request, reason| table.lookup_flat(&r.facts(), reason);
        let retry = |delay_ms, rule| FlatDecision {
            delay_ms,
            capped: false,
            then_cancel: false,
            cause: None,
            rule,
        };
        assert_eq!(
            flat(&r, RetryReason::KvLocked),
            Some(retry(8, Rule::BestEffortBackoff))
        );
        assert_eq!(
            flat(&r, RetryReason::KvNotMyVbucket),
            Some(retry(100, Rule::AlwaysRetryControlledBackoff))
        );
        let declined = |cause, rule| FlatDecision {
            delay_ms: 0,
            capped: false,
            then_cancel: false,
            cause: Some(cause),
            rule,
        };
        assert_eq!(
            flat(&r, RetryReason::Unknown),
            Some(declined(NoRetryCause::UnknownReason, Rule::UnknownNeverRetried))
        );
        let mut late = r.clone();
        late.elapsed_ms = 2495;
        let capped = flat(&late, RetryReason::KvLocked).unwrap();
        assert_eq!(
            (capped.delay_ms, capped.capped, capped.then_cancel),
            (5, true, true)
        );
        late.elapsed_ms = 2500;
        assert_eq!(
            flat(&late, RetryReason::KvLocked),
            Some(declined(NoRetryCause::DeadlinePassed, Rule::DeadlinePassed))
        );
        // Not held: attempts past the ladders, a refused draw, a policy that jitters.
        let mut many = r.clone();
        many.attempts = 64;
        assert_eq!(flat(&many, RetryReason::KvLocked), None);
        let mut bad_draw = r.clone();
        bad_draw.random = Some(1.0);
        assert_eq!(flat(&bad_draw, RetryReason::Unknown), None);
        let mut jitter = Policy::RFC;
        jitter.jitter = Jitter::Equal;
        let mut drawn = r.clone();
        drawn.random = Some(0.5);
        let jittering = DecisionTable::new(&jitter);
        assert_eq!(jittering.lookup_flat(&drawn.facts(), RetryReason::Unknown), None);
        late.random = Some(0.5);
        assert_eq!(jittering.lookup_flat(&late.facts(), RetryReason::KvLocked), None);
    }

    #[test]
    fn a_jittering_policy_keeps_no_delays_and_still_needs_the_draw() {
        let mut policy = Policy::RFC;
        policy.jitter = Jitter::Full;
        let table = DecisionTable::new(&policy);
        assert_eq!(table.delays(), None);
        let r = Request::new(Operation::Kv(KvOperation::Get), 0, 60_000);
        let err = table.decide(&r.facts(), RetryReason::KvLocked).unwrap_err();
        assert_eq!(err.code(), "missing_field");
    }

    #[test]
    fn entries_follow_the_rfc() {
        let table = DecisionTable::new(&Policy::RFC);
        let at = |reason: RetryReason, idempotent: bool, strategy: StrategyKind| {
            table.entries[reason as usize][usize::from(idempotent)][strategy as usize]
        };
        assert_eq!(
            at(RetryReason::KvLocked, true, Be),
            table.entries[RetryReason::KvLocked as usize][1][OWN]
        );
        use StrategyKind::{BestEffort as Be, FailFast as Ff};
        assert_eq!(
            at(RetryReason::Unknown, true, Be),
            Entry::Declined(Rule::UnknownNeverRetried)
        );
        assert_eq!(at(RetryReason::KvNotMyVbucket, false, Ff), Entry::Controlled);
        assert_eq!(at(RetryReason::KvLocked, false, Be), Entry::BestEffort);
        assert_eq!(
            at(RetryReason::SocketClosedWhileInFlight, false, Be),
            Entry::Declined(Rule::BestEffortNotIdempotent)
        );
        assert_eq!(
            at(RetryReason::SocketClosedWhileInFlight, true, Be),
            Entry::BestEffort
        );
        assert_eq!(
            at(RetryReason::KvLocked, true, Ff),
            Entry::Declined(Rule::FailFast)
        );
        // A backoff that is not the RFC's still gives its own delays.
        let mut fixed = Policy::RFC;
        fixed.backoff = Backoff::Fixed { delay_ms: 70 };
        let t = DecisionTable::new(&fixed);
        assert_eq!(t.delays().map(|d| (d[0], d[63])), Some((70, 70)));
    }
}

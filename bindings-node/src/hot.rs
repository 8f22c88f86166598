//! The hot calls (decide, classification) as raw N-API callbacks. The JavaScript layer writes a
//! request's numbers into a per-environment `Float64Array` that aliases [`EnvData::scratch`],
//! calls with no or few arguments, and reads the packed outcome back from the same array: no
//! property reads, no object creation and no string crossing the boundary on the common path.

use std::ffi::c_void;

use napi::sys::{napi_env, napi_value};
use retrypolicy::{
    classify_analytics, classify_dispatch, classify_kv, classify_query, classify_search, classify_views,
    decide_after_strategy, decide_before_strategy, decide_with, BestEffort, Classification, Decision,
    DecisionTable, Error as CoreError, Facts, FailFast, KvOperation, Policy, Request, RetryReason,
    RetryStrategy, StrategyKind, StrategyVerdict,
};

use retrypolicy::units::whole_number;

use crate::convert::{self, count, int_in, millis, CODE_EXPECTED, STATUS_EXPECTED};
use crate::handle;
use crate::js::{self, JsResult};
use crate::tables;

/// Scratch slots (indices into the shared `Float64Array`); `tables()` hands them to JavaScript.
pub mod slot {
    /// Operation code (`tables().operations` index), KV operation code, or dispatch failure code.
    pub const OP: usize = 0;
    /// Retries already made.
    pub const ATTEMPTS: usize = 1;
    /// Elapsed milliseconds.
    pub const ELAPSED: usize = 2;
    /// Timeout in milliseconds.
    pub const TIMEOUT: usize = 3;
    /// Idempotency override: -1 none, 0 false, 1 true.
    pub const IDEMPOTENT: usize = 4;
    /// Per-request strategy: -1 none, else a `tables().strategies` index.
    pub const STRATEGY: usize = 5;
    /// 1 when a random draw is present.
    pub const HAS_RANDOM: usize = 6;
    /// The random draw.
    pub const RANDOM: usize = 7;
    /// 1 when a previous delay is present.
    pub const HAS_PREVIOUS: usize = 8;
    /// The previous delay in milliseconds.
    pub const PREVIOUS: usize = 9;
    /// The reason (`tables().reasons` index).
    pub const REASON: usize = 10;
    /// 1 when the host strategy answered with a delay (for `decideAfter`).
    pub const HAS_VERDICT: usize = 11;
    /// The host strategy's delay.
    pub const VERDICT: usize = 12;
    /// A status or HTTP status to classify.
    pub const STATUS: usize = 13;
    /// A query or analytics code to classify.
    pub const CODE: usize = 14;
    /// How many previous reasons follow.
    pub const PREVIOUS_COUNT: usize = 15;
    /// The first previous reason; up to [`MAX_PREVIOUS`] follow.
    pub const PREVIOUS_REASONS: usize = 16;
    /// How many previous reasons fit; longer lists take the general path.
    pub const MAX_PREVIOUS: usize = 32;
    /// Out: 0 a decision was written, 1 the host strategy must be asked (`decideBefore`);
    /// for `bestEffort`: 1 a delay, 0 no retry.
    pub const OUT_KIND: usize = 48;
    /// Out: the packed decision (see `pack`).
    pub const OUT_CODE: usize = 49;
    /// Out: the delay in milliseconds (approximate when `OUT_BIG` is 1).
    pub const OUT_DELAY: usize = 50;
    /// Out: 1 when the delay exceeds 2^53 − 1; `bigDelay()` returns it exactly.
    pub const OUT_BIG: usize = 51;
    /// Out: the interned classification index (`classificationAt`).
    pub const OUT_CLASS: usize = 52;
    /// Out: the decision's attempts (the request's, as validated).
    pub const OUT_ATTEMPTS: usize = 53;
    /// Length of the scratch array.
    pub const LEN: usize = 56;
}

/// Bit layout of a packed decision: reason | rule << 5 | cause << 8 | capped << 11 |
/// then_cancel << 12 | idempotent << 13 | retry << 14; cause 7 means none.
pub mod bits {
    /// Shift of the rule code.
    pub const RULE: u32 = 5;
    /// Shift of the cause code.
    pub const CAUSE: u32 = 8;
    /// The capped flag.
    pub const CAPPED: u32 = 1 << 11;
    /// The then_cancel flag.
    pub const THEN_CANCEL: u32 = 1 << 12;
    /// The idempotent flag.
    pub const IDEMPOTENT: u32 = 1 << 13;
    /// The retry flag (else no retry).
    pub const RETRY: u32 = 1 << 14;
    /// The cause code meaning "none".
    pub const NO_CAUSE: u32 = 7;
}

/// Whether the operation with each code is idempotent, `None` past the last code: every
/// `whole(code, 255)` indexes it without a bounds check.
pub type IdempotentOps = [Option<bool>; 256];

/// Per-environment state: the scratch array and the interned classifications.
pub struct EnvData {
    /// Shared with JavaScript as a `Float64Array`.
    pub scratch: [f64; slot::LEN],
    /// The last delay past 2^53 − 1, exactly.
    pub big_delay: u64,
    /// Every distinct classification seen so far, by index.
    pub classes: Vec<Classification>,
    /// The RFC default policy's decision table, for calls that pass no policy.
    pub rfc: DecisionTable,
    /// Whether each operation code's operation is idempotent (`tables::operation`'s order).
    pub idempotent_ops: IdempotentOps,
}

impl EnvData {
    /// A zeroed state.
    pub fn new() -> Box<EnvData> {
        Box::new(EnvData {
            scratch: [0.0; slot::LEN],
            big_delay: 0,
            classes: Vec::new(),
            rfc: DecisionTable::new(&Policy::RFC),
            idempotent_ops: std::array::from_fn(|code| {
                tables::operation(code as f64).map(|op| op.is_idempotent())
            }),
        })
    }

    /// The index of `c`, interning it on first sight (pointer comparison: the strings are static).
    pub fn intern(&mut self, c: Classification) -> usize {
        let same = |a: &Classification| {
            a.reason == c.reason
                && std::ptr::eq(a.rule, c.rule)
                && std::ptr::eq(a.section, c.section)
                && a.surface_as.map(str::as_ptr) == c.surface_as.map(str::as_ptr)
        };
        if let Some(i) = self.classes.iter().position(same) {
            return i;
        }
        self.classes.push(c);
        self.classes.len() - 1
    }
}

/// # Safety
/// `data` must be the `EnvData` this environment's callbacks were registered with, and no other
/// reference to it may be live (no JavaScript runs between this call and the reference's last use).
unsafe fn state<'a>(data: *mut c_void) -> &'a mut EnvData {
    // SAFETY: per the contract above.
    unsafe { &mut *data.cast::<EnvData>() }
}

/// The packed form of a decision.
pub fn pack(d: &Decision) -> u32 {
    match d {
        Decision::Retry(r) => {
            r.reason as u32
                | tables::rule_code(r.rule) << bits::RULE
                | bits::NO_CAUSE << bits::CAUSE
                | if r.capped { bits::CAPPED } else { 0 }
                | if r.then_cancel { bits::THEN_CANCEL } else { 0 }
                | if r.idempotent { bits::IDEMPOTENT } else { 0 }
                | bits::RETRY
        }
        Decision::NoRetry(n) => {
            n.reason as u32
                | tables::rule_code(n.rule) << bits::RULE
                | tables::cause_code(n.cause) << bits::CAUSE
                | if n.idempotent { bits::IDEMPOTENT } else { 0 }
        }
    }
}

/// Writes a decision's packed code and delay into the scratch array.
pub fn write_decision(st: &mut EnvData, d: &Decision) {
    write_out(&mut st.scratch, &mut st.big_delay, d);
}

/// [`write_decision`] on the two fields it writes (so that it can run while the policy table
/// in [`EnvData::rfc`] is borrowed).
#[inline(always)]
fn write_out(scratch: &mut [f64; slot::LEN], big_delay: &mut u64, d: &Decision) {
    scratch[slot::OUT_KIND] = 0.0;
    scratch[slot::OUT_ATTEMPTS] = f64::from(match d {
        Decision::Retry(r) => r.attempts,
        Decision::NoRetry(n) => n.attempts,
    });
    write_decided(scratch, big_delay, d);
}

/// What `decide` writes: the packed code and the delay. Its caller reads the attempts from the
/// request's own slot (a decision's attempts are the request's) and does not read OUT_KIND.
#[inline(always)]
fn write_decided(scratch: &mut [f64; slot::LEN], big_delay: &mut u64, d: &Decision) {
    scratch[slot::OUT_CODE] = f64::from(pack(d));
    write_delay_out(scratch, big_delay, d.delay_ms().unwrap_or(0));
}

/// Writes a delay (and the big-delay flag) into the scratch array.
pub fn write_delay(st: &mut EnvData, delay: u64) {
    write_delay_out(&mut st.scratch, &mut st.big_delay, delay);
}

#[inline(always)]
fn write_delay_out(scratch: &mut [f64; slot::LEN], big_delay: &mut u64, delay: u64) {
    let big = delay > retrypolicy::json::ms::MAX_SAFE;
    // Below 2^53 the signed conversion is exact and one instruction (the unsigned one is not).
    scratch[slot::OUT_DELAY] = if big { delay as f64 } else { delay as i64 as f64 };
    scratch[slot::OUT_BIG] = if big { 1.0 } else { 0.0 };
    if big {
        *big_delay = delay;
    }
}

#[inline]
fn reason_at(x: f64, field: &str) -> Result<RetryReason, CoreError> {
    if let Some(r) = whole_number(x, 255.0).and_then(|i| RetryReason::ALL.get(i as usize)) {
        return Ok(*r);
    }
    Err(unknown_reason(field, x))
}

#[cold]
#[inline(never)]
fn unknown_reason(field: &str, x: f64) -> CoreError {
    CoreError::UnknownReason {
        field: field.to_owned(),
        value: convert::format_number(x),
    }
}

/// Reads what the built-in orchestrator needs from the scratch slots (the layout in [`slot`]):
/// the request's facts and the reason. `idempotent_ops` is [`EnvData::idempotent_ops`].
///
/// The fast reader takes every plain request (valid numbers, no earlier reasons); anything else
/// goes to the checked reader, out of line, which names the failing field or reads the request
/// in full. Both run the same steps ([`read_with`]).
#[inline(always)]
pub fn read_facts(
    s: &[f64; slot::LEN],
    idempotent_ops: &IdempotentOps,
) -> Result<(Facts, RetryReason), CoreError> {
    match plain_facts(s, idempotent_ops) {
        Some(read) => Ok(read),
        None => read_facts_slow(s),
    }
}

/// `x` as a whole number in `0..=max` (`max` below 2^53), else `None`: what
/// [`whole_number`] accepts, in fewer steps: truncate, convert back, compare, then range-check
/// the integer (a negative one is past `max` as unsigned).
#[inline(always)]
fn whole(x: f64, max: f64) -> Option<u64> {
    // x86-64's truncating conversion gives i64::MIN for NaN and anything out of i64's range,
    // which then fails the comparison or the range check; `as` would add saturation steps.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline, so the instructions always exist.
    let n = unsafe { std::arch::x86_64::_mm_cvttsd_si64(std::arch::x86_64::_mm_set_sd(x)) };
    #[cfg(not(target_arch = "x86_64"))]
    let n = x as i64;
    (n as f64 == x && n as u64 <= max as u64).then_some(n as u64)
}

/// The fast read: `None` when the checked read must run.
#[inline(always)]
fn plain_facts(s: &[f64; slot::LEN], idempotent_ops: &IdempotentOps) -> Option<(Facts, RetryReason)> {
    read_with(&Fast(idempotent_ops), s).ok()
}

/// The checks one read of the scratch slots makes, and what a failed check yields.
trait Checks {
    /// What a failed check yields.
    type Error;
    /// `x` as a whole number in `0..=max`, if it is one.
    fn whole(&self, x: f64, max: f64) -> Option<u64>;
    /// Whether the operation with this code is idempotent.
    fn op_idempotent(&self, code: f64) -> Result<bool, Self::Error>;
    /// Whole milliseconds.
    fn millis(&self, field: &str, x: f64) -> Result<u64, Self::Error>;
    /// A retry count.
    fn count(&self, field: &str, x: f64) -> Result<u32, Self::Error>;
    /// The earlier reasons (checked, not kept).
    fn previous(&self, s: &[f64; slot::LEN]) -> Result<(), Self::Error>;
    /// A reason.
    fn reason(&self, x: f64) -> Result<RetryReason, Self::Error>;
}

/// Checks without building errors, with [`whole`]; leaves earlier reasons to [`Checked`].
struct Fast<'a>(&'a IdempotentOps);

impl Checks for Fast<'_> {
    type Error = ();
    #[inline(always)]
    fn whole(&self, x: f64, max: f64) -> Option<u64> {
        whole(x, max)
    }
    #[inline(always)]
    fn op_idempotent(&self, code: f64) -> Result<bool, ()> {
        whole(code, 255.0).and_then(|i| self.0[i as usize]).ok_or(())
    }
    #[inline(always)]
    fn millis(&self, _field: &str, x: f64) -> Result<u64, ()> {
        whole(x, retrypolicy::json::ms::MAX_SAFE as f64).ok_or(())
    }
    #[inline(always)]
    fn count(&self, _field: &str, x: f64) -> Result<u32, ()> {
        whole(x, f64::from(u32::MAX)).map(|n| n as u32).ok_or(())
    }
    #[inline(always)]
    fn previous(&self, s: &[f64; slot::LEN]) -> Result<(), ()> {
        if s[slot::PREVIOUS_COUNT] > 0.0 {
            Err(())
        } else {
            Ok(())
        }
    }
    #[inline(always)]
    fn reason(&self, x: f64) -> Result<RetryReason, ()> {
        whole(x, 255.0)
            .and_then(|i| RetryReason::ALL.get(i as usize).copied())
            .ok_or(())
    }
}

/// Checks that name the failing field (the core's typed errors).
struct Checked;

impl Checks for Checked {
    type Error = CoreError;
    fn whole(&self, x: f64, max: f64) -> Option<u64> {
        whole_number(x, max)
    }
    fn op_idempotent(&self, code: f64) -> Result<bool, CoreError> {
        Ok(tables::operation(code)
            .ok_or_else(bad_operation_code)?
            .is_idempotent())
    }
    fn millis(&self, field: &str, x: f64) -> Result<u64, CoreError> {
        millis(field, x)
    }
    fn count(&self, field: &str, x: f64) -> Result<u32, CoreError> {
        count(field, x)
    }
    fn previous(&self, s: &[f64; slot::LEN]) -> Result<(), CoreError> {
        for i in 0..previous_count(s) {
            previous_reason(s, i)?;
        }
        Ok(())
    }
    fn reason(&self, x: f64) -> Result<RetryReason, CoreError> {
        reason_at(x, "reason")
    }
}

/// One read of the scratch slots under `checks`, in the order errors are reported.
#[inline(always)]
fn read_with<C: Checks>(checks: &C, s: &[f64; slot::LEN]) -> Result<(Facts, RetryReason), C::Error> {
    let op_idempotent = checks.op_idempotent(s[slot::OP])?;
    let elapsed_ms = checks.millis("elapsedMs", s[slot::ELAPSED])?;
    let timeout_ms = checks.millis("timeoutMs", s[slot::TIMEOUT])?;
    let attempts = checks.count("attempts", s[slot::ATTEMPTS])?;
    let idempotent = s[slot::IDEMPOTENT];
    let idempotent = if idempotent == 0.0 {
        false
    } else if idempotent == 1.0 {
        true
    } else {
        op_idempotent
    };
    let strategy = checks
        .whole(s[slot::STRATEGY], 1.0)
        .and_then(|i| tables::STRATEGIES.get(i as usize).copied());
    let random = if s[slot::HAS_RANDOM] != 0.0 {
        Some(s[slot::RANDOM])
    } else {
        None
    };
    let previous_delay_ms = if s[slot::HAS_PREVIOUS] != 0.0 {
        Some(checks.millis("previousDelayMs", s[slot::PREVIOUS])?)
    } else {
        None
    };
    checks.previous(s)?;
    let facts = Facts {
        idempotent,
        attempts,
        elapsed_ms,
        timeout_ms,
        strategy,
        random,
        previous_delay_ms,
    };
    Ok((facts, checks.reason(s[slot::REASON])?))
}

/// [`DecisionTable::decide`] over the checked read, out of line: the uncommon path.
#[cold]
#[inline(never)]
fn decide_checked(s: &[f64; slot::LEN], table: &DecisionTable) -> Result<Decision, CoreError> {
    let (facts, reason) = read_with(&Checked, s)?;
    table.decide(&facts, reason)
}

#[cold]
#[inline(never)]
fn read_facts_slow(s: &[f64; slot::LEN]) -> Result<(Facts, RetryReason), CoreError> {
    read_with(&Checked, s)
}

fn previous_count(s: &[f64; slot::LEN]) -> usize {
    (s[slot::PREVIOUS_COUNT] as i32).clamp(0, slot::MAX_PREVIOUS as i32) as usize
}

fn previous_reason(s: &[f64; slot::LEN], i: usize) -> Result<RetryReason, CoreError> {
    let x = s[slot::PREVIOUS_REASONS + i];
    reason_at(x, "").map_err(|_| unknown_reason(&format!("previousReasons[{i}]"), x))
}

/// Reads a request and its reason from the scratch slots (the layout in [`slot`]).
pub fn read_request(s: &[f64; slot::LEN]) -> Result<(Request, RetryReason), CoreError> {
    let (f, reason) = read_with(&Checked, s)?;
    let operation = tables::operation(s[slot::OP]).ok_or_else(bad_operation_code)?;
    let mut r = Request::new(operation, f.elapsed_ms, f.timeout_ms);
    r.attempts = f.attempts;
    let idempotent = s[slot::IDEMPOTENT];
    r.idempotent = (idempotent == 0.0 || idempotent == 1.0).then_some(f.idempotent);
    r.strategy = f.strategy;
    r.random = f.random;
    r.previous_delay_ms = f.previous_delay_ms;
    r.previous_reasons = (0..previous_count(s))
        .map(|i| previous_reason(s, i))
        .collect::<Result<_, _>>()?;
    Ok((r, reason))
}

#[cold]
#[inline(never)]
fn bad_operation_code() -> CoreError {
    CoreError::InvalidType {
        field: "operation".into(),
        message: "unknown operation code".into(),
    }
}

/// The host strategy that built-in strategy objects stand for.
pub fn builtin_strategy(kind: StrategyKind, policy: &Policy) -> Box<dyn RetryStrategy> {
    match kind {
        StrategyKind::BestEffort => Box::new(policy.best_effort()),
        StrategyKind::FailFast => Box::new(FailFast),
    }
}

/// Orchestrator step 1 (deadline, UNKNOWN, always-retry, and a per-request built-in override):
/// `Some` when decided, `None` when the host strategy must be asked.
pub fn before(req: &Request, reason: RetryReason, policy: &Policy) -> Result<Option<Decision>, CoreError> {
    if let Some(d) = decide_before_strategy(req, reason, policy)? {
        return Ok(Some(d));
    }
    if req.strategy.is_some() {
        // A per-request built-in strategy wins over the host's (RFC 0049, Request Annotation).
        return retrypolicy::decide(req, reason, policy).map(Some);
    }
    Ok(None)
}

/// The best-effort strategy's answer: a delay, or none.
pub fn best_effort(req: &Request, reason: RetryReason, be: &BestEffort) -> Result<Option<u64>, CoreError> {
    req.validate()?;
    Ok(be.retry_after(req, reason)?.delay_ms)
}

/// A host verdict from the scratch slots.
fn verdict(s: &[f64; slot::LEN]) -> Result<StrategyVerdict, CoreError> {
    Ok(if s[slot::HAS_VERDICT] != 0.0 {
        StrategyVerdict::custom_retry(millis("retryAfter", s[slot::VERDICT])?)
    } else {
        StrategyVerdict::custom_no_retry()
    })
}

crate::export! {
    /// `decide(policy?)`: decides the request in the scratch slots under the policy (RFC default
    /// when undefined); writes OUT_CODE and the delay (the attempts are the request's).
    fn decide(env, info) {
        let (argv, argc, data) = js::args_counted::<1>(env, info)?;
        let table = if argc == 0 { None } else { handle::table(env, argv[0])? };
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let table = table.unwrap_or(&st.rfc);
        // Each path decides and writes on its own, so that no Facts or Decision value is merged
        // from both (the compiler then moves it through the stack or packs it into registers; a
        // merged Facts was copied in overlapping pieces that stalled the loads).
        // The request stays in the scratch slots, so a decision the table does not hold is
        // worked out from there (out of line) rather than from a copy kept on this path.
        let read = plain_facts(&st.scratch, &st.idempotent_ops);
        let (scratch, big_delay) = (&mut st.scratch, &mut st.big_delay);
        match read.and_then(|(facts, reason)| {
            table.lookup_with(&facts, reason, |d| write_decided(scratch, big_delay, &d))
        }) {
            Some(written) => written?,
            None => {
                let d = decide_checked(&st.scratch, table)?;
                write_decided(&mut st.scratch, &mut st.big_delay, &d);
            }
        }
        Ok(UNDEFINED)
    }
}

crate::export! {
    /// `decideWith(policy, kind, strategyPolicy)`: decides with a built-in strategy object as the host strategy.
    fn decide_with_builtin(env, info) {
        let ([p, k, sp], data) = js::args::<3>(env, info)?;
        let policy = handle::policy(env, p)?;
        let strategy_policy = handle::policy(env, sp)?;
        let kind = convert::int_value(env, k, "strategy", 1, "0 or 1")?;
        let host = builtin_strategy(tables::STRATEGIES[kind as usize], strategy_policy);
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let (req, reason) = read_request(&st.scratch)?;
        let d = decide_with(&req, reason, policy, Some(host.as_ref()))?;
        write_decision(st, &d);
        Ok(UNDEFINED)
    }
}

crate::export! {
    /// `decideBefore(policy?)`: the steps before a host strategy; OUT_KIND 1 means "ask the strategy".
    fn decide_before(env, info) {
        let (argv, argc, data) = js::args_counted::<1>(env, info)?;
        let policy = policy_arg(env, &argv, argc)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let (req, reason) = read_request(&st.scratch)?;
        match before(&req, reason, policy)? {
            Some(d) => write_decision(st, &d),
            None => st.scratch[slot::OUT_KIND] = 1.0,
        }
        Ok(UNDEFINED)
    }
}

crate::export! {
    /// `decideAfter()`: turns the host verdict in the scratch slots into the decision (capping applies).
    fn decide_after(env, info) {
        let (_, data) = js::args::<0>(env, info)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let (req, reason) = read_request(&st.scratch)?;
        let d = decide_after_strategy(&req, reason, verdict(&st.scratch)?);
        write_decision(st, &d);
        Ok(UNDEFINED)
    }
}

crate::export! {
    /// `bestEffort(policy?)`: the best-effort strategy's delay for the request (OUT_KIND 1) or none (0).
    fn best_effort_delay(env, info) {
        let (argv, argc, data) = js::args_counted::<1>(env, info)?;
        let be = policy_arg(env, &argv, argc)?.best_effort();
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let (req, reason) = read_request(&st.scratch)?;
        let delay = best_effort(&req, reason, &be)?;
        st.scratch[slot::OUT_KIND] = if delay.is_some() { 1.0 } else { 0.0 };
        write_delay(st, delay.unwrap_or(0));
        Ok(UNDEFINED)
    }
}

crate::export! {
    /// `noop(policy?)`: the benchmark baseline, with `decide`'s exact signature and none of its work.
    fn noop(env, info) {
        let (_argv, _argc, _data) = js::args_counted::<1>(env, info)?;
        Ok(UNDEFINED)
    }
}

fn finish_class(_env: napi_env, st: &mut EnvData, c: Classification) -> JsResult {
    st.scratch[slot::OUT_CLASS] = st.intern(c) as f64;
    Ok(UNDEFINED)
}

crate::export! {
    /// `classifyKv(errorMap?, policy?)`: KV operation code in OP, status in STATUS.
    fn classify_kv_raw(env, info) {
        let (argv, argc, data) = js::args_counted::<2>(env, info)?;
        let map = if argc > 0 { handle::error_map(env, argv[0])? } else { None };
        let compat = if argc > 1 { handle::policy(env, argv[1])?.compat } else { handle::DEFAULT_POLICY.compat };
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let op = kv_operation(st.scratch[slot::OP])?;
        let status = int_in("status", st.scratch[slot::STATUS], u64::from(u16::MAX), STATUS_EXPECTED)? as u16;
        let c = classify_kv(op, status, map, &compat);
        finish_class(env, st, c)
    }
}

fn kv_operation(x: f64) -> Result<KvOperation, CoreError> {
    match tables::operation(x) {
        Some(retrypolicy::Operation::Kv(op)) => Ok(op),
        _ => Err(CoreError::InvalidType {
            field: "operation".into(),
            message: "unknown KV operation code".into(),
        }),
    }
}

crate::export! {
    /// `classifyQuery(message, policy?)`: code in CODE.
    fn classify_query_raw(env, info) {
        let (argv, argc, data) = js::args_counted::<2>(env, info)?;
        let message = if argc > 0 { convert::text_value(env, argv[0], "message")? } else { String::new() };
        let compat = if argc > 1 { handle::policy(env, argv[1])?.compat } else { handle::DEFAULT_POLICY.compat };
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let code = int_in("code", st.scratch[slot::CODE], u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        let c = classify_query(code, &message, &compat);
        finish_class(env, st, c)
    }
}

crate::export! {
    /// `classifyAnalytics()`: code in CODE.
    fn classify_analytics_raw(env, info) {
        let (_, data) = js::args::<0>(env, info)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let code = int_in("code", st.scratch[slot::CODE], u64::from(u32::MAX), CODE_EXPECTED)? as u32;
        finish_class(env, st, classify_analytics(code))
    }
}

crate::export! {
    /// `classifySearch()`: HTTP status in STATUS.
    fn classify_search_raw(env, info) {
        let (_, data) = js::args::<0>(env, info)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let s = int_in("httpStatus", st.scratch[slot::STATUS], u64::from(u16::MAX), "0..=65535")? as u16;
        finish_class(env, st, classify_search(s))
    }
}

crate::export! {
    /// `classifyViews(body)`: HTTP status in STATUS.
    fn classify_views_raw(env, info) {
        let ([b], data) = js::args::<1>(env, info)?;
        let body = convert::text_value(env, b, "body")?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let s = int_in("httpStatus", st.scratch[slot::STATUS], u64::from(u16::MAX), "0..=65535")? as u16;
        let c = classify_views(s, &body);
        finish_class(env, st, c)
    }
}

crate::export! {
    /// `classifyDispatch()`: dispatch failure code in OP.
    fn classify_dispatch_raw(env, info) {
        let (_, data) = js::args::<0>(env, info)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let failure = tables::dispatch_failures()
            .get(st.scratch[slot::OP] as usize)
            .copied()
            .ok_or_else(|| CoreError::InvalidType { field: "failure".into(), message: "unknown failure code".into() })?;
        finish_class(env, st, classify_dispatch(failure))
    }
}

/// What a callback returns for `undefined`: N-API turns a NULL result into `undefined`.
const UNDEFINED: napi_value = std::ptr::null_mut();

/// The policy argument: the RFC default when the caller passed none (no N-API call needed).
fn policy_arg<'a>(env: napi_env, argv: &[napi_value; 1], argc: usize) -> JsResult<&'a Policy> {
    if argc == 0 {
        Ok(&handle::DEFAULT_POLICY)
    } else {
        handle::policy(env, argv[0])
    }
}

/// Stride of one request in a batch input array: the slots OP..=REASON.
pub const BATCH_IN: usize = slot::REASON + 1;
/// Stride of one decision in a batch output array: packed code, delay.
pub const BATCH_OUT: usize = 2;

/// A `Float64Array`'s elements.
fn f64_array<'a>(env: napi_env, v: napi_value, field: &str) -> JsResult<&'a mut [f64]> {
    let mut t = 0;
    let mut len = 0usize;
    let mut data = std::ptr::null_mut();
    let mut buf = std::ptr::null_mut();
    let mut off = 0usize;
    let mut is = false;
    // SAFETY: `v` is a live handle.
    js::check(
        env,
        unsafe { napi::sys::napi_is_typedarray(env, v, &mut is) },
        "napi_is_typedarray",
    )?;
    if is {
        // SAFETY: `v` is a typed array.
        let s = unsafe {
            napi::sys::napi_get_typedarray_info(env, v, &mut t, &mut len, &mut data, &mut buf, &mut off)
        };
        js::check(env, s, "napi_get_typedarray_info")?;
    }
    if !is || t != napi::sys::TypedarrayType::float64_array {
        return Err(convert::wrong_type(env, v, field, "a Float64Array")?.into());
    }
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: N-API reports `len` f64 elements at `data`; the array stays alive for this call.
    Ok(unsafe { std::slice::from_raw_parts_mut(data.cast::<f64>(), len) })
}

crate::export! {
    /// `decideMany(policy?, input, count, output)`: `count` requests of BATCH_IN slots each →
    /// BATCH_OUT slots each; a failing request throws with its index in the field.
    fn decide_many(env, info) {
        let ([p, i, n, o], data) = js::args::<4>(env, info)?;
        let table = handle::table(env, p)?;
        // SAFETY: no JavaScript runs while `st` is in use.
        let st = unsafe { state(data) };
        let table = table.unwrap_or(&st.rfc);
        let n = convert::int_value(env, n, "count", u64::from(u32::MAX), CODE_EXPECTED)? as usize;
        let input = f64_array(env, i, "input")?;
        let output = f64_array(env, o, "output")?;
        if input.len() < n * BATCH_IN || output.len() < n * BATCH_OUT {
            return Err(CoreError::OutOfRange {
                field: "count".into(),
                value: n.to_string(),
                expected: "at most the requests the arrays hold".into(),
            }
            .into());
        }
        let mut s = [0.0; slot::LEN];
        for k in 0..n {
            s[..BATCH_IN].copy_from_slice(&input[k * BATCH_IN..(k + 1) * BATCH_IN]);
            let result = read_facts(&s, &st.idempotent_ops).and_then(|(facts, reason)| table.decide(&facts, reason));
            let d = result.map_err(|e| index_error(e, k))?;
            output[k * BATCH_OUT] = f64::from(pack(&d));
            output[k * BATCH_OUT + 1] = d.delay_ms().unwrap_or(0) as f64;
        }
        Ok(UNDEFINED)
    }
}

/// The same error with `requests[k].` before its field.
fn index_error(e: CoreError, k: usize) -> CoreError {
    let pre = |f: String| format!("requests[{k}].{f}");
    match e {
        CoreError::UnknownReason { field, value } => CoreError::UnknownReason {
            field: pre(field),
            value,
        },
        CoreError::InvalidDuration { field, value } => CoreError::InvalidDuration {
            field: pre(field),
            value,
        },
        CoreError::InvalidRandom { field, value } => CoreError::InvalidRandom {
            field: pre(field),
            value,
        },
        CoreError::OutOfRange {
            field,
            value,
            expected,
        } => CoreError::OutOfRange {
            field: pre(field),
            value,
            expected,
        },
        CoreError::MissingField { field } => CoreError::MissingField { field: pre(field) },
        CoreError::InvalidType { field, message } => CoreError::InvalidType {
            field: pre(field),
            message,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers at every edge the checks care about, and some ordinary ones.
    const NUMBERS: [f64; 22] = [
        0.0,
        -0.0,
        1.0,
        1.5,
        -1.0,
        0.999_999_9,
        2.0,
        19.0,
        20.0,
        255.0,
        256.0,
        4_294_967_295.0,
        4_294_967_296.0,
        4_503_599_627_370_495.5,
        4_503_599_627_370_496.0,
        9_007_199_254_740_991.0,
        9_007_199_254_740_992.0,
        9.223_372_036_854_776e18,
        -9.223_372_036_854_776e18,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];

    #[test]
    fn whole_accepts_what_whole_number_accepts() {
        for max in [
            1.0,
            255.0,
            f64::from(u32::MAX),
            retrypolicy::json::ms::MAX_SAFE as f64,
        ] {
            for x in NUMBERS {
                assert_eq!(whole(x, max), whole_number(x, max), "x {x}, max {max}");
            }
        }
    }

    /// The fast read and the checked read agree on every request the fast one accepts, and the
    /// fast one accepts every plain valid request (no earlier reasons).
    #[test]
    fn the_fast_read_agrees_with_the_checked_read() {
        let env = EnvData::new();
        let mut s = [0.0; slot::LEN];
        let mut fast = 0;
        // Vary one slot at a time over every edge number, from a valid request.
        let base = |s: &mut [f64; slot::LEN]| {
            *s = [0.0; slot::LEN];
            s[slot::OP] = 3.0;
            s[slot::ATTEMPTS] = 2.0;
            s[slot::ELAPSED] = 100.0;
            s[slot::TIMEOUT] = 2500.0;
            s[slot::IDEMPOTENT] = -1.0;
            s[slot::STRATEGY] = -1.0;
            s[slot::REASON] = 7.0;
        };
        let slots = [
            slot::OP,
            slot::ATTEMPTS,
            slot::ELAPSED,
            slot::TIMEOUT,
            slot::IDEMPOTENT,
            slot::STRATEGY,
            slot::HAS_RANDOM,
            slot::RANDOM,
            slot::HAS_PREVIOUS,
            slot::PREVIOUS,
            slot::REASON,
            slot::PREVIOUS_COUNT,
        ];
        for (k, bad_previous) in slots.iter().flat_map(|&k| [(k, false), (k, true)]) {
            for x in NUMBERS.iter().copied().chain([3.0, 40.0, 0.25]) {
                base(&mut s);
                s[k] = x;
                // An unknown earlier reason, which only the checked read looks at.
                s[slot::PREVIOUS_REASONS] = if bad_previous { 99.0 } else { 0.0 };
                s[slot::HAS_RANDOM] = if k == slot::RANDOM {
                    1.0
                } else {
                    s[slot::HAS_RANDOM]
                };
                s[slot::HAS_PREVIOUS] = if k == slot::PREVIOUS {
                    1.0
                } else {
                    s[slot::HAS_PREVIOUS]
                };
                let checked = read_with(&Checked, &s);
                match plain_facts(&s, &env.idempotent_ops) {
                    Some(read) => {
                        fast += 1;
                        // Compared as text: a NaN draw is read as NaN by both (the decision refuses it).
                        let checked = checked.map_err(|e| e.to_string());
                        assert_eq!(
                            format!("{:?}", Ok::<_, String>(read)),
                            format!("{checked:?}"),
                            "slot {k} = {x}"
                        );
                    }
                    None => {
                        let plain_valid = checked.is_ok() && s[slot::PREVIOUS_COUNT] <= 0.0;
                        assert!(!plain_valid, "slot {k} = {x}: valid, but not read fast");
                    }
                }
            }
        }
        assert!(fast > 100, "only {fast} requests took the fast read");
    }

    #[test]
    fn idempotent_ops_cover_every_operation_code() {
        let env = EnvData::new();
        for (code, op) in tables::OPERATIONS.iter().enumerate() {
            assert_eq!(env.idempotent_ops[code], Some(op.is_idempotent()), "code {code}");
        }
        assert!(env.idempotent_ops[tables::OPERATIONS.len()..]
            .iter()
            .all(Option::is_none));
    }
}

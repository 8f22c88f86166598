'use strict'
// `retry(fn, options)`: the retry loop every adopter would otherwise write, a thin loop over the
// core's run machine (`Run`, driven by ./drive.js): it calls `fn` with its attempt's bound and
// signal (./timers.js), turns what it threw into an outcome (./outcome.js) and returns or throws
// what the run ended with. Whether to send, wait or stop, and how long, is the machine's.

const { invalidType, RetryTimeoutError, withCause, withDecision } = require('./errors.js')
const { SUCCESS, TIMEOUT, reasonOutcome } = require('./outcome.js')
const { attemptBound, settle } = require('./timers.js')
const { drive, runnerOptions, checkRunNumbers } = require('./drive.js')

/** Whether `value` is a string, number, bigint, boolean, undefined or null (compared by value). */
const primitive = (value) => value === null || (typeof value !== 'object' && typeof value !== 'function' && typeof value !== 'symbol')

/** How many prepared configurations `retry` keeps per policy (the call sites of one program). */
const PREPARED = 8

/** The key of the configurations prepared without a policy. */
const NO_POLICY = Object.freeze({})

/**
 * `retry` over `prepare(config)` (./drive.js's `runStarts`: a configuration converted and checked
 * once), turning errors into outcomes with `errorOutcome` unless `classify` is given; `isPolicy`
 * tells a Policy (immutable) from a policy document.
 */
function makeRetry(prepare, errorOutcome, isPolicy) {
  // The configurations prepared last (at most PREPARED per policy, newest first), each reused
  // for a call whose options it was made of are the same: the operation's own fields compared by
  // value (an operation written in the call is a new object each time), the other options by
  // value, a Policy (immutable) by identity. A run prepared for itself cost 59 µs against 23 µs
  // reusing a configuration (bench/runners.mjs, `inline` against `retry` in one run, when only
  // the operation object was the key): the Policy's document, the configuration's JSON text and
  // its parsing. A policy document (mutable) or an operation holding objects or symbols is
  // prepared for each run.
  const prepared = new WeakMap() // a Policy, or NO_POLICY → [{fields, idempotent, ..., config}]
  /** The prepared configuration of a run of these options. */
  function configOf(operation, idempotent, policy, timeoutMs, maxAttempts, attemptTimeoutMs) {
    const byPolicy = policy === undefined ? NO_POLICY : isPolicy(policy) ? policy : undefined
    const kept = byPolicy === undefined ? undefined : prepared.get(byPolicy)
    const keys = Object.keys(operation)
    if (kept !== undefined) {
      for (const p of kept) {
        if (p.idempotent === idempotent && p.timeoutMs === timeoutMs && p.maxAttempts === maxAttempts &&
            p.attemptTimeoutMs === attemptTimeoutMs && p.fields.length === keys.length &&
            keys.every((k, i) => k === p.fields[i][0] && operation[k] === p.fields[i][1])) {
          return p.config
        }
      }
    }
    const config = prepare({ rules: { decide: { operation, idempotent, policy } }, timeoutMs, maxAttempts, attemptTimeoutMs })
    const fields = keys.map((k) => [k, operation[k]])
    if (byPolicy !== undefined && fields.every(([, v]) => primitive(v))) {
      const entries = kept ?? []
      entries.unshift({ config, fields, idempotent, timeoutMs, maxAttempts, attemptTimeoutMs })
      if (entries.length > PREPARED) entries.pop()
      prepared.set(byPolicy, entries)
    }
    return config
  }

  /** Runs `fn({attempt, remainingMs, signal})` until it succeeds or the run machine says stop. */
  async function retry(fn, options) {
    if (typeof fn !== 'function') throw invalidType('fn', 'a function', fn)
    const o = runnerOptions(options)
    checkRunNumbers(options)
    const { operation, timeoutMs, maxAttempts, attemptTimeoutMs, policy, strategy, idempotent, budget, breaker, classify } = options
    if (operation === null || typeof operation !== 'object') throw invalidType('operation', 'an operation object', operation)
    const config = configOf(operation, idempotent, policy, timeoutMs, maxAttempts, attemptTimeoutMs)
    const guards = { budget, breaker, strategy }
    const outcomeOf = classify === undefined ? errorOutcome : (e) => reasonOutcome(classify(e))
    const attempt = async (step) => {
      // the attempt's signal fires at its bound (the deadline or the attempt timeout) or at the
      // caller's abort, and the attempt is awaited no longer than that, whatever `fn` does
      const bound = attemptBound(step.timeoutMs === null ? undefined : Number(step.timeoutMs), step.attempt, o.signal)
      try {
        let call
        try {
          call = Promise.resolve(fn({ attempt: step.attempt, remainingMs: step.timeoutMs, get signal() { return bound.signal } }))
        } catch (e) {
          call = Promise.reject(e)
        }
        const [how, value] = await settle(call, bound, o.signal)
        if (how === 'ok') return [SUCCESS, value]
        o.signal?.throwIfAborted()
        if (bound.fired) return [TIMEOUT, how === 'cut' ? bound.reason : value]
        try {
          return [outcomeOf(value), value]
        } catch (e) {
          throw withCause(e, value) // the classifier failed: the attempt's failure is its cause
        }
      } finally {
        bound.clear()
      }
    }
    const { step, result, stats } = await drive('retry', (nowMs, random) => config.start(guards, nowMs, random), o, attempt)
    if (step === null || step.end === 'succeeded') return result
    if (step.end === 'final') throw result
    if (step.end === 'timed_out') {
      throw new RetryTimeoutError(`retrypolicy: gave up at the deadline after ${step.attempt} attempts`, step, result, stats)
    }
    throw withDecision(result, step, stats)
  }
  return retry
}

module.exports = { makeRetry }

'use strict'
// `retry(fn, options)`: the retry loop every adopter would otherwise write, a thin loop over the
// core's run machine (`Run`, driven by ./drive.js): it calls `fn` with its attempt's bound and
// signal (./timers.js), turns what it threw into an outcome (./outcome.js) and returns or throws
// what the run ended with. Whether to send, wait or stop, and how long, is the machine's.

const { invalidType, RetryTimeoutError, withCause, withDecision } = require('./errors.js')
const { SUCCESS, TIMEOUT, reasonOutcome } = require('./outcome.js')
const { attemptBound, settle } = require('./timers.js')
const { drive, runnerOptions, checkRunNumbers } = require('./drive.js')

/** Whether `value` is a string, number, bigint, boolean, undefined or null (a value a copy keeps). */
const primitive = (value) => value === null || (typeof value !== 'object' && typeof value !== 'function')

/**
 * `retry` over `prepare(config)` (./drive.js's `runStarts`: a configuration converted and checked
 * once), turning errors into outcomes with `errorOutcome` unless `classify` is given; `isPolicy`
 * tells a Policy (immutable) from a policy document.
 */
function makeRetry(prepare, errorOutcome, isPolicy) {
  // The last configuration prepared for each operation object, reused while every option it was
  // made of is the same (an operation's fields compared one by one, a Policy by identity): the
  // configuration's JSON text and its parsing cost about 18 µs a run (bench/runners.mjs). A policy
  // document (mutable) or an operation holding objects is prepared again for each run.
  const prepared = new WeakMap()
  /** The prepared configuration of `options`' run. */
  function configOf(operation, idempotent, policy, timeoutMs, maxAttempts, attemptTimeoutMs) {
    const hit = prepared.get(operation)
    if (hit !== undefined && hit.idempotent === idempotent && hit.policy === policy && hit.timeoutMs === timeoutMs &&
        hit.maxAttempts === maxAttempts && hit.attemptTimeoutMs === attemptTimeoutMs) {
      const keys = Object.keys(operation)
      if (keys.length === hit.fields.length && keys.every((k, i) => k === hit.fields[i][0] && operation[k] === hit.fields[i][1])) {
        return hit.config
      }
    }
    const config = prepare({ rules: { decide: { operation, idempotent, policy } }, timeoutMs, maxAttempts, attemptTimeoutMs })
    const fields = Object.entries(operation)
    if ((policy === undefined || isPolicy(policy)) && fields.every(([, v]) => primitive(v))) {
      prepared.set(operation, { config, fields, idempotent, policy, timeoutMs, maxAttempts, attemptTimeoutMs })
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
    const { step, result } = await drive('retry', (nowMs, random) => config.start(guards, nowMs, random), o, attempt)
    if (step === null || step.end === 'succeeded') return result
    if (step.end === 'final') throw result
    if (step.end === 'timed_out') {
      throw new RetryTimeoutError(`retrypolicy: gave up at the deadline after ${step.attempt} attempts`, step, result)
    }
    throw withDecision(result, step)
  }
  return retry
}

module.exports = { makeRetry }

'use strict'
// The host loop every runner shares: the options it takes (clock, draw, sleep, signal, hooks),
// the diagnostics channel it publishes on, and `drive`, which does what each step of a run says.

const { invalidType, CircuitOpenError, withCause } = require('./errors.js')
const { defaultSleep, pause } = require('./timers.js')

const { performance } = globalThis // Node's perf_hooks one, or the browser's

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the hooks still report.
const channel = (() => {
  try {
    return require('node:diagnostics_channel').channel(DECISION_CHANNEL)
  } catch {
    return undefined
  }
})()

/** Publishes `message` (`{runner, step?, decision, error, attempt}`) when someone listens. */
function publishMessage(message) {
  if (channel?.hasSubscribers) channel.publish(message)
}

/** The options every runner shares, checked, with their defaults. */
function runnerOptions(o) {
  if (o === null || typeof o !== 'object') throw invalidType('options', 'an options object', o)
  for (const k of ['classify', 'onRetry', 'onGiveUp', 'clock', 'random', 'sleep', 'now']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw invalidType(k, 'a function', o[k])
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalidType('signal', 'an AbortSignal', o.signal)
  return {
    clock: o.clock ?? (() => performance.now()),
    random: o.random ?? Math.random,
    now: o.now ?? Date.now,
    sleep: o.sleep ?? defaultSleep,
    signal: o.signal,
    onRetry: o.onRetry,
    onGiveUp: o.onGiveUp,
  }
}

/**
 * Throws `invalid_type` for a run option (`timeoutMs`, `maxAttempts`, `attemptTimeoutMs`) that is
 * neither a number nor a BigInt: the wire form would read a decimal string as a number.
 */
function checkRunNumbers(o) {
  for (const k of ['timeoutMs', 'maxAttempts', 'attemptTimeoutMs']) {
    const v = o[k]
    if (v !== undefined && v !== null && typeof v !== 'number' && typeof v !== 'bigint') throw invalidType(k, 'a number', v)
  }
}

/**
 * Drives `run` to its end, doing what each step says: `send(step)` makes the attempt and resolves
 * with `[outcome, result]` (the result: a value, an error or a response); a wait sleeps; `done`
 * returns `{step, result}` (the last attempt's result, or a CircuitOpenError when the breaker kept
 * the next one back); `discard(result, step)` before a wait. An abort cancels the run and rejects
 * with the signal's reason. An error raised while handling a failed attempt (the machine refusing
 * the clock, a hook) carries that failure as its `cause`.
 */
async function drive(runner, run, o, send, discard) {
  let step = run.start(o.clock(), o.random())
  let result
  let failure // the last failed attempt's result, while it is being handled
  const cancelled = (e) => {
    try {
      run.cancel(o.clock())
    } catch {
      // the run already ended, or the clock is what failed: the error at hand is the one to surface
    }
    return withCause(e, failure)
  }
  for (;;) {
    if (step.action === 'send') {
      if (o.signal?.aborted) throw cancelled(o.signal.reason)
      failure = undefined
      let outcome
      try {
        ;[outcome, result] = await send(step)
      } catch (e) {
        throw cancelled(e) // an abort, or an error the runner cannot report (a fetch misuse)
      }
      if (outcome.kind !== 'success') failure = result
      try {
        step = run.attemptEnded(outcome, o.clock(), o.random(), outcome.kind === 'http' ? o.now() : undefined)
      } catch (e) {
        throw cancelled(e)
      }
      continue
    }
    if (step.breaker?.permitted === false) result = new CircuitOpenError(step.breaker) // the attempt it kept back
    if (step.end === 'succeeded' || step.end === 'final') return { step, result }
    try {
      if (channel?.hasSubscribers) channel.publish({ runner, step, decision: step.decision, error: result, attempt: step.attempt })
      if (step.action === 'done') {
        o.onGiveUp?.(step, result)
        return { step, result }
      }
      o.onRetry?.(step, result)
      await discard?.(result, step)
      await pause(o.sleep, step.delayMs, o.signal)
      step = run.waitEnded(o.clock(), o.random())
    } catch (e) {
      throw cancelled(e)
    }
  }
}

module.exports = { DECISION_CHANNEL, publishMessage, runnerOptions, checkRunNumbers, drive }

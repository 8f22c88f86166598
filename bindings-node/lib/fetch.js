'use strict'
// `retryFetch(input, init, options)`: `fetch` as a thin loop over the core's run machine with the
// HTTP rules (`{http: {method, idempotent, backoff, jitter}}`). Host work only: it sends what
// ./body.js made replayable with each step's time bound, tells the machine what it saw (a
// response's status and Retry-After, a network failure and whether it may have been sent, a
// timeout), cancels discarded bodies, and returns the final response.

const { RetryTimeoutError, withDecision } = require('./errors.js')
const { TIMEOUT, mayHaveBeenSent, responseOutcome } = require('./outcome.js')
const { attemptBound, anySignal } = require('./timers.js')
const { drive, runnerOptions, checkRunNumbers } = require('./drive.js')
const { maxBodyBytesOf, replayable, BodyNotReplayableError } = require('./body.js')

/** `retryFetch` over `prepare(config)` (./drive.js's `runStarts`). */
function makeRetryFetch(prepare) {
  /** `fetch(input, init)` until a final response, the attempts run out or the deadline comes. */
  async function retryFetch(input, init, options) {
    const o = runnerOptions(options ?? {})
    checkRunNumbers(options ?? {})
    const { timeoutMs, maxAttempts, attemptTimeoutMs, backoff, jitter, idempotent, budget, breaker } = options ?? {}
    const maxBodyBytes = maxBodyBytesOf(options)
    const fetchFn = options?.fetch ?? globalThis.fetch
    const method = init?.method ?? input?.method ?? 'GET' // fetch's default
    const config = prepare({ rules: { http: { method, idempotent, backoff, jitter } }, timeoutMs, maxAttempts, attemptTimeoutMs })
    const guards = { budget, breaker }
    const sent = await replayable(input, init, maxBodyBytes)
    const caller = anySignal([o.signal, init?.signal])
    let response
    let discarded // the response whose body was cancelled before a wait
    const attempt = async (step) => {
      response = undefined
      // unref'd, and not cleared: it bounds the response's body too
      const bound = attemptBound(step.timeoutMs === null ? undefined : Number(step.timeoutMs), step.attempt, caller, true)
      try {
        response = await fetchFn(sent.input(), { ...sent.init, signal: bound.signal })
        return [responseOutcome(response), response]
      } catch (e) {
        o.signal?.throwIfAborted()
        if (bound.fired) return [TIMEOUT, e]
        const sentAway = mayHaveBeenSent(e)
        if (sentAway === null) throw e // not a network failure: a misuse of fetch, surfaced as it is
        return [{ kind: 'network', sent: sentAway }, e]
      }
    }
    const cancelBody = (r) => (r !== undefined && r === response ? response.body?.cancel().catch(() => {}) : undefined)
    /**
     * Before a wait: the discarded response's body is cancelled; a body sent once refuses the retry
     * (the step's signal `retry`: a wait for the breaker sends nothing again, the body is still unsent).
     */
    const discard = async (r, step) => {
      if (r !== undefined && r === response) discarded = r
      await cancelBody(r)
      if (sent.once && step.signal === 'retry') throw new BodyNotReplayableError(step, r, maxBodyBytes)
    }
    let step, result, stats
    try {
      ;({ step, result, stats } = await drive('fetch', (nowMs, random) => config.start(guards, nowMs, random), o, attempt, discard))
    } catch (e) {
      await cancelBody(response) // no response is left unread behind an error
      throw e
    }
    // Final, succeeded, or the last transient one; not one whose body was cancelled before the wait
    // after which the run ended at its deadline (that one is the timeout's cause).
    if (result === response && response !== undefined && response !== discarded) return response
    if (step.end === 'timed_out') throw new RetryTimeoutError(`retryFetch: gave up at the deadline after ${step.attempt} attempts`, step, result, stats)
    throw withDecision(result, step, stats)
  }
  return retryFetch
}

module.exports = { makeRetryFetch, BodyNotReplayableError }

'use strict'
// `retryFetch(input, init, options)`: `fetch` as a thin loop over the core's run machine with the
// HTTP rules (`{http: {method, idempotent, backoff, jitter}}`: status classes, Retry-After seconds
// and dates, attempts and deadline, RFC 9110's rule for non-idempotent requests, the budget and the
// breaker). Host work only: it calls fetch with each step's time bound, tells the machine what it
// saw (a response's status and Retry-After, a network failure and whether it may have been sent,
// a timeout), sleeps, cancels discarded bodies, and returns the final response.

const { RetryTimeoutError, drive, runnerOptions, mayHaveBeenSent, withDecision } = require('./retry.js')

// setTimeout's (and so AbortSignal.timeout's) longest delay; a longer bound is left to the run.
const MAX_TIMER_MS = 2 ** 31 - 1

/** `retryFetch` over the binding's `Run`. */
function makeRetryFetch(Run) {
  /** `fetch(input, init)` until a final response, the attempts run out or the deadline comes. */
  async function retryFetch(input, init, options) {
    const o = runnerOptions(options ?? {})
    const { timeoutMs, maxAttempts, attemptTimeoutMs, backoff, jitter, idempotent, budget, breaker } = options ?? {}
    const fetchFn = options?.fetch ?? globalThis.fetch
    const method = init?.method ?? input?.method ?? 'GET' // fetch's default
    const config = { rules: { http: { method, idempotent, backoff, jitter } }, timeoutMs, maxAttempts, attemptTimeoutMs }
    const run = new Run(config, { budget, breaker })
    let response
    const attempt = async (step) => {
      response = undefined
      const timer = step.timeoutMs !== null && step.timeoutMs <= MAX_TIMER_MS ? AbortSignal.timeout(Number(step.timeoutMs)) : undefined
      const signals = [o.signal, timer, init?.signal].filter(Boolean)
      try {
        response = await fetchFn(input, { ...init, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] })
        return [{ kind: 'http', status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined }, response]
      } catch (e) {
        o.signal?.throwIfAborted()
        if (timer?.aborted) return [{ kind: 'timeout' }, e]
        const sent = mayHaveBeenSent(e)
        if (sent === null) throw e // not a network failure: a misuse of fetch, surfaced as it is
        return [{ kind: 'network', sent }, e]
      }
    }
    const discard = (r) => (r === response ? response?.body?.cancel().catch(() => {}) : undefined)
    const { step, result } = await drive('fetch', run, o, attempt, discard)
    if (result === response && response !== undefined) return response // final, succeeded, or the last transient one
    if (step.end === 'timed_out') {
      throw new RetryTimeoutError(`retryFetch: gave up at the deadline after ${step.attempt} attempts`, step, result)
    }
    throw withDecision(result, step)
  }
  return retryFetch
}

module.exports = { makeRetryFetch }

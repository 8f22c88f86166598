'use strict'
// `retryFetch(input, init, options)`: `fetch` retried by the core's HTTP loop (`http.nextStep`:
// status classes, Retry-After seconds and dates, attempts and deadline, backoff, and RFC 9110's
// rule that a non-idempotent request is not repeated once it may have reached the server, from the
// method and the caller's `idempotent`). Orchestration only: it tells the core what it saw.

const { RetryTimeoutError, CircuitOpenError, guards, publish, pause, runnerOptions, mayHaveBeenSent, withDecision } = require('./retry.js')

/** `retryFetch` over the core's `http.nextStep`. */
function makeRetryFetch(http) {
  /** `fetch(input, init)` until a final response, the attempts run out or the deadline comes. */
  async function retryFetch(input, init, options) {
    const o = runnerOptions(options ?? {})
    const { timeoutMs, maxAttempts, attemptTimeoutMs, backoff, jitter, idempotent } = options ?? {}
    const fetchFn = options?.fetch ?? globalThis.fetch
    const now = options?.now ?? Date.now
    const method = init?.method ?? input?.method ?? 'GET' // fetch's default
    const loop = { maxAttempts, deadlineMs: timeoutMs, backoff, jitter, method, idempotent }
    const guard = guards(options ?? {}, o.clock)
    const start = o.clock()
    let previousDelay
    for (let attempt = 1; ; attempt++) {
      o.signal?.throwIfAborted()
      // the attempt ends by the deadline, or after attemptTimeoutMs
      const left = Math.min((timeoutMs ?? Infinity) - (o.clock() - start), attemptTimeoutMs ?? Infinity)
      const timer = Number.isFinite(left) ? AbortSignal.timeout(Math.max(0, Math.floor(left))) : undefined
      const signals = [o.signal, timer, init?.signal].filter(Boolean)
      // A request the breaker refuses surely did not leave: a network error with `sent: false`.
      let error = guard.refusal()
      let response, step = error && { kind: 'network_error', sent: false }
      if (error === undefined) {
        try {
          response = await fetchFn(input, { ...init, signal: signals.length ? AbortSignal.any(signals) : undefined })
          step = { kind: 'response', status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined }
        } catch (e) {
          o.signal?.throwIfAborted()
          const sent = timer?.aborted || mayHaveBeenSent(e) // a cut attempt may have been sent
          if (sent === null) throw e
          // `sent: false` only when the request surely did not leave; absent, the core reads "maybe sent"
          ;[error, step] = [e, sent ? { kind: 'network_error' } : { kind: 'network_error', sent: false }]
        }
      }
      const state = { attempts: attempt, elapsedMs: Math.ceil(o.clock() - start), previousDelayMs: previousDelay }
      const [nowUnixMs, random] = [now(), o.random()]
      let d = http.nextStep(loop, state, step, nowUnixMs, random)
      // What the budget and breaker are told: a network error or a transient status is a failure (a
      // timeout when the attempt was cut), a success status a success, any other final status final.
      const cut = timer?.aborted === true
      const failed = step.kind === 'network_error' || d.class === 'transient'
      if (!(error instanceof CircuitOpenError)) guard.settled(failed ? (cut ? 'timeout' : 'failure') : d.class === 'success' ? 'success' : 'final')
      // The budget is asked only for a retry the core would make; a refusal gets the core's stop
      // (transient, the budget's rule and source) from the same step with the verdict.
      const verdict = d.action === 'retry' ? guard.tryRetry(cut ? 'timeout' : 'error') : undefined
      if (verdict !== undefined && !verdict.permitted) d = http.nextStep(loop, state, step, nowUnixMs, random, verdict)
      publish('fetch', d, error ?? response, attempt)
      if (d.action !== 'retry') {
        if (step.kind === 'response' && d.outcome === 'final') return response
        o.onGiveUp?.(d, error ?? response)
        if (response !== undefined) return response
        if (d.rule.startsWith('deadline')) throw new RetryTimeoutError(`retryFetch: gave up at the deadline after ${attempt} attempts`, d, error)
        throw withDecision(error, d)
      }
      o.onRetry?.(d, error ?? response)
      await response?.body?.cancel().catch(() => {})
      await pause(o.sleep, d.delayMs, o.signal)
      previousDelay = d.delayMs
    }
  }
  return retryFetch
}

module.exports = { makeRetryFetch }

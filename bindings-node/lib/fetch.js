'use strict'
// `retryFetch(input, init, options)`: `fetch` retried by the core's HTTP loop (`http.nextStep`:
// status classes, Retry-After seconds and dates, attempts and deadline, backoff). Orchestration
// only; the one rule added here is RFC 9110 §9.2.2's: a non-idempotent request is not repeated
// once it may have reached the server (the core's `http_next` has no method yet: see the report).

const { RetryTimeoutError, publish, pause, runnerOptions, dispatchFailure, withDecision } = require('./retry.js')

/** RFC 9110 §9.2.2 "Idempotent Methods": no automatic retry of a non-idempotent request. */
const NOT_IDEMPOTENT_SECTION = 'RFC 9110 §9.2.2 Idempotent Methods'

/** `retryFetch` over the core's `http.nextStep` and `isIdempotent`. */
function makeRetryFetch(http, isIdempotent) {
  /** Whether the core's idempotent list calls this HTTP method idempotent (unknown methods: no). */
  const idempotentMethod = (method) => {
    try {
      return isIdempotent({ service: 'management', method })
    } catch {
      return false
    }
  }

  /** `fetch(input, init)` until a final response, the attempts run out or the deadline comes. */
  async function retryFetch(input, init, options) {
    const o = runnerOptions(options ?? {})
    const { timeoutMs, maxAttempts, attemptTimeoutMs, backoff, jitter } = options ?? {}
    const fetchFn = options?.fetch ?? globalThis.fetch
    const now = options?.now ?? Date.now
    const method = String(init?.method ?? input?.method ?? 'GET').toUpperCase()
    const idempotent = options?.idempotent ?? idempotentMethod(method)
    const loop = { max_attempts: maxAttempts, deadline_ms: timeoutMs, backoff, jitter }
    const start = o.clock()
    let previousDelay
    for (let attempt = 1; ; attempt++) {
      o.signal?.throwIfAborted()
      // the attempt ends by the deadline, or after attemptTimeoutMs
      const left = Math.min((timeoutMs ?? Infinity) - (o.clock() - start), attemptTimeoutMs ?? Infinity)
      const timer = Number.isFinite(left) ? AbortSignal.timeout(Math.max(0, Math.floor(left))) : undefined
      const signals = [o.signal, timer, init?.signal].filter(Boolean)
      let response, error, step, sent
      try {
        response = await fetchFn(input, { ...init, signal: signals.length ? AbortSignal.any(signals) : undefined })
        step = { kind: 'response', status: response.status, retry_after: response.headers.get('retry-after') ?? undefined }
        sent = true
      } catch (e) {
        o.signal?.throwIfAborted()
        const failure = timer?.aborted ? 'socket_closed_while_in_flight' : dispatchFailure(e)
        if (failure === null) throw e
        ;[error, step, sent] = [e, { kind: 'network_error' }, failure !== 'socket_not_available']
      }
      const state = { attempts: attempt, elapsed_ms: Math.ceil(o.clock() - start), previous_delay_ms: previousDelay }
      let d = http.nextStep(loop, state, step, now(), o.random())
      if (d.action === 'retry' && sent && !idempotent) {
        d = { ...d, action: 'stop', outcome: 'transient', delay_ms: undefined, rule: 'not_idempotent_after_send', section: NOT_IDEMPOTENT_SECTION }
      }
      publish('fetch', d, error ?? response, attempt)
      if (d.action === 'stop') {
        if (step.kind === 'response' && d.outcome === 'final') return response
        o.onGiveUp?.(d, error ?? response)
        if (response !== undefined) return response
        if (d.rule.startsWith('deadline')) throw new RetryTimeoutError(`retryFetch: gave up at the deadline after ${attempt} attempts`, d, error)
        throw withDecision(error, d)
      }
      o.onRetry?.(d, error ?? response)
      await response?.body?.cancel().catch(() => {})
      await pause(o.sleep, d.delay_ms, o.signal)
      previousDelay = d.delay_ms
    }
  }
  return retryFetch
}

module.exports = { makeRetryFetch }

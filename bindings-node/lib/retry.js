'use strict'
// `retry(fn, options)`: the retry loop every adopter would otherwise write (RFC 0049's
// orchestrator). Orchestration only: it counts attempts, measures elapsed time, draws jitter,
// sleeps and reports; every retry/no-retry choice and every delay is the core's `decide`.

const diagnostics = require('node:diagnostics_channel')
const { setTimeout: sleepMs } = require('node:timers/promises')
const { performance } = require('node:perf_hooks')
const { invalidType } = require('./errors.js')

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
const channel = diagnostics.channel(DECISION_CHANNEL)

/** Publishes `{runner, decision, error, attempt}` when someone listens. */
function publish(runner, decision, error, attempt) {
  if (channel.hasSubscribers) channel.publish({ runner, decision, error, attempt })
}

/** The run ended at its deadline: `decision` says why, `cause` is the last error. */
class RetryTimeoutError extends Error {
  /** `decision`: the decision that ended the run; `cause`: the last failure. */
  constructor(message, decision, cause) {
    super(message, { cause })
    this.name = 'RetryTimeoutError'
    this.code = 'ETIMEDOUT'
    this.decision = decision
  }
}

/** The default sleep: `timers/promises` `setTimeout`, cancelled by `signal`. */
const defaultSleep = (ms, signal) => sleepMs(ms, undefined, signal ? { signal } : undefined)

/** Sleeps `ms` (none for 0); an abort rejects with the signal's reason. */
async function pause(sleep, ms, signal) {
  if (ms > 0) {
    try {
      await sleep(ms, signal)
    } catch (e) {
      signal?.throwIfAborted()
      throw e
    }
  }
  signal?.throwIfAborted()
}

/** The options every runner shares, checked, with their defaults. */
function runnerOptions(o) {
  if (o === null || typeof o !== 'object') throw invalidType('options', 'an options object', o)
  for (const k of ['classify', 'onRetry', 'onGiveUp', 'clock', 'random', 'sleep']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw invalidType(k, 'a function', o[k])
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalidType('signal', 'an AbortSignal', o.signal)
  return {
    clock: o.clock ?? (() => performance.now()),
    random: o.random ?? Math.random,
    sleep: o.sleep ?? defaultSleep,
    signal: o.signal,
    onRetry: o.onRetry,
    onGiveUp: o.onGiveUp,
  }
}

/** `retry` over the core's `decide`, classifying with `classifyError` unless told otherwise. */
function makeRetry(decide, classifyError) {
  /** Runs `fn({attempt, remainingMs, signal})` until it succeeds or `decide` says stop. */
  async function retry(fn, options) {
    if (typeof fn !== 'function') throw invalidType('fn', 'a function', fn)
    const o = runnerOptions(options)
    const { operation, timeoutMs, policy, strategy, idempotent } = options
    if (operation === null || typeof operation !== 'object') throw invalidType('operation', 'an operation object', operation)
    const { service, operation: name, readonly, method } = operation
    const classify = options.classify ?? classifyError
    const start = o.clock()
    let attempts = 0
    let previousDelayMs // unset until the first wait
    let previousReasons = strategy ? [] : undefined // only host strategies read them
    for (;;) {
      o.signal?.throwIfAborted()
      const elapsed = o.clock() - start
      try {
        return await fn({ attempt: attempts + 1, remainingMs: Math.max(0, Math.floor(timeoutMs - elapsed)), signal: o.signal })
      } catch (err) {
        o.signal?.throwIfAborted()
        const reason = classify(err)
        if (reason === null || reason === undefined) throw err
        // A literal of one shape (a spread of `operation` here cost ~3 µs per decide on Node 20)
        const request = {
          service, operation: name, readonly, method, timeoutMs, idempotent, attempts, previousDelayMs, previousReasons,
          elapsedMs: Math.ceil(o.clock() - start), random: o.random(),
        }
        const d = decide(request, reason, policy, strategy)
        publish('retry', d, err, attempts + 1)
        if (d.action === 'no_retry' || d.thenCancel) {
          o.onGiveUp?.(d, err)
          throw givenUp(d, err)
        }
        o.onRetry?.(d, err)
        if (d.delayMs > 0) await pause(o.sleep, d.delayMs, o.signal)
        else o.signal?.throwIfAborted()
        attempts += 1
        previousDelayMs = d.delayMs
        if (previousReasons) previousReasons = [...previousReasons, d.reason] // a strategy may keep the last one
      }
    }
  }
  return retry
}

/** The error a run that gave up rejects with: a timeout error at the deadline, else the last error. */
function givenUp(d, err) {
  if (d.action === 'retry' || d.cause === 'deadline_passed') {
    return new RetryTimeoutError(`retrypolicy: gave up at the deadline after ${d.attempts + 1} attempts`, d, err)
  }
  return withDecision(err, d)
}

/** `err` with `retryDecision` set to `d` (when it is an object that can take it). */
function withDecision(err, d) {
  if (err !== null && typeof err === 'object' && Object.isExtensible(err)) err.retryDecision = d
  return err
}

// ---- classifiers: a thrown error → a RetryReason name, or null (surface it now) -------------------

// Node and undici error codes: failures before the request left (nothing was sent) ...
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH',
  'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT'])
// ... and failures after it may have been sent.
const MAYBE_SENT = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** The network failure behind `err` (its own code, or its causes', e.g. fetch's `TypeError: fetch failed`). */
function dispatchFailure(err) {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = e.cause, depth++) {
    const { code, syscall } = e.code === undefined && Array.isArray(e.errors) ? e.errors[0] ?? {} : e
    if (NOT_SENT.has(code) || (code === 'ETIMEDOUT' && syscall === 'connect')) return 'socket_not_available'
    if (MAYBE_SENT.has(code)) return 'socket_closed_while_in_flight'
  }
  return null
}

/** The HTTP status an error carries (`status`, `statusCode` or `response.status`), or undefined. */
function errorStatus(err) {
  if (err === null || typeof err !== 'object') return undefined
  const s = err.status ?? err.statusCode ?? err.response?.status
  return Number.isInteger(s) ? s : undefined
}

/** The classifiers over the core's `classifyDispatch` and `http.classify`. */
function makeClassifiers(classifyDispatch, http) {
  // The core's reason for each of the two failures, asked once (a call per error cost ~1 µs).
  const reasons = {
    socket_not_available: classifyDispatch('socket_not_available').reason,
    socket_closed_while_in_flight: classifyDispatch('socket_closed_while_in_flight').reason,
  }
  /** A Node/undici network error → SOCKET_NOT_AVAILABLE (not sent) or SOCKET_CLOSED_WHILE_IN_FLIGHT; else null. */
  const classifyNetworkError = (err) => {
    const failure = dispatchFailure(err)
    return failure === null ? null : reasons[failure]
  }
  /** An error with a transient HTTP status → SERVICE_RESPONSE_CODE_INDICATED; a final one or none → null. */
  const classifyHttpStatus = (err) => {
    const status = errorStatus(err)
    if (status === undefined || status < 200 || status > 599) return null
    return http.classify(status).outcome === 'transient' ? 'SERVICE_RESPONSE_CODE_INDICATED' : null
  }
  /** The default: a network error, else an HTTP status error, else null. */
  const classifyError = (err) => classifyNetworkError(err) ?? classifyHttpStatus(err)
  return { classifyNetworkError, classifyHttpStatus, classifyError }
}

/** `retry` and the classifiers over the core's functions `{decide, classifyDispatch, http}`. */
function runners(core) {
  const classifiers = makeClassifiers(core.classifyDispatch, core.http)
  return { retry: makeRetry(core.decide, classifiers.classifyError), ...classifiers }
}

module.exports = { runners, DECISION_CHANNEL, RetryTimeoutError, publish, pause, runnerOptions, dispatchFailure, withDecision }

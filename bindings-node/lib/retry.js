'use strict'
// `retry(fn, options)`: the retry loop every adopter would otherwise write (RFC 0049's
// orchestrator). Orchestration only: it counts attempts, measures elapsed time, draws jitter,
// sleeps and reports; every retry/no-retry choice and every delay is the core's `decide`.

const { invalidType } = require('./errors.js')

/** A Node built-in, or null where there is none (a browser bundle of the wasm package). */
function builtin(name) {
  try {
    return require(name)
  } catch {
    return null
  }
}
const timers = builtin('node:timers/promises')
const { performance } = globalThis // Node's perf_hooks one, or the browser's

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the hooks still report.
const channel = builtin('node:diagnostics_channel')?.channel(DECISION_CHANNEL)

/** Publishes `{runner, decision, error, attempt}` when someone listens. */
function publish(runner, decision, error, attempt) {
  if (channel?.hasSubscribers) channel.publish({ runner, decision, error, attempt })
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

/** The default sleep: `timers/promises` `setTimeout` (a timer otherwise), cancelled by `signal`. */
function defaultSleep(ms, signal) {
  if (timers) return timers.setTimeout(ms, undefined, signal ? { signal } : undefined)
  return new Promise((resolve, reject) => {
    const stop = () => (clearTimeout(id), reject(signal.reason))
    const id = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms)
    signal?.addEventListener('abort', stop, { once: true })
  })
}

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

/** A circuit breaker refused the attempt: nothing was sent. `verdict` is the breaker's. */
class CircuitOpenError extends Error {
  /** `verdict`: the breaker's refusal (reason CIRCUIT_BREAKER_OPEN, rule, source). */
  constructor(verdict) {
    super(`retrypolicy: the circuit breaker refused the attempt (${verdict.rule})`)
    this.name = 'CircuitOpenError'
    this.code = 'ECIRCUITOPEN'
    this.verdict = verdict
  }
}

/**
 * The `budget` and `breaker` of a run (either may be absent), told what happens at the run's
 * clock: the request, each attempt's outcome, and each retry (asked of the budget first).
 */
function guards(options, clock) {
  const { budget, breaker } = options
  for (const [k, v] of [['budget', budget], ['breaker', breaker]]) {
    if (v !== undefined && v !== null && (typeof v !== 'object' || typeof v.permit !== 'function')) {
      throw invalidType(k, k === 'budget' ? 'a RetryBudget' : 'a CircuitBreaker', v)
    }
  }
  const now = () => Math.max(0, Math.floor(clock()))
  let retryCause // what the retry in flight repeats; undefined for the first attempt
  budget?.record(now(), 'request')
  return {
    /** The breaker's verdict on sending an attempt now: undefined (go), or a CircuitOpenError. */
    refusal() {
      const verdict = breaker?.permit(now())
      return verdict === undefined || verdict.permitted ? undefined : new CircuitOpenError(verdict)
    },
    /** An attempt was answered: `'success'`, `'failure'` or `'timeout'` (a retryable failure), or `'final'` (surfaced as it is). */
    settled(outcome) {
      const t = now()
      breaker?.record(t, outcome === 'final' ? 'success' : outcome)
      if (outcome === 'success') budget?.record(t, { kind: 'success', afterRetry: retryCause })
      else if (outcome !== 'final') budget?.record(t, outcome)
    },
    /** The budget's verdict on a retry for `cause` (recorded when permitted), or undefined without a budget. */
    tryRetry(cause) {
      const verdict = budget?.tryRetry(now(), cause)
      if (verdict?.permitted) retryCause = cause
      return verdict
    },
  }
}

/** `retry` over the core's `decide` (and `decideWithBudget`), classifying with `classifyError` unless told otherwise. */
function makeRetry(decide, classifyError, decideWithBudget) {
  /** Runs `fn({attempt, remainingMs, signal})` until it succeeds or `decide` says stop. */
  async function retry(fn, options) {
    if (typeof fn !== 'function') throw invalidType('fn', 'a function', fn)
    const o = runnerOptions(options)
    const { operation, timeoutMs, policy, strategy, idempotent } = options
    if (operation === null || typeof operation !== 'object') throw invalidType('operation', 'an operation object', operation)
    const { service, operation: name, readonly, method } = operation
    const classify = options.classify ?? classifyError
    const guard = guards(options, o.clock)
    const start = o.clock()
    let attempts = 0
    let previousDelayMs // unset until the first wait
    let previousReasons = strategy ? [] : undefined // only host strategies read them
    for (;;) {
      o.signal?.throwIfAborted()
      const elapsed = o.clock() - start
      let err = guard.refusal()
      let reason = err?.verdict.reason // a refused attempt fails with CIRCUIT_BREAKER_OPEN
      if (err === undefined) {
        try {
          const value = await fn({ attempt: attempts + 1, remainingMs: Math.max(0, Math.floor(timeoutMs - elapsed)), signal: o.signal })
          guard.settled('success')
          return value
        } catch (e) {
          o.signal?.throwIfAborted()
          reason = classify(e)
          guard.settled(reason === null || reason === undefined ? 'final' : 'failure')
          if (reason === null || reason === undefined) throw e
          err = e
        }
      }
      // A literal of one shape (a spread of `operation` here cost ~3 µs per decide on Node 20)
      const request = {
        service, operation: name, readonly, method, timeoutMs, idempotent, attempts, previousDelayMs, previousReasons,
        elapsedMs: Math.ceil(o.clock() - start), random: o.random(),
      }
      let d = decide(request, reason, policy, strategy)
      const verdict = d.action === 'retry' && !d.thenCancel ? guard.tryRetry('error') : undefined
      if (verdict !== undefined && !verdict.permitted) d = decideWithBudget(request, reason, policy, verdict)
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

// Conversion, not a rule: whether a failed request may have left, read off the error codes only
// JavaScript sees (Node's and undici's). false: it surely did not (refused, no DNS answer, no route,
// a connect timeout); true: it may have reached the server. Other codes are not network failures.
const MAY_HAVE_BEEN_SENT = new Map([
  ['ECONNREFUSED', false], ['ENOTFOUND', false], ['EAI_AGAIN', false], ['ENETUNREACH', false],
  ['EHOSTUNREACH', false], ['EADDRNOTAVAIL', false], ['UND_ERR_CONNECT_TIMEOUT', false],
  ['ECONNRESET', true], ['EPIPE', true], ['ETIMEDOUT', true], ['ECONNABORTED', true], ['UND_ERR_SOCKET', true],
  ['UND_ERR_CLOSED', true], ['UND_ERR_HEADERS_TIMEOUT', true], ['UND_ERR_BODY_TIMEOUT', true],
])

/**
 * Whether the network failure behind `err` (its own code, or its causes', e.g. fetch's `TypeError:
 * fetch failed`) may have sent the request: true or false; null when it is no network failure.
 */
function mayHaveBeenSent(err) {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = e.cause, depth++) {
    const { code, syscall } = e.code === undefined && Array.isArray(e.errors) ? e.errors[0] ?? {} : e
    if (code === 'ETIMEDOUT' && syscall === 'connect') return false
    const sent = MAY_HAVE_BEEN_SENT.get(code)
    if (sent !== undefined) return sent
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
  // The core's two reasons, asked once (a call per error cost ~1 µs): a request that may have been
  // in flight (the HTTP network error's `retry_reason`) and one whose socket was never available.
  const inFlight = http.classify(undefined, true).retryReason
  const notSent = classifyDispatch('socket_not_available').reason
  /** A Node/undici network error → SOCKET_NOT_AVAILABLE (not sent) or SOCKET_CLOSED_WHILE_IN_FLIGHT; else null. */
  const classifyNetworkError = (err) => {
    const sent = mayHaveBeenSent(err)
    return sent === null ? null : sent ? inFlight : notSent
  }
  /** An error with an HTTP status → the core's `retry_reason` for it (null when final); no status or none the core takes → null. */
  const classifyHttpStatus = (err) => {
    const status = errorStatus(err)
    if (status === undefined) return null
    try {
      return http.classify(status).retryReason
    } catch (e) {
      if (e?.code === 'out_of_range') return null // 1xx, or no HTTP status at all
      throw e
    }
  }
  /** The default: a network error, else an HTTP status error, else null. */
  const classifyError = (err) => classifyNetworkError(err) ?? classifyHttpStatus(err)
  return { classifyNetworkError, classifyHttpStatus, classifyError }
}

module.exports = {
  makeRetry, makeClassifiers, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, guards, publish, pause, runnerOptions,
  mayHaveBeenSent, withDecision,
}

'use strict'
// The AWS SDKs' retry modes, typed: the `aws` namespace over the backend's objects (json.js
// `objectsOf`; the wire crate's objects.rs). Conversion only: the retry document,
// the limiter's document and its snapshot are the shared JSON form (snake_case, as every language
// writes them); an attempt's error and the quota's verdict are camelCase objects, written here in
// the wire form; answers come back camelCase and frozen. Every rule is the core's. Shared by both
// packages.

const { documentText, options, camelCall, wireText, snapshotText, fromWire } = require('./json.js')

const HANDLE = Symbol('retrypolicy.aws')

/** An optional document (undefined or null: none) as JSON text. */
const optionalText = (doc, field) => (doc === undefined || doc === null ? undefined : documentText(doc, field, field))

/** The `aws` namespace over the backend's `objects` (`{open, call}`). */
function awsApi({ objects: { open, call } }) {
  /** A checked AWS retry configuration: standard (the default), adaptive or legacy mode; read-only. */
  class RetryConfig {
    /** A configuration from its document (`{mode?, behavior?, max_attempts?, service?, max_backoff_ms?, long_polling?}`, snake_case, or its text); none: standard mode's defaults. Errors name `config.<field>`. */
    constructor(document) {
      const handle = open('aws_retry_config', { document: optionalText(document, 'config') })
      Object.defineProperty(this, HANDLE, { value: handle })
      const doc = call(handle, 'to_json')
      const fields = { mode: doc.mode, behavior: doc.behavior ?? null, maxAttempts: doc.max_attempts, service: doc.service ?? null,
        maxBackoffMs: doc.max_backoff_ms ?? null, longPolling: doc.long_polling ?? null }
      for (const [k, v] of Object.entries(fields)) Object.defineProperty(this, k, { value: v, enumerable: true })
      Object.freeze(this)
    }

    /** The normalized document (version 1, every field of the mode set). */
    toJSON() {
      return call(this[HANDLE], 'to_json')
    }
  }

  /** The backend's handle of a configuration: a RetryConfig's, a document's (checked now), or none for undefined or null. */
  function configHandle(config) {
    if (config === undefined || config === null) return undefined
    return (config instanceof RetryConfig ? config : new RetryConfig(config))[HANDLE]
  }

  /**
   * The decision after a failed attempt: `config` a RetryConfig or its document (null: standard
   * mode's defaults), `attempts` made (the failed one included), `error` `{code?, status?,
   * connectionError?, timeout?, retryableTrait?, retryAfter?, crc32Mismatch?}`; options `{random?,
   * budgetVerdict?}` (the retry quota's `tryRetry(nowMs, decision.cause)` verdict on this retry).
   */
  function decide(config, attempts, error, opts) {
    const { random, budgetVerdict } = options(opts)
    const ch = configHandle(config)
    const e = wireText(error, 'error', 'an error object {code?, status?, connectionError?, timeout?, ...}')
    const v = budgetVerdict === undefined || budgetVerdict === null ? undefined : wireText(budgetVerdict, 'budgetVerdict', 'a budget verdict')
    return camelCall(() => fromWire(call(ch, 'aws_decide', { attempts, error: e, random, budget_verdict: v })))
  }

  /** `obj` holding `handle`, frozen. */
  function holding(obj, handle) {
    Object.defineProperty(obj, HANDLE, { value: handle })
    return Object.freeze(obj)
  }

  /** Adaptive mode's client-side rate limiter: the SDKs' token bucket with its CUBIC rate, on the caller's clock. */
  class AdaptiveRateLimiter {
    /** A limiter from its document (`{min_fill_rate?, beta?, scale_constant?, smoothing?}`; none: the SDKs' constants), created at `startMs` (default 0): off until the first throttled response. */
    constructor(document, startMs) {
      holding(this, open('rate_limiter', { document: optionalText(document, 'limiter'), start_ms: startMs }))
    }

    /** A limiter of `document` (none: the SDKs' constants) in the state `state` (what `snapshot()` returned, or its JSON text; required). */
    static restore(document, state) {
      const handle = open('rate_limiter', { document: optionalText(document, 'limiter'), state: snapshotText(state) })
      return holding(Object.create(AdaptiveRateLimiter.prototype), handle)
    }

    /** Asks for a token before sending an attempt at `nowMs`: `{acquired, waitMs, capacity, rule, section}`; not acquired: ask again after `waitMs`. */
    acquire(nowMs) {
      return fromWire(call(this[HANDLE], 'acquire', { now_ms: nowMs }))
    }

    /** Tells the limiter a response arrived at `nowMs`, `throttled` or not: the rate update. */
    record(nowMs, throttled) {
      return fromWire(call(this[HANDLE], 'record', { now_ms: nowMs, throttled }))
    }

    /** The state as a plain object in the shared JSON form (store it anywhere; `restore` reads it). */
    snapshot() {
      return call(this[HANDLE], 'snapshot')
    }

    /** The normalized document. */
    toJSON() {
      return call(this[HANDLE], 'to_json')
    }
  }

  return Object.freeze({ RetryConfig, decide, AdaptiveRateLimiter })
}

module.exports = { awsApi }

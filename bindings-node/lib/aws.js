'use strict'
// The AWS SDKs' retry modes, typed: the `aws` namespace over a backend's AWS members (the napi
// addon's exports, or the wasm module's through its backend). Conversion only: the retry document,
// the limiter's document and its snapshot are the shared JSON form (snake_case, as every language
// writes them); an attempt's error and the quota's verdict are camelCase objects, written here in
// the wire form; answers come back camelCase and frozen. Every rule is the core's. Shared by both
// packages.

const { invalidType, renamed, typedError } = require('./errors.js')
const { documentText, fromWire, toWire, camelPath } = require('./json.js')

const HANDLE = Symbol('retrypolicy.aws')

/** Options objects: `undefined`/`null` are none. */
function options(o) {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalidType('options', 'an options object', o)
  return o ?? {}
}

/** A camelCase argument object as JSON text in the wire form, its errors naming `field`. */
function wireText(v, field, what) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidType(field, what, v)
  return documentText(toWire(v, field), field)
}

/** An optional document (undefined or null: none) as JSON text. */
const optionalText = (doc, field) => (doc === undefined || doc === null ? undefined : documentText(doc, field))

/**
 * The `aws` namespace over the backend `native` (AwsRetryConfigHandle, awsDecide,
 * RateLimiterHandle).
 */
function awsApi({ native }) {
  /** A checked AWS retry configuration: standard (the default), adaptive or legacy mode; read-only. */
  class RetryConfig {
    /** A configuration from its document (`{mode?, behavior?, max_attempts?, service?, max_backoff_ms?, long_polling?}`, snake_case, or its text); none: standard mode's defaults. Errors name `config.<field>`. */
    constructor(document) {
      const handle = new native.AwsRetryConfigHandle(optionalText(document, 'config'))
      Object.defineProperty(this, HANDLE, { value: handle })
      const doc = JSON.parse(handle.toJson())
      const fields = { mode: doc.mode, behavior: doc.behavior ?? null, maxAttempts: doc.max_attempts, service: doc.service ?? null,
        maxBackoffMs: doc.max_backoff_ms ?? null, longPolling: doc.long_polling ?? null }
      for (const [k, v] of Object.entries(fields)) Object.defineProperty(this, k, { value: v, enumerable: true })
      Object.freeze(this)
    }

    /** The normalized document (version 1, every field of the mode set). */
    toJSON() {
      return JSON.parse(this[HANDLE].toJson())
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
    try {
      return fromWire(JSON.parse(native.awsDecide(ch, attempts, e, random, v)))
    } catch (err) {
      throw err instanceof Error && typeof err.code === 'string' && typeof err.field === 'string' ? renamed(err, camelPath(err.field)) : err
    }
  }

  /** A snapshot argument as JSON text: `restore` needs one. */
  function stateText(state) {
    if (state === undefined || state === null) throw typedError('missing_field', 'state', `missing field: restore needs a snapshot, got ${state}`)
    return documentText(state, 'state')
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
      holding(this, new native.RateLimiterHandle(optionalText(document, 'limiter'), undefined, startMs))
    }

    /** A limiter of `document` (none: the SDKs' constants) in the state `state` (what `snapshot()` returned, or its JSON text; required). */
    static restore(document, state) {
      return holding(Object.create(AdaptiveRateLimiter.prototype), new native.RateLimiterHandle(optionalText(document, 'limiter'), stateText(state), undefined))
    }

    /** Asks for a token before sending an attempt at `nowMs`: `{acquired, waitMs, capacity, rule, section}`; not acquired: ask again after `waitMs`. */
    acquire(nowMs) {
      return fromWire(JSON.parse(this[HANDLE].acquire(nowMs)))
    }

    /** Tells the limiter a response arrived at `nowMs`, `throttled` or not: the rate update. */
    record(nowMs, throttled) {
      return fromWire(JSON.parse(this[HANDLE].record(nowMs, throttled)))
    }

    /** The state as a plain object in the shared JSON form (store it anywhere; `restore` reads it). */
    snapshot() {
      return JSON.parse(this[HANDLE].snapshot())
    }

    /** The normalized document. */
    toJSON() {
      return JSON.parse(this[HANDLE].toJson())
    }
  }

  return Object.freeze({ RetryConfig, decide, AdaptiveRateLimiter })
}

module.exports = { awsApi }

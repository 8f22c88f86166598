'use strict'
// gRPC's retry and hedging policy (gRFC A6), typed: the `grpc` namespace over a backend's gRPC
// members (the napi addon's exports, or the wasm module's through its backend). Conversion only:
// the service config and its policies are gRPC's own JSON (camelCase, passed as they are); the
// call's state, attempt and hedging event are camelCase objects, written here in the wire form;
// answers come back camelCase and frozen. Every rule is the core's. Shared by both packages.

const { invalidType, renamed } = require('./errors.js')
const { documentText, fromWire, toWire, camelPath } = require('./json.js')

const HANDLE = Symbol('retrypolicy.grpc')
const WIRE = Symbol('retrypolicy.grpc.wire')

/** Options objects: `undefined`/`null` are none. */
function options(o, field = 'options') {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalidType(field, 'an options object', o)
  return o ?? {}
}

/** A camelCase argument object as JSON text in the wire form, its errors naming `field`. */
function wireText(v, field, what) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidType(field, what, v)
  return documentText(toWire(v, field), field)
}

/** Nanoseconds from the wire (a number, or a decimal string past 2^53 − 1). */
const nanos = (v) => (typeof v === 'string' ? BigInt(v) : v)

/** What `f` returns; the core's errors about the call's camelCase arguments renamed camelCase. */
function camelCall(f) {
  try {
    return f()
  } catch (e) {
    throw e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string' ? renamed(e, camelPath(e.field)) : e
  }
}

/**
 * The `grpc` namespace over the backend `native` (GrpcServiceConfigHandle, GrpcRetryPolicyHandle,
 * GrpcHedgingPolicyHandle, grpcRetry, grpcHedge) and `budgetHandle`, which gives the backend's
 * handle of a RetryBudget (the throttling bucket lent to a call).
 */
function grpcApi({ native, budgetHandle }) {
  /** A policy object over `handle`: its validated fields, camelCase, read-only. */
  function policyFields(obj, handle) {
    Object.defineProperty(obj, HANDLE, { value: handle })
    const text = handle.toJson()
    for (const [k, v] of Object.entries(fromWire(JSON.parse(text)))) {
      Object.defineProperty(obj, k, { value: k.endsWith('Ns') ? nanos(v) : v, enumerable: true })
    }
    Object.defineProperty(obj, WIRE, { value: text })
    return Object.freeze(obj)
  }

  /** What both policies are: one of gRPC's policy documents validated by the backend's `Handle`, read-only. */
  class GrpcPolicy {
    /** `document` (gRPC's JSON: an object or its text, named `field` in errors) through `Handle`, `maxAttemptsCap` capping `maxAttempts`. */
    constructor(Handle, field, document, opts) {
      const { maxAttemptsCap } = options(opts)
      policyFields(this, new Handle(documentText(document, field), maxAttemptsCap))
    }

    /** The validated policy as the JSON API writes it (`{kind, max_attempts, ...}`). */
    toJSON() {
      return JSON.parse(this[WIRE])
    }
  }

  /** `retryPolicy` of gRPC's service config, validated as gRFC A6 asks; read-only. */
  class RetryPolicy extends GrpcPolicy {
    /** A policy from gRPC's JSON (`{maxAttempts, initialBackoff, maxBackoff, backoffMultiplier, retryableStatusCodes}`, or its text); `maxAttemptsCap` (default 5) caps `maxAttempts`. */
    constructor(document, opts) {
      super(native.GrpcRetryPolicyHandle, 'retryPolicy', document, opts)
    }
  }

  /** `hedgingPolicy` of gRPC's service config, validated as gRFC A6 asks; read-only. */
  class HedgingPolicy extends GrpcPolicy {
    /** A policy from gRPC's JSON (`{maxAttempts, hedgingDelay?, nonFatalStatusCodes?}`, or its text); `maxAttemptsCap` (default 5) caps `maxAttempts`. */
    constructor(document, opts) {
      super(native.GrpcHedgingPolicyHandle, 'hedgingPolicy', document, opts)
    }
  }

  /** A policy object of this package over a backend handle `policyFor` returned. */
  function policyOf(handle) {
    if (handle === undefined || handle === null) return null
    const Class = handle instanceof native.GrpcRetryPolicyHandle ? RetryPolicy : HedgingPolicy
    return policyFields(Object.create(Class.prototype), handle)
  }

  /** A service config's methods and their policies, validated; read-only. */
  class ServiceConfig {
    /** A service config from gRPC's JSON (an object or its text; fields A6 does not read are ignored); `maxAttemptsCap` (default 5) caps every `maxAttempts`. Errors name the field (`methodConfig[0].retryPolicy.maxAttempts`). */
    constructor(document, opts) {
      const { maxAttemptsCap } = options(opts)
      Object.defineProperty(this, HANDLE, { value: new native.GrpcServiceConfigHandle(documentText(document, 'serviceConfig'), maxAttemptsCap) })
      const throttling = this[HANDLE].throttling()
      Object.defineProperty(this, 'throttling', { value: throttling === null || throttling === undefined ? null : JSON.parse(throttling), enumerable: true })
      Object.freeze(this)
    }

    /** The policy for `service`/`method`: the exact method's, else the service's, else the default config's; null for none. */
    policyFor(service, method) {
      return policyOf(this[HANDLE].policyFor(service, method))
    }

    /** Which name matched `service`/`method`: `'exact'`, `'service'`, `'default'`, or null. */
    matched(service, method) {
      return this[HANDLE].matched(service, method) ?? null
    }
  }

  /** The backend's handle of a policy of class `Class` (none for undefined or null). */
  function handleOf(policy, Class, field) {
    if (policy === undefined || policy === null) return undefined
    if (!(policy instanceof Class)) throw invalidType(field, `a grpc.${Class.name} of this package`, policy)
    return policy[HANDLE]
  }

  /** The backend's handle of the throttling bucket, a RetryBudget (none for undefined or null). */
  function bucket(throttling) {
    try {
      return budgetHandle(throttling)
    } catch (e) {
      throw renamed(e, 'throttling')
    }
  }

  /**
   * The decision after one attempt (gRFC A6): `policy` the method's RetryPolicy (null: none, only
   * transparent retries), `state` `{attempts, retries?, retriesSincePushback?, elapsedMs?, deadlineMs?}`,
   * `attempt` `{status, pushback?, committed?, reach?}`; options `{random?, jitter?, throttling?, nowMs?}`.
   */
  function retry(policy, state, attempt, opts) {
    const { random, jitter, throttling, nowMs } = options(opts)
    const ph = handleOf(policy, RetryPolicy, 'policy')
    const b = bucket(throttling)
    const s = wireText(state, 'state', 'a state object {attempts, retries?, ...}')
    const a = wireText(attempt, 'attempt', 'an attempt object {status, ...}')
    return camelCall(() => fromWire(JSON.parse(native.grpcRetry(ph, s, a, random, jitter, b, nowMs))))
  }

  /**
   * One step of a hedged call: `policy` its HedgingPolicy, `state` the previous step's (null: not
   * started), `event` `'start'`, `'hedge_due'`, `'committed'` or `{event: 'attempt_ended', attempt}`;
   * options `{throttling?, nowMs?}`.
   */
  function hedge(policy, state, event, opts) {
    const { throttling, nowMs } = options(opts)
    const ph = handleOf(policy, HedgingPolicy, 'policy') // none: the backend refuses it by name
    const b = bucket(throttling)
    const s = state === undefined || state === null ? undefined : wireText(state, 'state', 'a hedging state object')
    const e = wireText(typeof event === 'string' ? { event } : event, 'event', "an event name or {event: 'attempt_ended', attempt}")
    return camelCall(() => fromWire(JSON.parse(native.grpcHedge(ph, s, e, b, nowMs))))
  }

  return Object.freeze({ ServiceConfig, RetryPolicy, HedgingPolicy, retry, hedge })
}

module.exports = { grpcApi }

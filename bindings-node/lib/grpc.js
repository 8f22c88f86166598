'use strict'
// gRPC's retry and hedging policy (gRFC A6), typed: the `grpc` namespace over the backend's
// objects (json.js `objectsOf`; the wire crate's objects.rs). Conversion only:
// the service config and its policies are gRPC's own JSON (camelCase, passed as they are); the
// call's state, attempt and hedging event are camelCase objects, written here in the wire form;
// answers come back camelCase and frozen. Every rule is the core's. Shared by both packages.

const { invalidType, renamed } = require('./errors.js')
const { documentText, options, camelCall, wireText, fromWire } = require('./json.js')

const HANDLE = Symbol('retrypolicy.grpc')

/** Nanoseconds from the wire (a number, or a decimal string past 2^53 − 1). */
const nanos = (v) => (typeof v === 'string' ? BigInt(v) : v)

/**
 * The `grpc` namespace over the backend's `objects` (`{open, call}`) and `budgetHandle`, which
 * gives the backend's object of a RetryBudget (the throttling bucket lent to a call).
 */
function grpcApi({ objects: { open, call }, budgetHandle }) {
  /** A policy object over `handle`: its validated fields (`wire`, as the JSON API writes them), camelCase, read-only. */
  function policyFields(obj, handle, wire = call(handle, 'to_json')) {
    Object.defineProperty(obj, HANDLE, { value: handle })
    for (const [k, v] of Object.entries(fromWire(wire))) {
      Object.defineProperty(obj, k, { value: k.endsWith('Ns') ? nanos(v) : v, enumerable: true })
    }
    return Object.freeze(obj)
  }

  /** What both policies are: one of gRPC's policy documents validated as an object of `kind`, read-only. */
  class GrpcPolicy {
    /** `document` (gRPC's JSON: an object or its text, named `field` in errors) as `kind`, `maxAttemptsCap` capping `maxAttempts`. */
    constructor(kind, field, document, opts) {
      const { maxAttemptsCap } = options(opts)
      policyFields(this, open(kind, { document: documentText(document, field, field), max_attempts_cap: maxAttemptsCap }))
    }

    /** The validated policy as the JSON API writes it (`{kind, max_attempts, ...}`). */
    toJSON() {
      return call(this[HANDLE], 'to_json')
    }
  }

  /** `retryPolicy` of gRPC's service config, validated as gRFC A6 asks; read-only. */
  class RetryPolicy extends GrpcPolicy {
    /** A policy from gRPC's JSON (`{maxAttempts, initialBackoff, maxBackoff, backoffMultiplier, retryableStatusCodes}`, or its text); `maxAttemptsCap` (default 5) caps `maxAttempts`. */
    constructor(document, opts) {
      super('grpc_retry_policy', 'retryPolicy', document, opts)
    }
  }

  /** `hedgingPolicy` of gRPC's service config, validated as gRFC A6 asks; read-only. */
  class HedgingPolicy extends GrpcPolicy {
    /** A policy from gRPC's JSON (`{maxAttempts, hedgingDelay?, nonFatalStatusCodes?}`, or its text); `maxAttemptsCap` (default 5) caps `maxAttempts`. */
    constructor(document, opts) {
      super('grpc_hedging_policy', 'hedgingPolicy', document, opts)
    }
  }

  /** A policy object of this package over a backend handle `policyFor` returned. */
  function policyOf(handle) {
    if (handle === undefined || handle === null) return null
    const wire = call(handle, 'to_json')
    return policyFields(Object.create((wire.kind === 'retry' ? RetryPolicy : HedgingPolicy).prototype), handle, wire)
  }

  /** A service config's methods and their policies, validated; read-only. */
  class ServiceConfig {
    /** A service config from gRPC's JSON (an object or its text; fields A6 does not read are ignored); `maxAttemptsCap` (default 5) caps every `maxAttempts`. Errors name the field (`methodConfig[0].retryPolicy.maxAttempts`). */
    constructor(document, opts) {
      const { maxAttemptsCap } = options(opts)
      const handle = open('grpc_service_config', { document: documentText(document, 'serviceConfig'), max_attempts_cap: maxAttemptsCap })
      Object.defineProperty(this, HANDLE, { value: handle })
      Object.defineProperty(this, 'throttling', { value: call(handle, 'throttling'), enumerable: true })
      Object.freeze(this)
    }

    /** The policy for `service`/`method`: the exact method's, else the service's, else the default config's; null for none. */
    policyFor(service, method) {
      return policyOf(call(this[HANDLE], 'policy_for', { service, method }))
    }

    /** Which name matched `service`/`method`: `'exact'`, `'service'`, `'default'`, or null. */
    matched(service, method) {
      return call(this[HANDLE], 'matched', { service, method })
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
    return camelCall(() => fromWire(call(ph, 'grpc_retry', { state: s, attempt: a, random, jitter, now_ms: nowMs }, b)))
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
    return camelCall(() => fromWire(call(ph, 'grpc_hedge', { state: s, event: e, now_ms: nowMs }, b)))
  }

  return Object.freeze({ ServiceConfig, RetryPolicy, HedgingPolicy, retry, hedge })
}

module.exports = { grpcApi }

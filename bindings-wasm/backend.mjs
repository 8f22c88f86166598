// The wasm module as the facade's backend: the interface documented at the top of the Node
// package's lib/api.js (the napi addon's exports), over this crate's module (./pkg/web). Shared by
// the package's two entries, index.mjs (Node) and browser.mjs (pages). Conversion only: where the
// module's shape differs from the addon's (handles made by `parse`, snake_case classifications and
// steps, a run bound to its strategy, budget and breaker), the answer is reshaped here, and every
// rule stays the core's.

/** A snake_case name in camelCase. */
const camel = (key) => key.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())
/** Wire milliseconds (a number, or a decimal string past 2^53 − 1) as the API returns them. */
const millis = (v) => (typeof v === 'string' ? BigInt(v) : v)
/** JSON text that keeps bigints, NaN and ±Infinity as text, so the core refuses them by field. */
const jsonText = (doc) =>
  JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v)) ? String(v) : v))

/** What `f` returns; an error of the core's it throws names its field in camelCase, as the addon's do. */
function camelErrors(f) {
  try {
    return f()
  } catch (e) {
    if (e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string') {
      const field = camel(e.field)
      if (e.message.startsWith(`${e.field}: `)) e.message = field + e.message.slice(e.field.length)
      e.field = field
    }
    throw e
  }
}

/** A step's keys in the order the core declares them (the module's step comes with its keys sorted). */
const STEP_KEYS = ['action', 'attempt', 'timeout_ms', 'delay_ms', 'end', 'reason', 'rule', 'section', 'elapsed_ms',
  'retry_after_ms', 'decision', 'budget', 'breaker', 'breaker_changes', 'signal']

/** A wire document as the addon returns it: camelCase keys, `*_ms` through millis, frozen. */
function camelCased(v) {
  if (typeof v !== 'object' || v === null) return v
  if (Array.isArray(v)) return Object.freeze(v.map(camelCased))
  return Object.freeze(Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), k.endsWith('_ms') ? millis(x) : camelCased(x)])))
}

/** The core's error `{code, field, message}` as the module throws its own: a `RetryPolicyError`. */
function failure({ code, field, message }) {
  const e = Object.assign(new Error(message), { code, field })
  e.name = 'RetryPolicyError'
  return e
}

/**
 * A stand-in for a member of a feature the module was built without (`uses`, from its tables:
 * `{new | call | <static method>: error}`): a class whose constructor and static methods throw,
 * or a function that throws, each the core's not-built error for that use.
 */
function standIn(uses) {
  const thrower = (error) => () => {
    throw failure(error)
  }
  if (uses.call !== undefined) return thrower(uses.call)
  const StandIn = class {
    constructor() {
      thrower(uses.new)()
    }
  }
  for (const [use, error] of Object.entries(uses)) if (use !== 'new') StandIn[use] = thrower(error)
  return StandIn
}

/** The facade's backend over `wasm`, an initialised wasm-bindgen module of this crate. */
export function backendOf(wasm) {
  const tables = JSON.parse(wasm.tables())
  /** The JSON API's functions this module was built without (the HTTP module's): called as they are, they throw the core's not-built error. */
  const unbuilt = new Set(tables.unbuilt)
  /** The module's member `name`, or for a feature it was built without a stand-in whose every use throws the core's not-built error. */
  const member = (name) => wasm[name] ?? standIn(tables.unbuilt_members[name])
  let defaultPolicy
  /** The module's policy for a PolicyHandle, or the RFC default for none. */
  const policy = (ph) => (ph === undefined || ph === null ? (defaultPolicy ??= wasm.Policy.parse('{}')) : ph.policy)

  /** A parsed policy document. */
  class PolicyHandle {
    /** Parses `text`. */
    constructor(text) {
      this.policy = wasm.Policy.parse(text)
    }

    /** The normalized document as JSON text. */
    toJson() {
      return this.policy.toJson()
    }
  }

  /** A parsed KV error map. */
  class ErrorMapHandle {
    /** Parses `text`. */
    constructor(text) {
      const map = member('ErrorMap').parse(text)
      this.document = JSON.parse(map.toJson())
      map.free()
    }
  }

  /** A decision in the wire form through the facade's `make`. */
  const made = (w, make) =>
    make(w.action === 'retry', millis(w.delay_ms), w.capped, w.then_cancel, w.reason, w.rule, w.section, w.cause, w.attempts, w.idempotent)

  /** A policy's compatibility options, read once per policy; none for no policy (the core's default). */
  const compat = (ph) => (ph === undefined || ph === null ? undefined : (ph.compat ??= JSON.parse(ph.toJson()).compat))

  /** A classification as the addon returns it. */
  const classification = (c) => ({ reason: c.reason, rule: c.rule, section: c.section, surfaceAs: c.surface_as ?? null })

  /** A request object in the wire form, read as `decide` reads it. */
  const requestWire = (request) => JSON.parse(wasm.requestToJson(request))

  /** The core's JSON API on a wire document: the parsed answer, errors naming camelCase fields. */
  const call = (fn, doc) => camelErrors(() => JSON.parse(wasm.call(fn, jsonText(doc))))

  /** A host strategy as the module's run takes it: a function gets the run's request camelCased, as `decide`'s does. */
  function runStrategy(strategy) {
    if (typeof strategy !== 'function') return strategy
    return (request, reason) => strategy({ previousReasons: [], ...camelCased(request) }, reason)
  }

  // gRPC and AWS: wasm-bindgen takes no optional reference, so a call without a policy, a bucket or
  // a configuration passes the module's "none" policy (which grpcHedge refuses by name), goes to the
  // export without the bucket, or passes standard mode's defaults (each made once, when first needed;
  // in a module without the feature, making it throws the not-built error naming the function).
  const none = {}
  const retryPolicy = (ph) => ph ?? (none.retry ??= member('GrpcRetryPolicyHandle').none())
  const hedgingPolicy = (ph) => ph ?? (none.hedging ??= member('GrpcHedgingPolicyHandle').none())
  const awsConfig = (ch) => ch ?? (none.aws ??= member('AwsRetryConfigHandle').standard())

  /** The core's run machine, bound at construction to its strategy, budget and breaker. */
  class RunHandle {
    /** A run of `configText` (JSON, wire form). */
    constructor(configText, strategy, strategyPolicy, budget, breaker) {
      this.run = camelErrors(() => new wasm.RunHandle(configText, runStrategy(strategy), policy(strategyPolicy)))
      if (budget !== undefined) this.run.setBudget(budget)
      if (breaker !== undefined) this.run.setBreaker(breaker)
    }

    /** The step the module returned, as the addon returns it (camelCase, frozen, keys in the core's order). */
    static step(f) {
      const raw = camelErrors(f)
      return camelCased(Object.fromEntries(STEP_KEYS.map((k) => [k, raw[k]])))
    }

    /** The first step. */
    start(_budget, _breaker, nowMs, random) {
      return RunHandle.step(() => this.run.start(nowMs, random))
    }

    /** The step after an attempt's outcome (JSON text in the wire form). */
    attemptEnded(_budget, _breaker, outcomeText, nowMs, random, nowUnixMs) {
      return RunHandle.step(() => this.run.attemptEnded(outcomeText, nowMs, random, nowUnixMs))
    }

    /** The step after a wait. */
    waitEnded(_budget, _breaker, nowMs, random) {
      return RunHandle.step(() => this.run.waitEnded(nowMs, random))
    }

    /** Done, cancelled. */
    cancel(_budget, _breaker, nowMs) {
      return RunHandle.step(() => this.run.cancel(nowMs))
    }

    /** Attempts sent so far. */
    get attemptsSent() {
      return this.run.attemptsSent
    }

    /** What the run did so far: the core's RunStats as JSON text. */
    statsJson() {
      return this.run.statsJson()
    }
  }

  return {
    version: () => wasm.version(),
    reasonNames: () => tables.reasons.map((r) => r.name),
    errorCodes: () => tables.error_codes,
    callJson(fn, text, request, ph) {
      if ((request === undefined && ph === undefined) || unbuilt.has(fn)) return wasm.call(fn, text)
      const input = JSON.parse(text)
      if (request !== undefined) input.request = requestWire(request)
      if (ph !== undefined) input.policy = JSON.parse(ph.toJson())
      return wasm.call(fn, jsonText(input))
    },
    PolicyHandle,
    ErrorMapHandle,
    decide(service, operation, readonly, method, timeoutMs, elapsedMs, attempts, idempotent, strategy, random,
      previousDelayMs, previousReasons, reason, ph, make) {
      const request = { service, operation, readonly, method, timeoutMs, elapsedMs, attempts, idempotent, strategy,
        random, previousDelayMs, previousReasons }
      return made(wasm.decide(request, reason, policy(ph)), make)
    },
    decideWith: (request, reason, ph, strategy, strategyPh, make) =>
      made(wasm.decideWith(request, reason, policy(ph), strategy, policy(strategyPh)), make),
    classifyKv: (operation, status, map, ph) =>
      classification(call('classify_kv', { operation, status, error_map: map?.document, compat: compat(ph) })),
    requestFromJson: (text) => JSON.stringify(wasm.requestFromJson(text)),
    BudgetHandle: member('BudgetHandle'),
    BreakerHandle: member('BreakerHandle'),
    RunHandle,
    GrpcServiceConfigHandle: member('GrpcServiceConfigHandle'),
    GrpcRetryPolicyHandle: member('GrpcRetryPolicyHandle'),
    GrpcHedgingPolicyHandle: member('GrpcHedgingPolicyHandle'),
    grpcRetry: (ph, state, attempt, random, jitter, bucket, nowMs) => (bucket === undefined
      ? member('grpcRetry')(retryPolicy(ph), state, attempt, random, jitter, nowMs)
      : member('grpcRetryThrottled')(retryPolicy(ph), state, attempt, random, jitter, bucket, nowMs)),
    grpcHedge: (ph, state, event, bucket, nowMs) => (bucket === undefined
      ? member('grpcHedge')(hedgingPolicy(ph), state, event, nowMs)
      : member('grpcHedgeThrottled')(hedgingPolicy(ph), state, event, bucket, nowMs)),
    AwsRetryConfigHandle: member('AwsRetryConfigHandle'),
    awsDecide: (ch, attempts, error, random, verdict) => member('awsDecide')(awsConfig(ch), attempts, error, random, verdict),
    RateLimiterHandle: member('RateLimiterHandle'),
  }
}

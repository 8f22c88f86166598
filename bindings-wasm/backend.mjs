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

/** The facade's backend over `wasm`, an initialised wasm-bindgen module of this crate. */
export function backendOf(wasm) {
  const tables = JSON.parse(wasm.tables())
  /** The JSON API's functions this module was built without (the HTTP module's): called as they are, they throw the core's not-built error. */
  const unbuilt = new Set(tables.unbuilt)
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

  /** A decision in the wire form through the facade's `make`. */
  const made = (w, make) =>
    make(w.action === 'retry', millis(w.delay_ms), w.capped, w.then_cancel, w.reason, w.rule, w.section, w.cause, w.attempts, w.idempotent)

  /** An absent object (wasm-bindgen takes no optional reference). */
  const NONE = wasm.ObjectHandle.none()
  /** An error map object's document, read once per map. */
  const mapDocuments = new WeakMap()
  const mapDocument = (map) => {
    if (!mapDocuments.has(map)) mapDocuments.set(map, JSON.parse(wasm.invoke(map, 'to_json', '{}', NONE)))
    return mapDocuments.get(map)
  }

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
    decide(service, operation, readonly, method, timeoutMs, elapsedMs, attempts, idempotent, strategy, random,
      previousDelayMs, previousReasons, reason, ph, make) {
      const request = { service, operation, readonly, method, timeoutMs, elapsedMs, attempts, idempotent, strategy,
        random, previousDelayMs, previousReasons }
      return made(wasm.decide(request, reason, policy(ph)), make)
    },
    decideWith: (request, reason, ph, strategy, strategyPh, make) =>
      made(wasm.decideWith(request, reason, policy(ph), strategy, policy(strategyPh)), make),
    classifyKv: (operation, status, map, ph) =>
      classification(call('classify_kv', { operation, status, error_map: map && mapDocument(map), compat: compat(ph) })),
    requestFromJson: (text) => JSON.stringify(wasm.requestFromJson(text)),
    ObjectHandle: wasm.ObjectHandle,
    invoke: (target, method, args, lent) => wasm.invoke(target ?? NONE, method, args, lent ?? NONE),
    RunHandle,
  }
}

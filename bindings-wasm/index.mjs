// retrypolicy for Node over WebAssembly: the public API of the native npm package (its types are
// bindings-node/lib/retrypolicy.d.ts) over this crate's module, ./pkg/web (the page's ES module,
// instantiated here from its file, so the package ships one .wasm). Conversion only:
// decide and the classifiers are typed exports of the module; everything else is the core's JSON
// API (`call`), its input and answers converted by two generic functions (`call`, `fromWire`).
// The runners (retry, retryFetch, mongodb.runTransaction) are the Node package's own files, copied
// into ./pkg/runners at build and given this module's `Run` (run.mjs) and functions.
import { createRequire } from 'node:module'
import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import * as wasm from './pkg/web/retrypolicy_wasm.js'
import * as api from './index.mjs' // this module's own namespace, the default export
import { makeRun } from './run.mjs'

wasm.initSync({ module: readFileSync(new URL('./pkg/web/retrypolicy_wasm_bg.wasm', import.meta.url)) })
const require = createRequire(import.meta.url)
const { runners, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, BodyNotReplayableError } = require('./pkg/runners/runners.js')
const { budgets } = require('./pkg/runners/budget.js')
const tables = JSON.parse(wasm.tables())
const { freeze } = Object
const camel = (key) => key.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())
const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
/** Wire milliseconds (a number, or a decimal string past 2^53 − 1) as the API returns them. */
const millis = (v) => (typeof v === 'string' ? BigInt(v) : v)

// ---- errors and the core's JSON API ---------------------------------------------------------------

/** The stable error codes, shared by every language. */
const ERROR_CODES = freeze(tables.error_codes)
const CODES = new Set(ERROR_CODES)
/** Whether `e` was thrown by retrypolicy: an `Error` with a stable `code` and a `field`. */
const isRetryPolicyError = (e) => e instanceof Error && CODES.has(e.code) && typeof e.field === 'string'

/** An error like the core's, for what only JavaScript sees: `code`, `field`, the message led by the field. */
function typedError(code, field, detail) {
  const e = Object.assign(new Error(`${field}: ${detail}`), { code, field })
  e.name = 'RetryPolicyError'
  return e
}
/** The `invalid_type` error for an argument that is not what `expected` says. */
const invalidType = (field, expected, v) => typedError('invalid_type', field, `expected ${expected}, found ${v === null ? 'null' : typeof v}`)

/** The same error naming `field` instead (its message too). */
function renamed(e, field) {
  if (e.message.startsWith(`${e.field}: `)) e.message = field + e.message.slice(e.field.length)
  return Object.assign(e, { field })
}

/** JSON text for the core: bigints, NaN and ±Infinity as text (the core rejects those by field); object keys through `key`. */
function jsonText(doc, key) {
  const text = JSON.stringify(doc, (_k, v) => {
    if (typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v))) return String(v)
    if (key === undefined || typeof v !== 'object' || v === null || Array.isArray(v)) return v
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [key(k), x]))
  })
  return text ?? 'null'
}

/** The deepest nesting of objects and arrays a document may have (serde_json's own recursion limit, as the Node package's lib/json.js). */
const MAX_DEPTH = 128

/**
 * Rejects what JSON would silently null or drop, by path: NaN/±Infinity (`out_of_range`), functions and Symbols;
 * and what would end in a RangeError or TypeError: a cycle (`invalid_type`), nesting past MAX_DEPTH (`out_of_range`),
 * named by the path, or by `root` for the whole document.
 */
function checkJson(v, path, root, ancestors = new Set()) {
  if (typeof v === 'number' && !Number.isFinite(v)) throw typedError('out_of_range', path || root, `${v} is out of range: expected a finite number`)
  if (typeof v === 'function' || typeof v === 'symbol') throw invalidType(path || root, 'a JSON value', v)
  if (typeof v !== 'object' || v === null || typeof v.toJSON === 'function') return
  if (ancestors.has(v)) throw typedError('invalid_type', path || root, 'expected a JSON value, got a cyclic object (it contains itself)')
  if (ancestors.size >= MAX_DEPTH) throw typedError('out_of_range', path || root, `nested deeper than ${MAX_DEPTH} levels: expected at most ${MAX_DEPTH}`)
  ancestors.add(v)
  for (const [k, x] of Object.entries(v)) checkJson(x, Array.isArray(v) ? `${path}[${k}]` : path ? `${path}.${k}` : k, root, ancestors)
  ancestors.delete(v)
}

/** A JSON document given as text or as an object. */
function documentText(doc, field) {
  if (typeof doc === 'string') return doc
  if (typeof doc !== 'object' || doc === null) throw invalidType(field, 'a JSON document (string or object)', doc)
  checkJson(doc, '', field)
  return jsonText(doc)
}

/** Calls the core's JSON API with camelCase `input` (undefined entries left out); errors name fields in camelCase. */
function call(fn, input) {
  try {
    return JSON.parse(wasm.call(fn, jsonText(input, snake)))
  } catch (e) {
    throw isRetryPolicyError(e) ? renamed(e, camel(e.field)) : e
  }
}

/** An answer in the core's JSON form as the API returns it: camelCase keys, `*_ms` as numbers or bigints, frozen by `seal`. */
function fromWire(v, seal = freeze) {
  if (Array.isArray(v)) return seal(v.map((x) => fromWire(x, seal)))
  if (typeof v !== 'object' || v === null) return v
  return seal(Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), k.endsWith('_ms') ? millis(x) : fromWire(x, seal)])))
}

/** The `options` argument: an object, or none. */
function options(o) {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalidType('options', 'an options object', o)
  return o ?? {}
}

// ---- reasons, operations, requests ----------------------------------------------------------------

/** The RFC 0049 reasons, name → name (frozen). */
const RetryReason = freeze(Object.assign(Object.create(null), ...tables.reasons.map((r) => ({ [r.name]: r.name }))))

/** The reason's RFC table row: `{name, allowsNonIdempotentRetry, alwaysRetry}` (aliases accepted). */
const reasonFlags = (reason) => fromWire(call('reason_flags', { reason }))
/** The canonical name of a reason (aliases accepted); throws `unknown_reason`. */
const parseReason = (reason) => reasonFlags(reason).name
/** Whether a non-idempotent request may be retried for this reason. */
const allowsNonIdempotentRetry = (reason) => reasonFlags(reason).allowsNonIdempotentRetry
/** Whether this reason is retried regardless of the strategy. */
const alwaysRetry = (reason) => reasonFlags(reason).alwaysRetry

/** Whether RFC 0049's idempotent-operation list calls `{service, operation?, readonly?, method?}` idempotent. */
function isIdempotent(operation) {
  if (typeof operation !== 'object' || operation === null) throw invalidType('operation', 'an operation object', operation)
  const { service, operation: name, readonly, method } = operation // other properties are ignored, as decide ignores them
  return call('is_idempotent', { service, operation: name, readonly, method }).idempotent
}

/** A camelCase request in the wire form, as JSON text. */
const requestToJson = (request) => wasm.requestToJson(request)
/** A camelCase request in the wire form, as an object for the JSON API (read as `decide` reads it). */
const requestWire = (request) => JSON.parse(wasm.requestToJson(request))
/** A request from the wire form (snake_case, `*_ms` numbers or decimal strings), as a camelCase object. */
const requestFromJson = (document) => fromWire(wasm.requestFromJson(documentText(document, 'request')), (x) => x)

// ---- policies and error maps ----------------------------------------------------------------------

const HANDLE = Symbol('retrypolicy.handle')

/** The whole retry configuration, parsed and validated by the core; immutable. */
class Policy {
  /** A policy from its JSON document (text or object, snake_case); none is the RFC 0049 default. */
  constructor(document) {
    const text = document === undefined ? '{}' : documentText(document, 'policy')
    Object.defineProperty(this, HANDLE, { value: wasm.Policy.parse(text) })
    freeze(this)
  }

  /** Same as `new Policy(document)`. */
  static fromJson(document) {
    return new Policy(document)
  }

  /** The normalized document as JSON text (every field present). */
  toJson() {
    return this[HANDLE].toJson()
  }

  /** The normalized document as an object (what `JSON.stringify` writes). */
  toJSON() {
    return JSON.parse(this.toJson())
  }
}

const DEFAULT_POLICY = new Policy()

/** The Policy for `policy`: the RFC default when none. */
function policyOf(policy) {
  if (policy === undefined || policy === null) return DEFAULT_POLICY
  if (policy instanceof Policy) return policy
  throw invalidType('policy', 'a Policy (new Policy(document))', policy)
}
/** The module's handle of `policy` (the RFC default when none). */
const handle = (policy) => policyOf(policy)[HANDLE]

/** A KV error map (RFC 0013) as the server sent it, parsed once; immutable. */
class ErrorMap {
  /** Parses the server's error map document (text or object). */
  constructor(document) {
    Object.defineProperty(this, HANDLE, { value: wasm.ErrorMap.parse(documentText(document, 'errorMap')) })
    freeze(this)
  }
}

// ---- decisions --------------------------------------------------------------------------------------

/**
 * A decision in the core's JSON form as the API returns it (written out: through `fromWire` a
 * decide took 5.2 µs instead of 2.9, over the 5 µs budget).
 */
function decision(w) {
  const { reason, rule, section, attempts, idempotent } = w
  return freeze(
    w.action === 'retry'
      ? { action: 'retry', delayMs: millis(w.delay_ms), capped: w.capped, thenCancel: w.then_cancel, reason, rule, section, attempts, idempotent }
      : { action: 'no_retry', cause: w.cause, reason, rule, section, attempts, idempotent },
  )
}

/**
 * Decides whether and when to retry `request` after `reason`, under `policy` (RFC default when
 * omitted) and an optional host `strategy` (a function or an object with `retryAfter`).
 */
function decide(request, reason, policy, strategy) {
  if (strategy === undefined || strategy === null) return decision(wasm.decide(request, reason, handle(policy)))
  return decision(wasm.decideWith(request, reason, handle(policy), ...hostStrategy(strategy)))
}

/** A host strategy as the module takes it: a function, or a built-in strategy's name; then the built-in's policy. */
function hostStrategy(s) {
  const exact = (C) => s instanceof C && Object.getPrototypeOf(s) === C.prototype
  // The built-in strategies as objects decide by their own rules (`best_effort_backoff`, `fail_fast`).
  if (exact(BestEffort)) return ['best_effort', handle(s.policy)]
  if (exact(FailFast)) return ['fail_fast', handle()]
  if (typeof s === 'function') return [s, handle()]
  if (typeof s === 'object' && typeof s.retryAfter === 'function') return [(r, why) => s.retryAfter(r, why), handle()]
  throw invalidType('strategy', 'a function or an object with retryAfter(request, reason)', s)
}

/** `decide` for each request: `reasons` is one reason for all or one per request; an error names the request. */
function decideMany(requests, reasons, policy) {
  if (!Array.isArray(requests)) throw invalidType('requests', 'an array of requests', requests)
  const each = Array.isArray(reasons)
  if (each && reasons.length !== requests.length) {
    throw typedError('out_of_range', 'reasons', `${reasons.length} reasons for ${requests.length} requests`)
  }
  const h = handle(policy)
  return Array.from(requests, (request, i) => {
    try {
      return decision(wasm.decide(request, each ? reasons[i] : reasons, h))
    } catch (e) {
      if (!isRetryPolicyError(e)) throw e
      throw renamed(e, e.field === 'reason' ? (each ? `reasons[${i}]` : 'reasons') : `requests[${i}].${e.field}`)
    }
  })
}

/**
 * The orchestrator's steps before a host strategy is asked (deadline, UNKNOWN, always-retry
 * reasons, a per-request built-in strategy): the decision, or null when the host must be asked.
 */
const decideBeforeStrategy = (request, reason, policy) =>
  fromWire(call('decide_before_strategy', { request: requestWire(request), reason, policy: policyOf(policy) }).decision)

/** A host strategy's answer (ms, or null for "do not retry") as the decision, capped to the timeout. */
const decideAfterStrategy = (request, reason, retryAfterMs) =>
  fromWire(call('decide_after_strategy', { request: requestWire(request), reason, retryAfterMs }))

/** Best effort's answer for `request` and `reason` under `policy`: a delay in ms, or null (do not retry). */
const bestEffortDelay = (request, reason, policy) =>
  millis(call('best_effort_delay', { request: requestWire(request), reason, policy: policyOf(policy) }).delay_ms)

/** RFC 0049's default strategy as an object; subclass it and override `retryAfter` to change one case. */
class BestEffort {
  /** Best effort with `policy`'s backoff and jitter (the RFC default when omitted). */
  constructor(policy) {
    Object.defineProperty(this, 'policy', { value: policy ?? null, enumerable: true })
  }

  /** A delay in ms, or null for "do not retry". */
  retryAfter(request, reason) {
    return bestEffortDelay(request, reason, this.policy)
  }
}

/** RFC 0049's (internal) fail-fast strategy: never retries; always-retry reasons still are. */
class FailFast {
  /** Always null. */
  retryAfter(_request, _reason) {
    return null
  }
}

/** The core's one-line log message for a decision (RFC 0049 asks to log every retry and non-retry). */
const formatDecision = (decision) => call('format_decision', { decision }).message
/** The core's one-sentence explanation of `decision` for `request`, naming the rule and spec section. */
const explain = (request, decision) => call('explain_decision', { request: requestWire(request), decision }).sentence

/**
 * `decide` with a fixed policy and strategy that reports every decision: to `onDecision` and as a
 * `'decision'` event, each with one record (RFC 0049 asks for every retry and non-retry to be logged).
 */
class Orchestrator extends EventEmitter {
  /** `{policy?, strategy?, onDecision?}`. */
  constructor(opts) {
    super()
    const { policy, strategy, onDecision } = options(opts)
    if (onDecision !== undefined && typeof onDecision !== 'function') throw invalidType('onDecision', 'a function', onDecision)
    Object.assign(this, { policy, strategy, onDecision })
  }

  /** Decides, reports the record, and returns the decision. */
  decide(request, reason) {
    const d = decide(request, reason, this.policy, this.strategy)
    if (this.onDecision === undefined && this.listenerCount('decision') === 0) return d
    const retry = d.action === 'retry'
    const { action, attempts, rule, section } = d
    const record = freeze({
      ...{ action, reason: d.reason, attempts, delayMs: retry ? d.delayMs : null, rule, section },
      ...{ cause: retry ? null : d.cause, service: request.service, message: formatDecision(d), decision: d },
    })
    this.onDecision?.(record)
    this.emit('decision', record)
    return d
  }
}

// ---- classification, backoff, simulation ------------------------------------------------------------

/** The core's classification → a frozen `{reason, rule, section, surfaceAs}`. */
const classification = (c) => freeze({ reason: c.reason, rule: c.rule, section: c.section, surfaceAs: c.surface_as ?? null })

/** Classifies a KV response status (a number or a "0x.." string) for a KV operation name. */
function classifyKv(operation, status, opts) {
  const { errorMap, policy } = options(opts)
  if (errorMap === undefined || errorMap === null) return classification(wasm.classifyKv(operation, status, handle(policy)))
  const map = errorMap instanceof ErrorMap ? errorMap : new ErrorMap(errorMap)
  return classification(map[HANDLE].classifyKv(operation, status, handle(policy)))
}

/** Classifies the first error of a query response (`options.retry`: the error's "retry" flag). */
function classifyQuery(code, message, opts) {
  const { retry, policy } = options(opts)
  return classification(wasm.classifyQuery(code, message, retry, handle(policy)))
}
/** Classifies the first error of an analytics response. */
const classifyAnalytics = (code) => classification(wasm.classifyAnalytics(code))
/** Classifies a search response's HTTP status. */
const classifySearch = (httpStatus) => classification(wasm.classifySearch(httpStatus))
/** Classifies a views response from its HTTP status and body text. */
const classifyViews = (httpStatus, body) => classification(wasm.classifyViews(httpStatus, body))
/** Names the reason for a failure the SDK observed itself ("socket_closed_while_in_flight", ...). */
const classifyDispatch = (failure) => classification(wasm.classifyDispatch(failure))

/** RFC 0049's controlled backoff (always-retry reasons) in ms after `attempt` retries. */
const controlledBackoffMs = (attempt) => wasm.controlledBackoffMs(attempt)
/** The policy's best-effort delay in ms after `attempt` retries; jitter needs a draw in [0, 1). */
function backoffDelayMs(policy, attempt, random, previousDelayMs) {
  const { backoff, jitter } = policyOf(policy).toJSON()
  return millis(call('backoff', { backoff, jitter, attempt, random, previousDelayMs }).delay_ms)
}

/**
 * Replays a whole retry schedule: `{request, outcomes, latencyMs, repeatLast?, draws?, policy?}`
 * → `{steps, ending, totalMs, waitedMs}`, each step with the decision taken after it.
 */
function simulate(scenario) {
  if (typeof scenario !== 'object' || scenario === null) throw invalidType('scenario', 'a scenario object', scenario)
  const { request, outcomes, repeatLast, latencyMs, draws, policy } = scenario
  return fromWire(call('simulate', { request: requestWire(request), outcomes, repeatLast, latencyMs, draws, policy: policyOf(policy) }))
}

// ---- retry budgets, circuit breakers and storms: the Node package's objects over this module's handles ----

/**
 * `RetryBudget`, `CircuitBreaker` (the module's handles), decide / explain with a budget's verdict,
 * and the handle behind a budget or breaker (for a run).
 */
const { RetryBudget, CircuitBreaker, decideWithBudget, explainWithBudget, budgetHandle, breakerHandle } = budgets({
  BudgetHandle: wasm.BudgetHandle,
  BreakerHandle: wasm.BreakerHandle,
  budgeted: (fn, request, reason, policy, budgetVerdict) =>
    call(fn, { request: requestWire(request), reason, policy: policyOf(policy), budgetVerdict }),
})

// ---- the retry run: the core's machine, one object per run (run.mjs, shared with the browser entry) ----

/** One retry run over the core's machine: `new Run(config, {budget?, breaker?, strategy?})`, then its four events. */
const Run = makeRun({
  wasm,
  errors: require('./pkg/runners/errors.js'),
  json: require('./pkg/runners/json.js'),
  budgetHandle,
  breakerHandle,
  strategyOf: (s) => (s === undefined || s === null ? [undefined, handle()] : hostStrategy(s)),
})

/**
 * Replays a retry storm: `{request, reason, requestsPerSecond, durationMs, latencyMs, failureRate?,
 * policy?, draws?, budget?, breaker?}` → its totals (`amplification`: attempts sent per request).
 */
function simulateStorm(scenario) {
  if (typeof scenario !== 'object' || scenario === null) throw invalidType('scenario', 'a storm scenario object', scenario)
  const { request, reason, requestsPerSecond, durationMs, failureRate, latencyMs, policy, draws, budget, breaker } = scenario
  // The documents go as the objects' normalized ones: `call` would rewrite their keys in snake_case.
  const shared = (doc, C) => (doc === undefined || doc === null || doc instanceof C ? doc : new C(doc))
  const input = { request: requestWire(request), reason, requestsPerSecond, durationMs, failureRate, latencyMs, draws }
  return fromWire(call('simulate_storm', { ...input, policy: policyOf(policy), budget: shared(budget, RetryBudget), breaker: shared(breaker, CircuitBreaker) }))
}

// ---- MongoDB and HTTP: the Node package's namespaces (camelCase in and out) over the core's JSON API ----

/** MongoDB and HTTP retry rules (the Node package's lib/json.js, copied into ./pkg/runners at build). */
const { mongodb: mongodbRules, http } = require('./pkg/runners/json.js').jsonApi((fn, text) => wasm.call(fn, text))

/** `retry(fn, options)`, the classifiers of thrown errors, `retryFetch` and `runTransaction` (the Node package's runners). */
const { retry, classifyNetworkError, classifyHttpStatus, classifyError, retryFetch, runTransaction } =
  runners({ Run, classifyDispatch, http, mongodb: mongodbRules })

/** The MongoDB rules, with `runTransaction(session, callback, options)`. */
const mongodb = freeze({ ...mongodbRules, runTransaction })

/** The engine's version (the workspace version). */
const version = wasm.version()

export {
  version, RetryReason, ERROR_CODES, isRetryPolicyError, parseReason, reasonFlags, allowsNonIdempotentRetry,
  alwaysRetry, isIdempotent, Policy, ErrorMap, decide, decideMany, decideBeforeStrategy, decideAfterStrategy, bestEffortDelay, BestEffort, FailFast,
  formatDecision, explain, classifyKv, classifyQuery, classifyAnalytics, classifySearch, classifyViews,
  classifyDispatch, controlledBackoffMs, backoffDelayMs, requestFromJson, requestToJson, simulate, simulateStorm, mongodb, http,
  Orchestrator, retry, retryFetch, RetryTimeoutError, DECISION_CHANNEL, classifyNetworkError, classifyHttpStatus, classifyError,
  RetryBudget, CircuitBreaker, decideWithBudget, explainWithBudget, CircuitOpenError, BodyNotReplayableError, Run,
}

// The default export is this module's own namespace, so the name list above is written once.
export default api

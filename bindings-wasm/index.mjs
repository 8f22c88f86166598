// retrypolicy for Node over WebAssembly: the same public API as the native npm package
// (bindings-node/lib/retrypolicy.mjs): the same names and arguments, frozen camelCase results,
// bigint past 2^53 − 1, and errors with the same `code` and camelCase `field`. Conversion only,
// over the core's JSON API (`call` of ./pkg/nodejs): every rule, table and message comes from the
// Rust core, and the backend-independent half is the Node package's own (lib/common.js). What is
// checked here is only what JSON cannot carry: JavaScript types, and numbers JSON would change.
import { createRequire } from 'node:module'
import * as api from './index.mjs' // this module's own namespace, the default export

const require = createRequire(import.meta.url)
const wasm = require('./pkg/nodejs/retrypolicy_wasm.js')
const {
  nullProto,
  typedError,
  invalidType,
  errorCodes,
  options,
  documentText,
  jsonText,
  wireMillis,
  jsonApi,
  timelineFromWire,
  orchestratorClass,
} = require('../bindings-node/lib/common.js')

// ---- calling the core ----------------------------------------------------------------------------

/** The core's JSON API, text in and out; a trap (a Rust panic) becomes an `Error` coded `internal`. */
function callText(fn, text) {
  try {
    return wasm.call(fn, text)
  } catch (e) {
    if (!(e instanceof WebAssembly.RuntimeError)) throw e
    const err = new Error(`retrypolicy: internal failure, a Rust panic (this is a bug in retrypolicy): ${wasm.lastPanic()}`, { cause: e })
    err.code = 'internal'
    throw err
  }
}

const camel = (s) => s.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())
/** A core field path → the Node API's name: request fields bare, in camelCase (`timeoutMs`). */
const apiField = (f) => camel(f.startsWith('request.') ? f.slice(8) : f)
/** A core field path → the path inside the document under `key` (wire names kept, as in Node). */
const within = (key) => (f) => (f === key ? '(document)' : f.startsWith(`${key}.`) ? f.slice(key.length + 1) : f)

/** Calls `fn` on `input` (an object, or JSON text); errors name fields as `rename` says. */
function call(fn, input, rename) {
  let out
  try {
    out = callText(fn, typeof input === 'string' ? input : jsonText(input))
  } catch (e) {
    if (rename !== undefined && e instanceof Error && typeof e.field === 'string') {
      const f = rename(e.field)
      if (e.message.startsWith(e.field)) e.message = f + e.message.slice(e.field.length)
      e.field = f
    }
    throw e
  }
  return JSON.parse(out)
}

/** `text` when it is JSON; else the core's own malformed_json error for it (same line and column). */
function jsonDocument(text) {
  try {
    JSON.parse(text)
  } catch {
    callText('parse_request', text) // the core parses the text before it looks at the function
  }
  return text
}

// ---- JavaScript values → the wire form (what the native addon checks in convert.rs) -------------

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const U64_MAX = (1n << 64n) - 1n
const CODE_EXPECTED = 'a whole number in 0..=4294967295'
/** A finite number without an exponent (1e+21 → 1000000000000000000000), as Rust prints it. */
function plain(x) {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(x))
  if (m === null) return String(x)
  const [, sign, lead, frac = '', exp] = m
  const e = Number(exp)
  return sign + (e >= 0 ? (lead + frac).padEnd(e + 1, '0') : `0.${'0'.repeat(-e - 1)}${lead}${frac}`)
}
/** A number as the native addon shows a rejected count (NaN, Infinity, else Rust's digits). */
const shown = (x) => (Number.isFinite(x) ? plain(x) : String(x))
/** A float as the core prints it (Rust's Display: NaN, inf), for rejected durations and draws. */
const rustFloat = (x) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? 'inf' : x === -Infinity ? '-inf' : plain(x))

function str(field, v) {
  if (typeof v !== 'string') throw invalidType(field, 'a string', v)
  return v
}

function bool(field, v) {
  if (typeof v !== 'boolean') throw invalidType(field, 'a boolean', v)
  return v
}

/** A whole number in 0..=max (JSON would pass 1.7 and NaN on as other errors). */
function int(field, v, max = 4294967295, expected = CODE_EXPECTED) {
  if (typeof v !== 'number') throw invalidType(field, 'a number', v)
  if (!(v >= 0 && v <= max && Number.isInteger(v))) throw typedError('out_of_range', field, `${shown(v)} is out of range: expected ${expected}`)
  return v
}

function badDuration(field, value) {
  return typedError('invalid_duration', field, `invalid duration ${value}: expected a whole number of milliseconds in 0..=2^53-1`)
}

/** Milliseconds: a number up to 2^53 − 1 or a bigint up to 2^64 − 1 (sent as a decimal string). */
function millis(field, v) {
  if (typeof v === 'number') {
    if (v >= 0 && v <= MAX_SAFE && Number.isInteger(v)) return v
    throw badDuration(field, rustFloat(v))
  }
  if (typeof v === 'bigint') {
    if (v >= 0n && v <= U64_MAX) return v <= MAX_SAFE ? Number(v) : v.toString()
    throw badDuration(field, v > 0n ? 'a BigInt past 2^64-1' : v >= -U64_MAX ? `${v}n` : 'a BigInt below -(2^64-1)')
  }
  if (v === undefined) throw typedError('missing_field', field, 'missing field')
  throw badDuration(field, typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v)
}

/** A random draw; the core checks the range, JSON cannot carry NaN or ±Infinity to it. */
function draw(field, v) {
  if (typeof v !== 'number') throw invalidType(field, 'a number in [0, 1)', v)
  if (!Number.isFinite(v)) throw typedError('invalid_random', field, `random draw ${rustFloat(v)} is not in [0, 1)`)
  return v
}

const isObject = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function'

/** `{service, operation?, readonly?, method?}`: only these fields are read, as in the native addon. */
function wireOperation(o, w) {
  if (o.service !== undefined) w.service = str('service', o.service)
  if (o.operation !== undefined) w.operation = str('operation', o.operation)
  if (o.readonly !== undefined && o.readonly !== null) w.readonly = bool('readonly', o.readonly)
  if (o.method !== undefined) w.method = str('method', o.method)
  return w
}

/** A camelCase request → the wire form (snake_case, `*_ms`). */
function wireRequest(r) {
  if (!isObject(r)) throw invalidType('request', 'an object', r)
  const w = wireOperation(r, {})
  try {
    w.timeout_ms = millis('timeoutMs', r.timeoutMs)
    w.elapsed_ms = r.elapsedMs === undefined ? 0 : millis('elapsedMs', r.elapsedMs)
    w.attempts = r.attempts === undefined ? 0 : int('attempts', r.attempts)
    if (r.idempotent != null) w.idempotent = bool('idempotent', r.idempotent)
    if (r.strategy != null) w.strategy = str('strategy', r.strategy)
    if (r.random != null) w.random = draw('random', r.random)
    if (r.previousDelayMs != null) w.previous_delay_ms = millis('previousDelayMs', r.previousDelayMs)
    const pr = r.previousReasons
    if (pr != null) {
      if (!Array.isArray(pr)) throw invalidType('previousReasons', 'an array of reason names', pr)
      w.previous_reasons = pr.map((x, i) => str(`previousReasons[${i}]`, x))
    }
  } catch (e) {
    // The native addon reads the operation first: an error of the operation comes before this one.
    call('is_idempotent', wireOperation(r, {}), apiField)
    throw e
  }
  return w
}

/** The wire request's fields in the order the native package writes the camelCase object. */
const REQUEST_KEYS = ['service', 'operation', 'readonly', 'method', 'attempts', 'elapsed_ms', 'timeout_ms',
  'idempotent', 'strategy', 'random', 'previous_delay_ms', 'previous_reasons']

function requestObject(w) {
  const r = {}
  for (const k of REQUEST_KEYS) if (w[k] !== undefined) r[camel(k)] = k.endsWith('_ms') ? wireMillis(w[k]) : w[k]
  return r
}

// ---- reasons, operations, errors -------------------------------------------------------------------

const REASON_ROWS = JSON.parse(wasm.reasonTable())

/** The RFC 0049 reasons, name → name (frozen). */
const RetryReason = Object.freeze(nullProto(REASON_ROWS.map((r) => [r.name, r.name])))

const REASON_FLAGS = nullProto(
  REASON_ROWS.map((r) => [
    r.name,
    Object.freeze({ name: r.name, allowsNonIdempotentRetry: r.allows_non_idempotent_retry, alwaysRetry: r.always_retry }),
  ]),
)
const ALIASES = new Map() // alias → canonical name, as the core answered

/** The reason's RFC table row: `{name, allowsNonIdempotentRetry, alwaysRetry}`. */
function reasonFlags(reason) {
  const row = typeof reason === 'string' ? (REASON_FLAGS[reason] ?? REASON_FLAGS[ALIASES.get(reason)]) : undefined
  if (row !== undefined) return row
  const { name } = call('reason_flags', { reason: str('reason', reason) })
  ALIASES.set(reason, name)
  return REASON_FLAGS[name]
}

/** The canonical name of a reason (aliases accepted); throws `unknown_reason`. */
const parseReason = (reason) => reasonFlags(reason).name
/** Whether a non-idempotent request may be retried for this reason. */
const allowsNonIdempotentRetry = (reason) => reasonFlags(reason).allowsNonIdempotentRetry
/** Whether this reason is retried regardless of the strategy. */
const alwaysRetry = (reason) => reasonFlags(reason).alwaysRetry

/** Whether RFC 0049's idempotent-operation list calls this operation idempotent. */
function isIdempotent(operation) {
  if (!isObject(operation)) throw invalidType('operation', 'an object', operation)
  return call('is_idempotent', wireOperation(operation, {}), apiField).idempotent
}

/** The stable error codes, shared by every language, and the check for errors that carry one. */
const { ERROR_CODES, isRetryPolicyError } = errorCodes(JSON.parse(wasm.errorCodes()))

// ---- policies and error maps ---------------------------------------------------------------------

const POLICY = Symbol('retrypolicy.policy')
const ERROR_MAP = Symbol('retrypolicy.errorMap')

/** The whole retry configuration, parsed and validated by the core; immutable. */
class Policy {
  /** A policy from its JSON document (text or object, snake_case as in the README); none is the RFC default. */
  constructor(document) {
    const text = document === undefined ? '{}' : documentText(document, 'policy')
    Object.defineProperty(this, POLICY, { value: call('parse_policy', { json: text }).policy })
    Object.freeze(this)
  }

  /** Same as `new Policy(document)`. */
  static fromJson(document) {
    return new Policy(document)
  }

  /** The normalized document as JSON text (every field present). */
  toJson() {
    return JSON.stringify(this[POLICY])
  }

  /** The normalized document as an object (what `JSON.stringify` writes). */
  toJSON() {
    return JSON.parse(this.toJson())
  }
}

const DEFAULT_POLICY = new Policy()[POLICY]

function policyDoc(policy) {
  if (policy === undefined || policy === null) return undefined
  const doc = policy[POLICY]
  if (doc === undefined) throw typedError('invalid_type', 'policy', 'expected a Policy (new Policy(document))')
  return doc
}

/** A KV error map (RFC 0013) as the server sent it, parsed once; immutable. */
class ErrorMap {
  /** Parses the server's error map document (text or object). */
  constructor(document) {
    const text = jsonDocument(documentText(document, 'errorMap'))
    const doc = JSON.parse(text)
    // classify_kv reads a null map as none: the document itself must not be null.
    if (doc === null) throw typedError('invalid_type', '(document)', 'invalid type: null, expected struct ErrorMap')
    // Read by the core as classify_kv reads it, so its errors name the map's own fields.
    call('classify_kv', `{"operation":"get","status":0,"error_map":${text}}`, within('error_map'))
    Object.defineProperty(this, ERROR_MAP, { value: doc })
    Object.freeze(this)
  }
}

function errorMapDoc(map) {
  if (map === undefined || map === null) return undefined
  return (map instanceof ErrorMap ? map : new ErrorMap(map))[ERROR_MAP]
}

// ---- decisions ------------------------------------------------------------------------------------

function makeDecision(w) {
  if (w.action === 'retry') {
    return Object.freeze({
      action: 'retry',
      delayMs: wireMillis(w.delay_ms),
      capped: w.capped,
      thenCancel: w.then_cancel,
      reason: w.reason,
      rule: w.rule,
      section: w.section,
      attempts: w.attempts,
      idempotent: w.idempotent,
    })
  }
  return Object.freeze({
    action: 'no_retry',
    cause: w.cause,
    reason: w.reason,
    rule: w.rule,
    section: w.section,
    attempts: w.attempts,
    idempotent: w.idempotent,
  })
}

// Decisions are immutable values, so equal ones are shared, as in the native package: one per
// outcome and attempt count below 64, kept while its delay stays the same.
const INTERNED = new Map()
const INTERN_ATTEMPTS = 64

/** A decision in the core's JSON form → the frozen camelCase decision. */
function decision(w) {
  if (w.attempts >= INTERN_ATTEMPTS || typeof w.delay_ms === 'string') return makeDecision(w)
  const key = `${w.action} ${w.reason} ${w.rule} ${w.cause} ${w.capped} ${w.then_cancel} ${w.idempotent} ${w.attempts}`
  const hit = INTERNED.get(key)
  if (hit !== undefined && (hit.action !== 'retry' || hit.delayMs === w.delay_ms)) return hit
  const d = makeDecision(w)
  INTERNED.set(key, d)
  return d
}

/**
 * A decision object → `[its JSON form, a deferred error]`. The core reads the decision back and
 * rejects what it did not write; as in the native package, that check comes before the one of
 * `delayMs` and `attempts`, whose error is therefore returned to throw after the call.
 */
function wireDecision(d) {
  let deferred
  const number = (convert) => {
    try {
      return convert()
    } catch (e) {
      deferred = e
      return 0
    }
  }
  const retry = d.action === 'retry'
  const doc = {
    action: retry ? 'retry' : 'no_retry',
    delay_ms: retry ? number(() => millis('delayMs', d.delayMs)) : 0,
    capped: retry && Boolean(d.capped),
    then_cancel: retry && Boolean(d.thenCancel),
    reason: d.reason,
    cause: retry ? undefined : d.cause,
    rule: d.rule,
    attempts: d.attempts === undefined ? 0 : number(() => int('attempts', d.attempts)),
    idempotent: Boolean(d.idempotent),
  }
  return [doc, deferred]
}

/** Calls `fn` with `d`'s JSON form as `decision`; a decision the core cannot read is `invalid_type` `decision`. */
function callWithDecision(fn, input, d) {
  const [decisionDoc, deferred] = wireDecision(d)
  let out
  try {
    out = call(fn, { ...input, decision: decisionDoc }, apiField)
  } catch (e) {
    if (typeof e.field === 'string' && e.field.startsWith('decision')) {
      throw invalidType('decision', 'a decision returned by retrypolicy', d)
    }
    throw e
  }
  if (deferred !== undefined) throw deferred
  return out
}

/** The core's one-line log message for a decision (RFC 0049 asks to log every retry and non-retry). */
function formatDecision(d) {
  return callWithDecision('format_decision', {}, d).message
}

/** The core's one-sentence explanation of `decision` for `request`, naming the rule and spec section. */
function explain(request, d) {
  return callWithDecision('explain_decision', { request: wireRequest(request) }, d).sentence
}

// ---- decide ----------------------------------------------------------------------------------------

/** The input every decide step reads: `{request, reason, policy?}`. */
function decideInput(request, reason, policy) {
  return { request: wireRequest(request), reason: str('reason', reason), policy: policyDoc(policy) }
}

/**
 * Decides whether and when to retry `request` after `reason`, under `policy` (RFC default when
 * omitted) and an optional host `strategy` (a function or an object with `retryAfter`).
 */
function decide(request, reason, policy, strategy) {
  if (strategy !== undefined && strategy !== null) return decideWithStrategy(request, reason, policy, strategy)
  return decision(call('decide', decideInput(request, reason, policy), apiField))
}

function decideWithStrategy(request, reason, policy, strategy) {
  const builtin = (kind, hostPolicy) => {
    const input = { ...decideInput(request, reason, policy), host_strategy: kind, host_policy: policyDoc(hostPolicy) }
    return decision(call('decide_with', input, apiField))
  }
  if (strategy instanceof BestEffort && Object.getPrototypeOf(strategy) === BestEffort.prototype) {
    return builtin('best_effort', strategy.policy)
  }
  if (strategy instanceof FailFast && Object.getPrototypeOf(strategy) === FailFast.prototype) {
    return builtin('fail_fast', undefined)
  }
  const isFunction = typeof strategy === 'function'
  if (!isFunction && !(typeof strategy === 'object' && typeof strategy.retryAfter === 'function')) {
    throw invalidType('strategy', 'a function or an object with retryAfter(request, reason)', strategy)
  }
  // The core's orchestrator split: the steps before the strategy, then the host's answer.
  const input = decideInput(request, reason, policy)
  const before = call('decide_before_strategy', input, apiField).decision
  if (before !== null) return decision(before)
  const name = parseReason(reason)
  // User code: whatever it throws propagates unchanged.
  const answer = isFunction ? strategy(request, name) : strategy.retryAfter(request, name)
  const retryAfterMs = answer === undefined || answer === null ? null : millis('retryAfter', answer)
  const after = { request: input.request, reason: input.reason, retry_after_ms: retryAfterMs }
  return decision(call('decide_after_strategy', after, apiField))
}

/** Best effort's answer for `request` and `reason` under `policy`: a delay in ms, or null (do not retry). */
function bestEffortDelay(request, reason, policy) {
  const delay = call('best_effort_delay', decideInput(request, reason, policy), apiField).delay_ms
  return delay === null ? null : wireMillis(delay)
}

/** RFC 0049's default strategy as an object; subclass it and override `retryAfter` to change one case. */
class BestEffort {
  /** Best effort with `policy`'s backoff and jitter (the RFC default when omitted). */
  constructor(policy) {
    Object.defineProperty(this, 'policy', { value: policy ?? null, enumerable: true })
  }

  /** A delay in ms, or null for "do not retry". */
  retryAfter(request, reason) {
    return bestEffortDelay(request, reason, this.policy ?? undefined)
  }
}

/** RFC 0049's (internal) fail-fast strategy: never retries; always-retry reasons still are. */
class FailFast {
  /** Always null. */
  retryAfter(_request, _reason) {
    return null
  }
}

/**
 * Decides many requests: `reasons` is one reason for all or one per request. Returns the same
 * decisions as calling `decide` for each; an error names the request (`requests[1].elapsedMs`).
 */
function decideMany(requests, reasons, policy) {
  if (!Array.isArray(requests)) throw invalidType('requests', 'an array of requests', requests)
  policyDoc(policy)
  const single = !Array.isArray(reasons)
  return requests.map((r, i) => {
    try {
      return decide(r, single ? reasons : reasons[i], policy)
    } catch (e) {
      if (isRetryPolicyError(e)) {
        e.message = `requests[${i}].${e.message}`
        e.field = `requests[${i}].${e.field}`
      }
      throw e
    }
  })
}

// ---- classification -------------------------------------------------------------------------------

const CLASSES = new Map()

/** The core's classification → a frozen `{reason, rule, section, surfaceAs}`, shared when equal. */
function classification(c) {
  const surfaceAs = c.surface_as ?? null
  const key = `${c.reason} ${c.rule} ${c.section} ${surfaceAs}`
  let x = CLASSES.get(key)
  if (x === undefined) CLASSES.set(key, (x = Object.freeze({ reason: c.reason ?? null, rule: c.rule, section: c.section, surfaceAs })))
  return x
}

const compat = (policy) => policyDoc(policy)?.compat
const optText = (field, v) => (v === undefined || v === null ? '' : str(field, v))

/** Classifies a KV response status (a number or a "0x.." string) for a KV operation name. */
function classifyKv(operation, status, opts) {
  const { errorMap, policy } = options(opts)
  const map = errorMapDoc(errorMap)
  const op = str('operation', operation)
  // A string is the core's to parse ("0xa2"); a number's range is too (JSON carries NaN as text).
  if (typeof status !== 'string' && typeof status !== 'number') throw invalidType('status', 'a number', status)
  return classification(call('classify_kv', { operation: op, status, error_map: map, compat: compat(policy) }))
}

/** Classifies the first error of a query response. */
function classifyQuery(code, message, opts) {
  const { policy } = options(opts)
  const input = { code: int('code', code), message: optText('message', message), compat: compat(policy) }
  return classification(call('classify_query', input))
}

/** Classifies the first error of an analytics response. */
function classifyAnalytics(code) {
  return classification(call('classify_analytics', { code: int('code', code) }))
}

/** Classifies a search response's HTTP status. */
function classifySearch(httpStatus) {
  return classification(call('classify_search', { http_status: int('httpStatus', httpStatus, 65535, '0..=65535') }))
}

/** Classifies a views response from its HTTP status and body text. */
function classifyViews(httpStatus, body) {
  const input = { http_status: int('httpStatus', httpStatus, 65535, '0..=65535'), body: optText('body', body) }
  return classification(call('classify_views', input))
}

/** Names the reason for a failure the SDK observed itself ("socket_closed_while_in_flight", ...). */
function classifyDispatch(failure) {
  return classification(call('classify_dispatch', { failure: str('failure', failure) }))
}

// ---- backoff, wire form, simulation ------------------------------------------------------------------

/** RFC 0049's controlled backoff (always-retry reasons) in ms after `attempt` retries. */
function controlledBackoffMs(attempt) {
  return wireMillis(call('controlled_backoff', { attempt: int('attempt', attempt) }).delay_ms)
}

/** The policy's best-effort delay in ms after `attempt` retries; jitter needs a draw in [0, 1). */
function backoffDelayMs(policy, attempt, random, previousDelayMs) {
  const p = policyDoc(policy) ?? DEFAULT_POLICY
  const input = { backoff: p.backoff, jitter: p.jitter, attempt: int('attempt', attempt) }
  if (random !== undefined && random !== null) input.random = draw('random', random)
  if (previousDelayMs !== undefined && previousDelayMs !== null) {
    input.previous_delay_ms = millis('previousDelayMs', previousDelayMs)
  }
  return wireMillis(call('backoff', input, apiField).delay_ms)
}

/** A request from the wire form (snake_case, `*_ms` numbers or decimal strings), as a camelCase object. */
function requestFromJson(document) {
  const text = jsonDocument(documentText(document, 'request'))
  // The text goes to the core as it is, so integers of any size stay exact.
  return requestObject(call('parse_request', `{"request":${text}}`, within('request')).request)
}

/** A camelCase request in the wire form, as JSON text. */
function requestToJson(request) {
  return call('parse_request', { request: wireRequest(request) }, apiField).json
}

/**
 * Replays a whole retry schedule: `{request, outcomes, latencyMs, repeatLast?, draws?, policy?}`
 * → `{steps, ending, totalMs, waitedMs}`, each step with the decision taken after it.
 */
function simulate(scenario) {
  if (typeof scenario !== 'object' || scenario === null) throw invalidType('scenario', 'a scenario object', scenario)
  const { request, outcomes, repeatLast, latencyMs, draws, policy } = scenario
  const input = { request: wireRequest(request) }
  if (!Array.isArray(outcomes)) throw invalidType('outcomes', 'an array of reason names or null', outcomes)
  input.outcomes = outcomes.map((o, i) => (o === undefined || o === null ? null : str(`outcomes[${i}]`, o)))
  if (repeatLast !== undefined && repeatLast !== null) input.repeat_last = bool('repeatLast', repeatLast)
  input.latency_ms = millis('latencyMs', latencyMs)
  if (draws !== undefined && draws !== null) {
    if (!Array.isArray(draws)) throw invalidType('draws', 'an array of numbers in [0, 1)', draws)
    input.draws = draws.map((x, i) => draw(`draws[${i}]`, x))
  }
  input.policy = policyDoc(policy)
  return timelineFromWire(call('simulate', input, apiField), decision)
}

// ---- MongoDB and HTTP (the core's JSON API, as in the native package), logging --------------------

/** MongoDB and HTTP retry rules, as thin calls of the core's JSON API. */
const { mongodb, http } = jsonApi(callText)

/**
 * `decide` with a fixed policy and strategy that reports every decision: to `onDecision` and as a
 * `'decision'` event, each with one record (RFC 0049 asks for every retry and non-retry to be logged).
 */
const Orchestrator = orchestratorClass(decide, formatDecision)

/** The engine's version (the workspace version). */
const version = wasm.version()

export {
  version,
  RetryReason,
  ERROR_CODES,
  isRetryPolicyError,
  parseReason,
  reasonFlags,
  allowsNonIdempotentRetry,
  alwaysRetry,
  isIdempotent,
  Policy,
  ErrorMap,
  decide,
  decideMany,
  bestEffortDelay,
  BestEffort,
  FailFast,
  formatDecision,
  explain,
  classifyKv,
  classifyQuery,
  classifyAnalytics,
  classifySearch,
  classifyViews,
  classifyDispatch,
  controlledBackoffMs,
  backoffDelayMs,
  requestFromJson,
  requestToJson,
  simulate,
  mongodb,
  http,
  Orchestrator,
}

// The default export is this module's own namespace, so the name list above is written once.
export default api

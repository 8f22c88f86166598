'use strict'
// The JSON side of the API: documents as the core reads them, and the MongoDB and HTTP rules as
// thin calls of the core's JSON API by function name. Those take and return camelCase objects; the
// wire stays snake_case (spec-fixtures/README.md), converted here by two generic functions
// (`toWire` in, `fromWire` out) that leave the caller's own data (AS_IS) untouched.

const { typedError, invalidType, renamed } = require('./errors.js')

/** The deepest nesting of objects and arrays a document may have (serde_json's own recursion limit). */
const MAX_DEPTH = 128

/**
 * Throws a typed error for a value JSON cannot carry as given, naming its path under `field`:
 * NaN or ±Infinity (`out_of_range`), a function or a Symbol (`invalid_type`), unless `values` is
 * false; always a cycle (`invalid_type`) and nesting deeper than MAX_DEPTH (`out_of_range`), which
 * would otherwise end in a RangeError (call stack) or a TypeError. `JSON.stringify` would write null
 * or drop the key, and the core would then read a default in its place. `root` names the whole. A
 * value with `toJSON` is checked as what it returns (called with `key`, as `JSON.stringify` calls it).
 */
function checkJson(v, field, root = 'document', values = true, ancestors = new Set(), key = '') {
  if (typeof v === 'object' && v !== null && typeof v.toJSON === 'function') v = v.toJSON(key)
  if (values && typeof v === 'number' && !Number.isFinite(v)) throw typedError('out_of_range', field || root, `${v} is out of range: expected a finite number`)
  if (values && (typeof v === 'function' || typeof v === 'symbol')) throw invalidType(field || root, 'a JSON value', v)
  if (typeof v !== 'object' || v === null) return
  if (ancestors.has(v)) throw typedError('invalid_type', field || root, 'expected a JSON value, got a cyclic object (it contains itself)')
  if (ancestors.size >= MAX_DEPTH) throw typedError('out_of_range', field || root, `nested deeper than ${MAX_DEPTH} levels: expected at most ${MAX_DEPTH}`)
  ancestors.add(v)
  for (const [k, x] of Object.entries(v)) checkJson(x, Array.isArray(v) ? `${field}[${k}]` : field ? `${field}.${k}` : k, root, values, ancestors, k)
  ancestors.delete(v)
}

/** Throws for a cycle or nesting past MAX_DEPTH only (the core refuses the values by field itself). */
const checkShape = (v, field) => checkJson(v, field, field || 'document', false)

/**
 * A JSON document (text, or an object to serialize) as text; milliseconds past 2^53 − 1 go as
 * decimal strings. Errors inside it name `path.<key>` (`path` empty: the bare key).
 */
function documentText(doc, field, path = '') {
  if (typeof doc === 'string') return doc
  if (typeof doc !== 'object' || doc === null) throw invalidType(field, 'a JSON document (string or object)', doc)
  checkJson(doc, path, field)
  return JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
}

/** An options object: `undefined`/`null` are none; anything else but an object is `invalid_type` naming `field`. */
function options(o, field = 'options') {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalidType(field, 'an options object', o)
  return o ?? {}
}

/** What `f` returns; the core's errors about the call's camelCase arguments renamed camelCase. */
function camelCall(f) {
  try {
    return f()
  } catch (e) {
    throw e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string' ? renamed(e, camelPath(e.field)) : e
  }
}

/** A camelCase argument object (`what` it must be) as JSON text in the wire form, its errors naming `field` and the caller's keys. */
function wireText(v, field, what) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidType(field, what, v)
  const wire = toWire(v, field)
  return camelCall(() => documentText(wire, field, field))
}

/** A snapshot argument as JSON text: `restore` needs one (none would silently give a fresh object). */
function snapshotText(state) {
  if (state === undefined || state === null) throw typedError('missing_field', 'state', `missing field: restore needs a snapshot, got ${state}`)
  return documentText(state, 'state', 'state')
}

/**
 * JSON text that keeps NaN and ±Infinity as text (JSON would write null), so the core rejects them
 * by field. With `wellFormed`, a lone surrogate in a string is U+FFFD, as napi and wasm-bindgen
 * read a string argument (JSON would write an escape the core's reader refuses as malformed,
 * naming no field); the caller's own data (a document, a MongoDB filter) is never rewritten.
 */
function jsonText(doc, wellFormed = false) {
  return JSON.stringify(doc, (_k, v) =>
    typeof v === 'bigint'
      ? v.toString()
      : typeof v === 'number' && !Number.isFinite(v)
        ? String(v)
        : wellFormed && typeof v === 'string' && !v.isWellFormed()
          ? v.toWellFormed()
          : v,
  )
}

/** Wire milliseconds (a number, or a decimal string past 2^53 − 1; a list of them) as the API returns them. */
function wireMillis(v) {
  return typeof v === 'string' ? BigInt(v) : Array.isArray(v) ? v.map(wireMillis) : v
}

/** A snake_case name in camelCase. */
const camel = (key) => key.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())

/** A camelCase name in snake_case. */
const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * The wire keys whose values the MongoDB and HTTP functions take and return as they are, keys
 * unconverted: the caller's own data (filters, updates, documents, `_id` values, index keys and
 * values, the pending token, the cleanup pipeline), and `backoff`, a piece of the policy document,
 * which is snake_case wherever Node takes it (`new Policy(...)`, `retryFetch`'s `backoff`).
 */
const AS_IS = new Set(['filter', 'update', 'documents', 'document_id', 'key_pattern', 'key_value', 'token',
  'cleanup_pipeline', 'backoff'])

/**
 * A wire document (a decision, timeline, request) as the API returns it: camelCase keys, `*_ms`
 * values through wireMillis, frozen unless `freeze` is false; the values of `asIs` keys as they are.
 */
function fromWire(v, freeze = true, asIs = undefined) {
  if (v === null || typeof v !== 'object') return v
  const value = (k, x) => (asIs?.has(k) ? x : k.endsWith('_ms') ? wireMillis(x) : fromWire(x, freeze, asIs))
  const out = Array.isArray(v)
    ? v.map((x) => fromWire(x, freeze, asIs))
    : Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), value(k, x)]))
  return freeze ? Object.freeze(out) : out
}

/** A run's statistics as a backend gives them (the core's RunStats as JSON text) → camelCase, frozen. */
const runStats = (text) => fromWire(JSON.parse(text))

/** `v` frozen with every object it holds. */
function deepFrozen(v) {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v
  for (const x of Object.values(v)) deepFrozen(x)
  return Object.freeze(v)
}

/**
 * `step` frozen with everything it holds (its decision, verdicts, breaker changes): the wasm
 * backend hands steps over frozen, the addon not, and a run's steps are the same on both. The
 * verdicts and changes are flat; only a decision may nest.
 */
function frozenStep(step) {
  if (Object.isFrozen(step)) return step
  const { decision, budget, breaker, breakerChanges } = step
  deepFrozen(decision)
  if (budget !== null) Object.freeze(budget)
  if (breaker !== null) Object.freeze(breaker)
  for (const c of breakerChanges) Object.freeze(c)
  Object.freeze(breakerChanges)
  return Object.freeze(step)
}

/**
 * A camelCase argument in the wire form: keys in snake_case, AS_IS values as they are. A key
 * holding `_` is refused (`unknown_field`, named at `path`): the API's keys are camelCase, and a
 * snake_case one would otherwise pass unnoticed.
 */
function toWire(v, path) {
  checkShape(v, path)
  return wireOf(v, path)
}

/** toWire past its check. */
function wireOf(v, path) {
  if (v === null || typeof v !== 'object' || typeof v.toJSON === 'function') return v
  if (Array.isArray(v)) return v.map((x, i) => wireOf(x, `${path}[${i}]`))
  const entry = ([k, x]) => {
    const at = path ? `${path}.${k}` : k
    if (k.includes('_')) throw typedError('unknown_field', at, `unknown field: keys are camelCase (${camel(k)})`)
    return [snake(k), AS_IS.has(snake(k)) ? x : wireOf(x, at)]
  }
  return Object.fromEntries(Object.entries(v).map(entry))
}

/** A wire error path in camelCase up to the first AS_IS key, whose contents keep the caller's names. */
function camelPath(field) {
  const parts = field.split('.')
  const end = parts.findIndex((p) => AS_IS.has(p.replace(/\[.*$/, '')))
  return end < 0 ? camel(field) : [...parts.slice(0, end + 1).map(camel), ...parts.slice(end + 1)].join('.')
}

// Each method's JSON-API function and the names its arguments take in the input document, in
// order (undefined ones are left out); `null` names: the one argument is the whole document.
// Each method is documented in ./mongodb.d.ts and ./http.d.ts.
const MONGODB = {
  classifyError: ['mongodb_classify_error', 'error'],
  retryableWriteError: ['mongodb_retryable_write_error', 'error', 'server', 'retry_writes'],
  retryableReadError: ['mongodb_retryable_read_error', 'error'],
  surfacedError: ['mongodb_surfaced_error', 'kind', 'errors'],
  eligibility: ['mongodb_eligibility', 'operation', 'retry_writes', 'retry_reads'],
  decide: ['mongodb_decide', 'request', 'error'],
  overloadBackoff: ['mongodb_overload_backoff', 'attempt', 'random', 'base_backoff_ms'],
  transactionLabels: ['mongodb_transaction_labels', 'command', 'error'],
  transactionBackoff: ['mongodb_transaction_backoff', 'transaction_attempt', 'random'],
  withTransaction: ['mongodb_with_transaction', 'events', 'timeout_ms'],
  transactionStep: ['mongodb_transaction_step', 'state', 'event'],
  idempotency: ['mongodb_idempotency', null],
  duplicateKey: ['mongodb_duplicate_key', 'document_id', 'error'],
  pendingTokenRewrite: ['mongodb_pending_token_rewrite', 'filter', 'update', 'token', 'upsert', 'pending_field'],
}
const HTTP = {
  classify: ['http_classify', 'status', 'network_error'],
  retryAfter: ['http_retry_after', 'value', 'now_unix_ms'],
  parseDate: ['http_date', 'value', 'now_unix_ms'],
  nextStep: ['http_next', 'loop', 'state', 'attempt', 'now_unix_ms', 'random', 'budget_verdict'],
}

/**
 * The `mongodb` and `http` namespaces, and `call(function, document, request?, policyHandle?)`, over
 * `callJson(function, text, request?, policyHandle?)` → text (the addon's, or the wasm module's call).
 */
function jsonApi(callJson) {
  /** Calls a JSON-API function on a document; the addon adds the request and the policy handle when given. */
  const call = (fn, doc, request, handle) => (checkShape(doc, ''), JSON.parse(callJson(fn, jsonText(doc), request, handle)))
  /** The wire input of a method: its arguments under their wire names, each through toWire. */
  const input = (names, args) =>
    names[0] === null ? toWire(args[0], '') : Object.fromEntries(names.map((n, i) => [n, AS_IS.has(n) ? args[i] : toWire(args[i], camel(n))]))
  /** A method: camelCase in, camelCase out (frozen), errors naming camelCase fields. */
  const method = ([fn, ...names]) => (...args) => {
    const doc = input(names, args) // its errors name the keys as given
    try {
      return fromWire(call(fn, doc), true, AS_IS)
    } catch (e) {
      if (e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string') renamed(e, camelPath(e.field))
      throw e
    }
  }
  const namespace = (table) => Object.freeze(Object.fromEntries(Object.entries(table).map(([m, spec]) => [m, method(spec)])))
  return { mongodb: namespace(MONGODB), http: namespace(HTTP), call }
}

/** The arguments of an object's call that are numbers (besides milliseconds, the `_ms` keys). */
const NUMBERS = new Set(['attempts', 'max_attempts_cap', 'random'])

/**
 * Throws a typed error for an argument of an object's call that the API does not take (README,
 * "Numbers are checked, never coerced"), naming it camelCase under `path`: an argument is a
 * number (`NUMBERS` and milliseconds), a bigint (milliseconds only: no string), a string or a
 * boolean; a budget's `event` is an object of those. NaN and ±Infinity are refused by the code
 * their field's kind takes, milliseconds past 2^53 − 1 unless given as a bigint. The core checks
 * the rest (names, ranges, which type).
 */
function checkArgs(args, path = '') {
  for (const key in args) {
    const v = args[key]
    if (v === undefined || v === null || typeof v === 'boolean') continue
    const ms = key.endsWith('_ms')
    if (typeof v === 'string' ? !ms : typeof v === 'bigint' ? ms : typeof v === 'number' && Number.isFinite(v) && !(ms && v > Number.MAX_SAFE_INTEGER)) continue
    const field = path + camel(key) // named only for an error: camel costs a regular expression
    const number = ms || NUMBERS.has(key)
    if (ms && typeof v === 'string') throw typedError('invalid_duration', field, `invalid duration ${JSON.stringify(v)}: expected a number or a bigint of milliseconds`)
    if (key === 'event' && path === '' && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      checkArgs(v, `${field}.`)
    } else if (typeof v !== 'number' || !number) {
      throw invalidType(field, ms ? 'a number or a bigint of milliseconds' : number ? 'a number' : 'a string or a boolean', v)
    } else if (!Number.isFinite(v)) {
      const code = key === 'random' ? 'invalid_random' : ms ? 'invalid_duration' : 'out_of_range'
      throw typedError(code, field, `${v} is out of range: expected a finite number`)
    } else {
      throw typedError('invalid_duration', field, `invalid duration ${v}: expected at most 2^53-1 (a bigint past it)`)
    }
  }
}

/**
 * The backend's objects (`new ObjectHandle(kind, argsText)`, `invoke(target, method, argsText,
 * lent)`; the wire crate's objects.rs) with arguments as an object (documents already JSON text,
 * undefined left out; checked by `checkArgs`) and answers parsed (a new object comes as it is).
 * An error naming an argument names it camelCase (`now_ms`: `nowMs`); inside a document, as the
 * document does.
 */
function objectsOf({ ObjectHandle, invoke }) {
  const named = (f) => {
    try {
      return f()
    } catch (e) {
      const field = e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string' ? e.field.replace(/^\w+/, camel) : undefined
      throw field === undefined || field === e.field ? e : renamed(e, field)
    }
  }
  /** The arguments as JSON text, checked. */
  const text = (args) => (checkArgs(args), jsonText(args, true))
  return {
    /** A new object of `kind` from `args`. */
    open: (kind, args) => named(() => new ObjectHandle(kind, text(args))),
    /** `method` of `target` (undefined: a function whose target is optional), `lent` the budget lent to the call. */
    call: (target, method, args = {}, lent = undefined) =>
      named(() => {
        const answer = invoke(target, method, text(args), lent)
        return typeof answer === 'string' ? JSON.parse(answer) : answer
      }),
  }
}

module.exports = { documentText, options, camelCall, wireText, snapshotText, wireMillis, camel, snake, fromWire, runStats, frozenStep, toWire, camelPath, jsonApi, objectsOf }

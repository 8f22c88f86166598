'use strict'
// The JSON side of the API: documents as the core reads them, and the MongoDB and HTTP rules,
// which keep the shared JSON shapes of spec-fixtures/README.md (snake_case keys, as in every
// language; MongoDB filters and updates pass through untouched): thin calls of the core's JSON
// API by function name.

const { typedError, invalidType } = require('./errors.js')

/**
 * Throws a typed error for a value JSON cannot carry as given, naming its path under `field`:
 * NaN or ±Infinity (`out_of_range`), a function or a Symbol (`invalid_type`). `JSON.stringify` would
 * write null or drop the key, and the core would then read a default in its place.
 */
function checkJson(v, field) {
  if (typeof v === 'number' && !Number.isFinite(v)) throw typedError('out_of_range', field, `${v} is out of range: expected a finite number`)
  if (typeof v === 'function' || typeof v === 'symbol') throw invalidType(field, 'a JSON value', v)
  if (typeof v !== 'object' || v === null || typeof v.toJSON === 'function') return
  for (const [k, x] of Object.entries(v)) checkJson(x, Array.isArray(v) ? `${field}[${k}]` : field ? `${field}.${k}` : k)
}

/** A JSON document (text, or an object to serialize) as text; milliseconds past 2^53 − 1 go as decimal strings. */
function documentText(doc, field) {
  if (typeof doc === 'string') return doc
  if (typeof doc !== 'object' || doc === null) throw invalidType(field, 'a JSON document (string or object)', doc)
  checkJson(doc, '')
  return JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
}

/** JSON text that keeps NaN and ±Infinity as text (JSON would write null), so the core rejects them by field. */
function jsonText(doc) {
  return JSON.stringify(doc, (_k, v) =>
    typeof v === 'bigint' ? v.toString() : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
  )
}

/** Wire milliseconds (a number, or a decimal string past 2^53 − 1) as the API returns them. */
function wireMillis(v) {
  return typeof v === 'string' ? BigInt(v) : v
}

/** A snake_case name in camelCase. */
const camel = (key) => key.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())

/**
 * A wire document (a decision, timeline, request) as the API returns it: camelCase keys, `*_ms`
 * values through wireMillis, frozen unless `freeze` is false.
 */
function fromWire(v, freeze = true) {
  if (v === null || typeof v !== 'object') return v
  const entry = ([k, x]) => [camel(k), k.endsWith('_ms') ? wireMillis(x) : fromWire(x, freeze)]
  const out = Array.isArray(v) ? v.map((x) => fromWire(x, freeze)) : Object.fromEntries(Object.entries(v).map(entry))
  return freeze ? Object.freeze(out) : out
}

// Each method's JSON-API function and the names its arguments take in the input document, in
// order (undefined ones are left out); `null` names: the one argument is the whole document.
// Each method is documented in ./retrypolicy.d.ts.
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
  nextStep: ['http_next', 'loop', 'state', 'attempt', 'now_unix_ms', 'random'],
}

/** The `mongodb` and `http` namespaces, and `call(function, document, request?, policyHandle?)`, over the JSON API. */
function jsonApi(callJson) {
  /** Calls a JSON-API function on a document; the addon adds the request and the policy handle when given. */
  const call = (fn, doc, request, handle) => JSON.parse(callJson(fn, jsonText(doc), request, handle))
  const namespace = (table) =>
    Object.freeze(
      Object.fromEntries(
        Object.entries(table).map(([method, [fn, ...names]]) => [
          method,
          (...args) => call(fn, names[0] === null ? args[0] : Object.fromEntries(names.map((n, i) => [n, args[i]]))),
        ]),
      ),
    )
  return { mongodb: namespace(MONGODB), http: namespace(HTTP), call }
}

module.exports = { documentText, wireMillis, camel, fromWire, jsonApi }

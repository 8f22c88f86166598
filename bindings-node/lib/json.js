'use strict'
// The JSON side of the API: documents as the core reads them, and the MongoDB and HTTP rules,
// which keep the shared JSON shapes of spec-fixtures/README.md (snake_case keys, as in every
// language; MongoDB filters and updates pass through untouched), so they are thin calls of the
// core's JSON API by function name.

const { invalidType } = require('./errors.js')

/** A JSON document (text, or an object to serialize) as text; milliseconds past 2^53 − 1 go as decimal strings. */
function documentText(doc, field) {
  if (typeof doc === 'string') return doc
  if (typeof doc !== 'object' || doc === null) throw invalidType(field, 'a JSON document (string or object)', doc)
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

/** The `mongodb` and `http` namespaces over `callText(function, inputJsonText) → outputJsonText`. */
function jsonApi(callText) {
  /** Calls a core JSON-API function: `required` as given, `optional` entries omitted when undefined. */
  function call(fn, required, optional = {}) {
    const doc = { ...required }
    for (const [k, v] of Object.entries(optional)) if (v !== undefined) doc[k] = v
    return JSON.parse(callText(fn, jsonText(doc)))
  }

  /** MongoDB retry rules: errors, retryable reads and writes, overload backoff, withTransaction, idempotency. */
  const mongodb = Object.freeze({
    /** Network, command or state-change error, with the code's name, group and retryability. */
    classifyError: (error) => call('mongodb_classify_error', { error }),
    /** Whether a write may be retried after `error` (RetryableWriteError label, pre-4.4 codes). */
    retryableWriteError: (error, server, retryWrites) =>
      call('mongodb_retryable_write_error', { error }, { server, retry_writes: retryWrites }),
    /** Whether a read may be retried after `error`. */
    retryableReadError: (error) => call('mongodb_retryable_read_error', { error }),
    /** Which of the attempts' errors surfaces to the user (the NoWritesPerformed rules). */
    surfacedError: (kind, errors) => call('mongodb_surfaced_error', { kind, errors }),
    /** Whether an operation takes part in retryable writes or reads at all. */
    eligibility: (operation, retryWrites, retryReads) =>
      call('mongodb_eligibility', { operation }, { retry_writes: retryWrites, retry_reads: retryReads }),
    /** Retry once, retry after an overload backoff, or surface: one attempt's decision. */
    decide: (request, error) => call('mongodb_decide', { request, error }),
    /** The client-backpressure backoff for an overload retry. */
    overloadBackoff: (attempt, random, baseBackoffMs) =>
      call('mongodb_overload_backoff', { attempt, random }, { base_backoff_ms: baseBackoffMs }),
    /** The TransientTransactionError / UnknownTransactionCommitResult labels an error carries. */
    transactionLabels: (command, error) => call('mongodb_transaction_labels', { command, error }),
    /** The backoff before retrying a whole transaction. */
    transactionBackoff: (transactionAttempt, random) =>
      call('mongodb_transaction_backoff', { transaction_attempt: transactionAttempt, random }),
    /** Replays withTransaction over a list of events: the actions, the last one, backoffs and final state. */
    withTransaction: (events, timeoutMs) => call('mongodb_with_transaction', { events }, { timeout_ms: timeoutMs }),
    /** One step of the withTransaction state machine: (state, event) → {state, action}. */
    transactionStep: (state, event) => call('mongodb_transaction_step', { state, event }),
    /** Seed 000's analysis of an operation `{op, filter?, update?, documents?, unique_fields?, upsert?}`. */
    idempotency: (operation) => call('mongodb_idempotency', operation),
    /** Whether a DuplicateKeyError on a retried insert means the first attempt succeeded. */
    duplicateKey: (documentId, error) => call('mongodb_duplicate_key', { document_id: documentId, error }),
    /** Seed 000's two-step pending-token rewrite of a non-idempotent update (step1, step2). */
    pendingTokenRewrite: (filter, update, token, upsert, pendingField) =>
      call('mongodb_pending_token_rewrite', { filter, update, token }, { upsert, pending_field: pendingField }),
  })

  /** HTTP retry rules: status classes, Retry-After, and a bounded retry loop ("now" is passed in). */
  const http = Object.freeze({
    /** Final success, final rejection or transient, for an HTTP status, or a network error when `networkError`. */
    classify: (status, networkError) => call('http_classify', {}, { status, network_error: networkError }),
    /** A Retry-After header (seconds or an HTTP date) as a delay in milliseconds. */
    retryAfter: (value, nowUnixMs) => call('http_retry_after', { value }, { now_unix_ms: nowUnixMs }),
    /** An HTTP-date as Unix milliseconds (an RFC 850 date's two-digit year needs "now"). */
    parseDate: (value, nowUnixMs) => call('http_date', { value }, { now_unix_ms: nowUnixMs }),
    /** What a bounded retry loop does after an attempt: retry after a delay, or stop and why. */
    nextStep: (loop, state, attempt, nowUnixMs, random) =>
      call('http_next', { loop, state, attempt }, { now_unix_ms: nowUnixMs, random }),
  })

  return { mongodb, http }
}

/** The core's timeline (wire form) as the API returns it, each step's decision built by `decision`. */
function timelineFromWire(t, decision) {
  const steps = t.steps.map((s) =>
    Object.freeze({
      attempt: s.attempt,
      sentAtMs: wireMillis(s.sent_at_ms),
      doneAtMs: wireMillis(s.done_at_ms),
      reason: s.reason,
      decision: s.decision === null ? null : decision(s.decision),
    }),
  )
  return Object.freeze({
    steps: Object.freeze(steps),
    ending: t.ending,
    totalMs: wireMillis(t.total_ms),
    waitedMs: wireMillis(t.waited_ms),
  })
}

module.exports = { documentText, wireMillis, jsonApi, timelineFromWire }

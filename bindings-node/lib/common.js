'use strict'
// The backend-independent part of the Node API, shared by the native package (`retrypolicy.js`,
// over the napi addon) and the WebAssembly build's facade (`bindings-wasm/index.mjs`, over the
// core's JSON API): typed argument errors, the JSON text the core reads, the MongoDB and HTTP
// namespaces, simulation timelines and the Orchestrator. Conversion only: no rule lives here.

const { EventEmitter } = require('node:events')

function nullProto(entries) {
  const o = Object.create(null)
  for (const [k, v] of entries) o[k] = v
  return o
}

/** An `Error` shaped like the core's: `code`, `field`, and a message that starts with the field. */
function typedError(code, field, detail) {
  const e = new Error(`${field}: ${detail}`)
  e.code = code
  e.field = field
  return e
}

function invalidType(field, expected, value) {
  const got = value === null ? 'null' : typeof value
  return typedError('invalid_type', field, `expected ${expected}, got ${got}`)
}

/** `ERROR_CODES` (frozen) and `isRetryPolicyError` for the core's list of stable codes. */
function errorCodes(codes) {
  const ERROR_CODES = Object.freeze([...codes])
  const set = new Set(ERROR_CODES)
  /** Whether `e` is an error thrown by retrypolicy (an `Error` whose `code` is a stable code). */
  const isRetryPolicyError = (e) => e instanceof Error && set.has(e.code) && typeof e.field === 'string'
  return { ERROR_CODES, isRetryPolicyError }
}

function options(o) {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalidType('options', 'an options object', o)
  return o ?? {}
}

function documentText(doc, field) {
  if (typeof doc === 'string') return doc
  if (typeof doc !== 'object' || doc === null) throw invalidType(field, 'a JSON document (string or object)', doc)
  // Milliseconds past 2^53 − 1 travel as decimal strings in the JSON form.
  return JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
}

function jsonText(doc) {
  // JSON would write NaN and ±Infinity as null; send them as text so the core rejects them by field.
  return JSON.stringify(doc, (_k, v) =>
    typeof v === 'bigint' ? v.toString() : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
  )
}

/** Wire milliseconds (a number, or a decimal string past 2^53 − 1) as the API returns them. */
function wireMillis(v) {
  return typeof v === 'string' ? BigInt(v) : v
}

// ---- MongoDB and HTTP: the core's JSON API ---------------------------------------------------
// Documents keep the shared JSON shapes of spec-fixtures/README.md (snake_case keys, as in every
// language; MongoDB filter and update documents pass through untouched), so these are thin calls.

/** The `mongodb` and `http` namespaces over `callText(function, inputJsonText) → outputJsonText`. */
function jsonApi(callText) {
  /** Calls a core JSON-API function: `required` as given, `optional` entries omitted when undefined. */
  function callJson(fn, required, optional) {
    const doc = { ...required }
    if (optional !== undefined) {
      for (const [k, v] of Object.entries(optional)) if (v !== undefined) doc[k] = v
    }
    return JSON.parse(callText(fn, jsonText(doc)))
  }

  /** MongoDB retry rules: errors, retryable reads and writes, overload backoff, withTransaction, idempotency. */
  const mongodb = Object.freeze({
    /** Network, command or state-change error, with the code's name, group and retryability. */
    classifyError: (error) => callJson('mongodb_classify_error', { error }),
    /** Whether a write may be retried after `error` (RetryableWriteError label, pre-4.4 codes). */
    retryableWriteError: (error, server, retryWrites) =>
      callJson('mongodb_retryable_write_error', { error }, { server, retry_writes: retryWrites }),
    /** Whether a read may be retried after `error`. */
    retryableReadError: (error) => callJson('mongodb_retryable_read_error', { error }),
    /** Which of the attempts' errors surfaces to the user (the NoWritesPerformed rules). */
    surfacedError: (kind, errors) => callJson('mongodb_surfaced_error', { kind, errors }),
    /** Whether an operation takes part in retryable writes or reads at all. */
    eligibility: (operation, retryWrites, retryReads) =>
      callJson('mongodb_eligibility', { operation }, { retry_writes: retryWrites, retry_reads: retryReads }),
    /** Retry once, retry after an overload backoff, or surface: one attempt's decision. */
    decide: (request, error) => callJson('mongodb_decide', { request, error }),
    /** The client-backpressure backoff for an overload retry. */
    overloadBackoff: (attempt, random, baseBackoffMs) =>
      callJson('mongodb_overload_backoff', { attempt, random }, { base_backoff_ms: baseBackoffMs }),
    /** The TransientTransactionError / UnknownTransactionCommitResult labels an error carries. */
    transactionLabels: (command, error) => callJson('mongodb_transaction_labels', { command, error }),
    /** The backoff before retrying a whole transaction. */
    transactionBackoff: (transactionAttempt, random) =>
      callJson('mongodb_transaction_backoff', { transaction_attempt: transactionAttempt, random }),
    /** Replays withTransaction over a list of events: the actions, the last one, backoffs and final state. */
    withTransaction: (events, timeoutMs) => callJson('mongodb_with_transaction', { events }, { timeout_ms: timeoutMs }),
    /** One step of the withTransaction state machine: (state, event) → {state, action}. */
    transactionStep: (state, event) => callJson('mongodb_transaction_step', { state, event }),
    /** Seed 000's analysis of an operation `{op, filter?, update?, documents?, unique_fields?, upsert?}`. */
    idempotency: (operation) => callJson('mongodb_idempotency', operation),
    /** Whether a DuplicateKeyError on a retried insert means the first attempt succeeded. */
    duplicateKey: (documentId, error) => callJson('mongodb_duplicate_key', { document_id: documentId, error }),
    /** Seed 000's two-step pending-token rewrite of a non-idempotent update (step1, step2). */
    pendingTokenRewrite: (filter, update, token, upsert, pendingField) =>
      callJson('mongodb_pending_token_rewrite', { filter, update, token }, { upsert, pending_field: pendingField }),
  })

  /** HTTP retry rules: status classes, Retry-After, and a bounded retry loop ("now" is passed in). */
  const http = Object.freeze({
    /** Final success, final rejection or transient, for an HTTP status, or a network error when `networkError`. */
    classify: (status, networkError) => callJson('http_classify', {}, { status, network_error: networkError }),
    /** A Retry-After header (seconds or an HTTP date) as a delay in milliseconds. */
    retryAfter: (value, nowUnixMs) => callJson('http_retry_after', { value }, { now_unix_ms: nowUnixMs }),
    /** An IMF-fixdate as Unix milliseconds. */
    parseDate: (value) => callJson('http_date', { value }),
    /** What a bounded retry loop does after an attempt: retry after a delay, or stop and why. */
    nextStep: (loop, state, attempt, nowUnixMs, random) =>
      callJson('http_next', { loop, state, attempt }, { now_unix_ms: nowUnixMs, random }),
  })

  return { callJson, mongodb, http }
}

// ---- simulation --------------------------------------------------------------------------------

/** The core's timeline (wire form) as the API returns it, each step's decision read by `decision`. */
function timelineFromWire(t, decision) {
  return Object.freeze({
    steps: Object.freeze(
      t.steps.map((s) =>
        Object.freeze({
          attempt: s.attempt,
          sentAtMs: wireMillis(s.sent_at_ms),
          doneAtMs: wireMillis(s.done_at_ms),
          reason: s.reason,
          decision: s.decision === null ? null : decision(s.decision),
        }),
      ),
    ),
    ending: t.ending,
    totalMs: wireMillis(t.total_ms),
    waitedMs: wireMillis(t.waited_ms),
  })
}

// ---- logging --------------------------------------------------------------------------------------

/** The `Orchestrator` class over a backend's `decide` and `formatDecision`. */
function orchestratorClass(decide, formatDecision) {
  /** One structured record per decision, for logs and metrics. */
  function decisionRecord(d, request) {
    return Object.freeze({
      action: d.action,
      reason: d.reason,
      attempts: d.attempts,
      delayMs: d.action === 'retry' ? d.delayMs : null,
      rule: d.rule,
      section: d.section,
      cause: d.action === 'retry' ? null : d.cause,
      service: typeof request === 'object' && request !== null ? request.service : undefined,
      message: formatDecision(d),
      decision: d,
    })
  }

  /**
   * `decide` with a fixed policy and strategy that reports every decision: to `onDecision` and as a
   * `'decision'` event, each with one record (RFC 0049 asks for every retry and non-retry to be logged).
   */
  class Orchestrator extends EventEmitter {
    /** `{policy?, strategy?, onDecision?}`. */
    constructor(opts) {
      super()
      const { policy, strategy, onDecision } = options(opts)
      if (onDecision !== undefined && typeof onDecision !== 'function') {
        throw invalidType('onDecision', 'a function', onDecision)
      }
      this.policy = policy
      this.strategy = strategy
      this.onDecision = onDecision
    }

    /** Decides, reports the record, and returns the decision. */
    decide(request, reason) {
      const d = decide(request, reason, this.policy, this.strategy)
      if (this.onDecision !== undefined || this.listenerCount('decision') > 0) {
        const record = decisionRecord(d, request)
        if (this.onDecision !== undefined) this.onDecision(record)
        this.emit('decision', record)
      }
      return d
    }
  }
  return Orchestrator
}

module.exports = {
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
}

'use strict'
// retrypolicy's public JavaScript API, written once: `makeApi(backend)` builds it over a backend,
// the napi addon (this package, ./retrypolicy.js) or the wasm module (the retrypolicy-wasm package,
// in Node and in pages, which ships this same file). Conversion only: every rule, table and
// message comes from the Rust core behind the backend; this file checks argument shapes, converts
// camelCase to the wire form and back, and names fields in errors.
//
// The backend interface (the napi addon's exports; the wasm package's backend.mjs adapts its
// module to it). Handles are opaque objects of the backend's classes; `ph` is a PolicyHandle or
// undefined (the RFC default); `make(retry, delayMs, capped, thenCancel, reason, rule, section,
// cause, attempts, idempotent)` builds a decision; a classification is `{reason, rule, section,
// surfaceAs}`; errors are Errors with the core's `code` and `field` (snake_case fields).
//   version() → string                        the core's version
//   reasonNames() → string[]                  the RFC 0049 reasons
//   errorCodes() → string[]                   the stable error codes
//   callJson(fn, text, request?, ph?) → text  the core's JSON API; a request object (read as decide
//                                             reads it) and a policy go in as input.request, input.policy
//   new PolicyHandle(text) .toJson()          a parsed policy document
//   new ObjectHandle(kind, argsText), invoke(object?, method, argsText, lent?) → JSON text or a new
//                                             object: the core's objects a caller holds (budgets,
//                                             breakers, KV error maps, gRPC's, AWS's), the wire
//                                             crate's objects.rs; see json.js `objectsOf`
//   decide(service, operation, readonly, method, timeoutMs, elapsedMs, attempts, idempotent, strategy,
//          random, previousDelayMs, previousReasons, reason, ph, make) → make(...)
//   decideWith(request, reason, ph, strategy, strategyPh, make) → make(...)
//                                             strategy: a function (request, reason) → ms | null, or
//                                             'best_effort' (with strategyPh) or 'fail_fast'
//   classifyKv(operation, status, errorMapObject?, ph?) → classification
//   requestFromJson(text) → the request's wire form as text
//   new RunHandle(configText, strategy, strategyPh, budgetObject, breakerObject), the core's run
//     machine; its events start(budget, breaker, nowMs, random, strategy, strategyPh),
//     attemptEnded(budget, breaker, outcomeText, nowMs, random, nowUnixMs, strategy, strategyPh)
//     (the outcome as JSON text in the wire form), waitEnded(budget, breaker, nowMs, random, strategy, strategyPh),
//     cancel(budget, breaker, nowMs) → a camelCase step (its breakerChanges and signal included); attemptsSent;
//     statsJson() → the core's RunStats as JSON text in the wire form. The strategy, budget and
//     breaker are the same on every event of a run: a backend may bind them at construction
//     (wasm) or take them per event (napi).
// Optional, for the runners' fast path (./drive.js; the wasm backend has neither, and its runners
// start a RunHandle per run): new RunConfigHandle(configText), a configuration checked once, whose
// start(budget, breaker, nowMs, random, strategy, strategyPh, make) creates and starts a run in one
// call → [runHandle, step]; RunHandle's events then take `make`, a function that builds the step
// from positional arguments, and succeeded(budget, breaker, nowMs) tells a success without a step
// (it returns the step's breaker changes as JSON text of a list, or null for none).

const { typedError, invalidType, renamed } = require('./errors.js')
const { documentText, options, wireMillis, camel, snake, fromWire, runStats, frozenStep, toWire, camelPath, jsonApi, objectsOf } = require('./json.js')
const { checkOutcomeReason } = require('./drive.js')
const { runners, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, BodyNotReplayableError, setTesting, isTesting } = require('./runners.js')
const { BREAKER_CHANNEL } = require('./observe.js')
const { makeOtel } = require('./otel.js')
const { budgets } = require('./budget.js')
const { grpcApi } = require('./grpc.js')
const { awsApi } = require('./aws.js')

/**
 * An emitter for where `node:events` does not exist (a page): the methods of Node's EventEmitter
 * that CircuitBreaker and Orchestrator declare, listeners called in order with `this` the emitter.
 */
class PageEmitter {
  #listeners = new Map()
  #max = 10
  /** Adds `listener` for `event`. */
  on(event, listener) {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), listener])
    return this
  }
  /** Adds `listener` for `event` (`on`). */
  addListener(event, listener) {
    return this.on(event, listener)
  }
  /** Adds `listener` for `event` before the listeners already there. */
  prependListener(event, listener) {
    this.#listeners.set(event, [listener, ...(this.#listeners.get(event) ?? [])])
    return this
  }
  /** `listener` wrapped to be called for the next `event` only. */
  #onceOf(event, listener) {
    const once = (...args) => {
      this.off(event, once)
      listener.apply(this, args)
    }
    once.listener = listener
    return once
  }
  /** Adds `listener` for the next `event` only. */
  once(event, listener) {
    return this.on(event, this.#onceOf(event, listener))
  }
  /** Adds `listener` for the next `event` only, before the listeners already there. */
  prependOnceListener(event, listener) {
    return this.prependListener(event, this.#onceOf(event, listener))
  }
  /** Removes `listener` for `event` (its last addition, as Node's). */
  off(event, listener) {
    const ls = this.#listeners.get(event) ?? []
    const i = ls.findLastIndex((l) => l === listener || l.listener === listener)
    if (i >= 0) this.#listeners.set(event, ls.toSpliced(i, 1))
    return this
  }
  /** Removes `listener` for `event` (`off`). */
  removeListener(event, listener) {
    return this.off(event, listener)
  }
  /** Removes every listener of `event` (of every event when none is named). */
  removeAllListeners(event) {
    if (event === undefined) this.#listeners.clear()
    else this.#listeners.delete(event)
    return this
  }
  /** Calls each listener of `event` with `args`; whether there was one. */
  emit(event, ...args) {
    const ls = this.#listeners.get(event) ?? []
    for (const l of ls) l.apply(this, args)
    return ls.length > 0
  }
  /** How many listeners `event` has. */
  listenerCount(event) {
    return (this.#listeners.get(event) ?? []).length
  }
  /** The listeners of `event`, a `once` one as it was given. */
  listeners(event) {
    return (this.#listeners.get(event) ?? []).map((l) => l.listener ?? l)
  }
  /** The listeners of `event`, a `once` one as its wrapper. */
  rawListeners(event) {
    return [...(this.#listeners.get(event) ?? [])]
  }
  /** The events that have listeners. */
  eventNames() {
    return [...this.#listeners].filter(([, ls]) => ls.length > 0).map(([e]) => e)
  }
  /** Sets the listener count past which Node warns (kept only: a page has no such warning). */
  setMaxListeners(n) {
    this.#max = n
    return this
  }
  /** What `setMaxListeners` set (10 by default). */
  getMaxListeners() {
    return this.#max
  }
}

/** Node's EventEmitter, or where there is none (a page) PageEmitter. */
function emitterClass() {
  try {
    return require('node:events').EventEmitter
  } catch {
    return PageEmitter
  }
}

/** The backend interface's members (above), each a function or a class. */
const BACKEND = Object.freeze(['version', 'reasonNames', 'errorCodes', 'callJson', 'PolicyHandle', 'decide', 'decideWith',
  'classifyKv', 'requestFromJson', 'ObjectHandle', 'invoke', 'RunHandle'])

/** The whole public API over `backend` (the interface above); throws naming the first member it lacks. */
function makeApi(backend) {
  const missing = BACKEND.find((name) => typeof backend?.[name] !== 'function')
  if (missing !== undefined) throw new TypeError(`retrypolicy: the backend has no function ${missing} (lib/api.js lists the interface)`)
  const native = backend
  const EventEmitter = emitterClass()
  const HANDLE = Symbol('retrypolicy.handle')
  /** The core's objects a caller holds (budgets, breakers, error maps, gRPC's, AWS's): `{open, call}`. */
  const objects = objectsOf(native)

  // ---- reasons and errors ------------------------------------------------------------------------

  /** The RFC 0049 reasons, name → name (frozen). */
  const RetryReason = Object.freeze(Object.assign(Object.create(null), ...native.reasonNames().map((n) => ({ [n]: n }))))

  /** The reason's RFC table row: `{name, allowsNonIdempotentRetry, alwaysRetry}` (aliases accepted). */
  const reasonFlags = (reason) => fromWire(api('reason_flags', { reason }))

  /** The canonical name of a reason (aliases accepted); throws `unknown_reason`. */
  const parseReason = (reason) => reasonFlags(reason).name

  /** Whether a non-idempotent request may be retried for this reason. */
  const allowsNonIdempotentRetry = (reason) => reasonFlags(reason).allowsNonIdempotentRetry

  /** Whether this reason is retried regardless of the strategy. */
  const alwaysRetry = (reason) => reasonFlags(reason).alwaysRetry

  /** The stable error codes, shared by every language. */
  const ERROR_CODES = Object.freeze(native.errorCodes())
  const KNOWN_CODES = new Set(ERROR_CODES)

  /** Whether `e` was thrown by retrypolicy (an `Error` with a stable `code` and a `field`). */
  const isRetryPolicyError = (e) => e instanceof Error && KNOWN_CODES.has(e.code) && typeof e.field === 'string'

  /** Whether RFC 0049's idempotent-operation list calls this operation idempotent. */
  function isIdempotent(operation) {
    const { service, operation: name, readonly, method } = object(operation, 'operation', 'an operation object')
    return api('is_idempotent', { service, operation: name, readonly, method }).idempotent
  }

  // ---- the core's JSON API ------------------------------------------------------------------------

  /** MongoDB and HTTP retry rules, and any JSON-API function by name (see ./json.js). */
  const { mongodb: mongodbRules, http, call } = jsonApi(native.callJson)

  /**
   * A JSON-API call behind the camelCase API: the addon adds `inputs.request` (when given: a request
   * object) and `inputs.policy` as `decide` reads them; errors name the fields in camelCase.
   */
  function api(fn, doc, inputs = {}) {
    try {
      const request = 'request' in inputs ? object(inputs.request, 'request', 'a request object') : undefined
      return call(fn, doc, request, policyHandle(inputs.policy))
    } catch (e) {
      throw isRetryPolicyError(e) ? renamed(e, camel(e.field)) : e
    }
  }

  // ---- policies and error maps --------------------------------------------------------------------

  /** The whole retry configuration, parsed and validated by the core; immutable. */
  class Policy {
    /** A policy from its JSON document (text or object, snake_case as in the README); none is the RFC default. */
    constructor(document) {
      const text = document === undefined ? '{}' : documentText(document, 'policy')
      Object.defineProperty(this, HANDLE, { value: new native.PolicyHandle(text) })
      Object.freeze(this)
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

  /** A KV error map (RFC 0013) as the server sent it, parsed once; immutable. */
  class ErrorMap {
    /** Parses the server's error map document (text or object). */
    constructor(document) {
      Object.defineProperty(this, HANDLE, { value: objects.open('error_map', { document: documentText(document, 'errorMap') }) })
      Object.freeze(this)
    }
  }

  let rfcDefault
  /** The backend's handle of the RFC default policy, made once when first needed. */
  const defaultPolicy = () => (rfcDefault ??= new native.PolicyHandle('{}'))

  /** The addon's handle of a Policy, or undefined for none (the RFC default). */
  function policyHandle(policy) {
    if (policy === undefined || policy === null) return undefined
    const h = policy[HANDLE]
    if (!(h instanceof native.PolicyHandle)) throw invalidType('policy', 'a Policy (new Policy(document))', policy)
    return h
  }

  /** The addon's handle of an ErrorMap, parsing a document given instead. */
  function errorMapHandle(map) {
    if (map === undefined || map === null) return undefined
    return (map instanceof ErrorMap ? map : new ErrorMap(map))[HANDLE]
  }

  // ---- decisions ---------------------------------------------------------------------------------

  /** A decision as the API returns it: frozen, shaped by its action. The addon calls this. */
  function decision(retry, delayMs, capped, thenCancel, reason, rule, section, cause, attempts, idempotent) {
    return Object.freeze(
      retry
        ? { action: 'retry', delayMs, capped, thenCancel, reason, rule, section, attempts, idempotent }
        : { action: 'no_retry', cause, reason, rule, section, attempts, idempotent },
    )
  }

  /** A decision in the wire form (snake_case), for the core's JSON API. */
  function decisionToWire(d) {
    const entries = Object.entries(object(d, 'decision', 'a decision returned by retrypolicy'))
    return Object.fromEntries(entries.map(([k, v]) => [snake(k), v]))
  }

  /** The core's one-line log message for a decision (RFC 0049 asks to log every retry and non-retry). */
  const formatDecision = (d) => api('format_decision', { decision: decisionToWire(d) }).message

  /** The core's one-sentence explanation of `decision` for `request`, naming the rule and spec section. */
  const explain = (request, d) => api('explain_decision', { decision: decisionToWire(d) }, { request }).sentence

  // ---- decide --------------------------------------------------------------------------------------

  /**
   * Decides whether and when to retry `request` after `reason`, under `policy` (RFC default when
   * omitted) and an optional host `strategy` (a function or an object with `retryAfter`).
   */
  function decide(request, reason, policy, strategy) {
    const ph = policyHandle(policy)
    // The built-in strategies as objects decide by their own rules (`best_effort_backoff`, `fail_fast`).
    if (strategy !== undefined && strategy !== null) {
      const [s, sp] = hostStrategy(strategy)
      return native.decideWith(request, reason, ph, s, sp, decision)
    }
    return decideBuiltIn(request, reason, ph)
  }

  /** An argument checked to be an object (its fields are the addon's to check). */
  function object(v, field, what) {
    if (typeof v !== 'object' || v === null) throw invalidType(field, what, v)
    return v
  }

  /** `decide` with the built-in strategies, under the addon's policy handle. */
  function decideBuiltIn(r, reason, ph) {
    object(r, 'request', 'a request object')
    // The fields go as arguments: the addon reading them off the object costs about 65 ns each.
    return native.decide(r.service, r.operation, r.readonly, r.method, r.timeoutMs, r.elapsedMs, r.attempts,
      r.idempotent, r.strategy, r.random, r.previousDelayMs, r.previousReasons, reason, ph, decision)
  }

  const isExactly = (o, C) => o instanceof C && Object.getPrototypeOf(o) === C.prototype


  /**
   * The orchestrator's steps before a host strategy is asked (deadline, UNKNOWN, always-retry
   * reasons, a per-request built-in strategy): the decision, or null when the host must be asked.
   */
  function decideBeforeStrategy(request, reason, policy) {
    return fromWire(api('decide_before_strategy', { reason }, { request, policy }).decision)
  }

  /** A decision in the wire form as the API returns it (`decision`'s shape). */
  const fromWireDecision = (w) =>
    decision(w.action === 'retry', wireMillis(w.delay_ms), w.capped, w.then_cancel, w.reason, w.rule, w.section, w.cause, w.attempts, w.idempotent)

  /** A host strategy's answer (ms, or null for "do not retry") as the decision, capped to the timeout. */
  const decideAfterStrategy = (request, reason, retryAfterMs) =>
    fromWireDecision(api('decide_after_strategy', { reason, retry_after_ms: finite(retryAfterMs, 'retryAfterMs') }, { request }))

  /** Best effort's answer for `request` and `reason` under `policy`: a delay in ms, or null (do not retry). */
  const bestEffortDelay = (request, reason, policy) =>
    wireMillis(api('best_effort_delay', { reason }, { request, policy }).delay_ms)

  /** RFC 0049's default strategy as an object; subclass it and override `retryAfter` to change one case. */
  class BestEffort {
    /** Best effort with `policy`'s backoff and jitter (the RFC default when omitted). */
    constructor(policy) {
      Object.defineProperty(this, HANDLE, { value: policyHandle(policy) })
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

  /** `decide` for each request: `reasons` is one reason for all or one per request. */
  function decideMany(requests, reasons, policy) {
    if (!Array.isArray(requests)) throw invalidType('requests', 'an array of requests', requests)
    const each = Array.isArray(reasons)
    if (each && reasons.length !== requests.length) {
      throw typedError('out_of_range', 'reasons', `${reasons.length} reasons for ${requests.length} requests`)
    }
    const ph = policyHandle(policy)
    const out = new Array(requests.length)
    for (let i = 0; i < requests.length; i++) {
      try {
        out[i] = decideBuiltIn(requests[i], each ? reasons[i] : reasons, ph)
      } catch (e) {
        if (!isRetryPolicyError(e)) throw e
        throw renamed(e, e.field === 'reason' ? (each ? `reasons[${i}]` : 'reasons') : `requests[${i}].${e.field}`)
      }
    }
    return out
  }

  // ---- classification ----------------------------------------------------------------------------

  /** Classifies a KV response status (a number or a "0x.." string) for a KV operation name. */
  function classifyKv(operation, status, opts) {
    const { errorMap, policy } = options(opts)
    return Object.freeze(native.classifyKv(operation, finite(status, 'status'), errorMapHandle(errorMap), policyHandle(policy)))
  }

  /** The core's classification in the wire form as the API returns it: frozen, camelCase. */
  const classification = (c) => Object.freeze({ reason: c.reason ?? null, rule: c.rule, section: c.section, surfaceAs: c.surface_as ?? null })

  /** A policy's normalized document, read once per policy handle. */
  const documents = new WeakMap()
  function policyDocument(ph) {
    if (!documents.has(ph)) documents.set(ph, JSON.parse(ph.toJson()))
    return documents.get(ph)
  }

  /** A policy's compatibility options; none for no policy (the core's default). */
  function compat(policy) {
    const ph = policyHandle(policy)
    return ph === undefined ? undefined : policyDocument(ph).compat
  }

  /**
   * `v`, unless it is NaN or ±Infinity: then `code` (the core's `out_of_range` unless given) naming
   * `field`, as the addon's typed readers had it (JSON text would carry it as a string).
   */
  function finite(v, field, code = 'out_of_range') {
    if (typeof v !== 'number' || Number.isFinite(v)) return v
    throw typedError(code, field, `${v} is out of range: expected a finite number`)
  }

  /** Classifies the first error of a query response (`options.retry`: the error's "retry" flag). */
  function classifyQuery(code, message, opts) {
    const { retry, policy } = options(opts)
    return classification(api('classify_query', { code: finite(code, 'code'), message, retry, compat: compat(policy) }))
  }

  /** Classifies the first error of an analytics response. */
  const classifyAnalytics = (code) => classification(api('classify_analytics', { code: finite(code, 'code') }))

  /** Classifies a search response's HTTP status. */
  const classifySearch = (httpStatus) => classification(api('classify_search', { http_status: finite(httpStatus, 'httpStatus') }))

  /** Classifies a views response from its HTTP status and body text. */
  const classifyViews = (httpStatus, body) =>
    classification(api('classify_views', { http_status: finite(httpStatus, 'httpStatus'), body }))

  /** Names the reason for a failure the SDK observed itself ("socket_closed_while_in_flight", ...). */
  const classifyDispatch = (failure) => classification(api('classify_dispatch', { failure }))

  // ---- backoff, wire form, simulation ------------------------------------------------------------

  /** RFC 0049's controlled backoff (always-retry reasons) in ms after `attempt` retries. */
  const controlledBackoffMs = (attempt) => wireMillis(api('controlled_backoff', { attempt: finite(attempt, 'attempt') }).delay_ms)

  /** The policy's best-effort delay in ms after `attempt` retries; jitter needs a draw in [0, 1). */
  function backoffDelayMs(policy, attempt, random, previousDelayMs) {
    const { backoff, jitter } = policyDocument(policyHandle(policy) ?? defaultPolicy())
    const doc = { backoff, jitter, attempt: finite(attempt, 'attempt'), random: finite(random, 'random', 'invalid_random'),
      previous_delay_ms: finite(previousDelayMs, 'previousDelayMs') }
    return wireMillis(api('backoff', doc).delay_ms)
  }

  /** A request from the wire form (snake_case, `*_ms` numbers or decimal strings), as a camelCase object. */
  function requestFromJson(document) {
    return fromWire(JSON.parse(native.requestFromJson(documentText(document, 'request'))), false)
  }

  /** A camelCase request in the wire form, as JSON text. */
  const requestToJson = (request) => api('parse_request', {}, { request }).json

  /**
   * Replays a whole retry schedule: `{request, outcomes, latencyMs, repeatLast?, draws?, policy?}`
   * → `{steps, ending, totalMs, waitedMs}`, each step with the decision taken after it.
   */
  function simulate(scenario) {
    const { request, outcomes, repeatLast, latencyMs, draws, policy } = object(scenario, 'scenario', 'a scenario object')
    const doc = { outcomes, repeat_last: repeatLast, latency_ms: latencyMs, draws }
    return fromWire(api('simulate', doc, { request, policy }))
  }

  /**
   * Replays a retry storm: `{request, reason, requestsPerSecond, durationMs, latencyMs, failureRate?,
   * policy?, draws?, budget?, breaker?}` (budget and breaker as documents, shared by every client) →
   * `{requests, attemptsSent, amplification, budgetRefusals, breakerRejections, succeeded, failed, timedOut, budgetKind}`.
   */
  function simulateStorm(scenario) {
    const { request, reason, requestsPerSecond, durationMs, failureRate, latencyMs, policy, draws, budget, breaker } =
      object(scenario, 'scenario', 'a storm scenario object')
    const doc = { reason, requests_per_second: requestsPerSecond, duration_ms: durationMs, failure_rate: failureRate,
      latency_ms: latencyMs, draws, budget, breaker }
    return fromWire(api('simulate_storm', doc, { request, policy }))
  }

  // ---- logging (RFC 0049 asks for every retry and every non-retry to be logged) ----------------------

  /** One frozen record per decision, for logs and metrics. */
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

  /** `decide` with a fixed policy and strategy that reports every decision (callback and `'decision'` event). */
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

  // ---- retry budgets and circuit breakers (./budget.js) ----------------------------------------------

  /** `RetryBudget`, `CircuitBreaker` (the addon's handles), and decide / explain with a budget's verdict. */
  const { RetryBudget, CircuitBreaker, decideWithBudget, explainWithBudget, budgetHandle, breakerHandle, breakerStepChanged } = budgets({
    objects,
    budgeted: (fn, request, reason, policy, verdict) => api(fn, { reason, budget_verdict: verdict }, { request, policy }),
    EventEmitter,
  })

  // ---- gRPC (gRFC A6) and the AWS SDKs' retry modes (./grpc.js, ./aws.js) ---------------------------

  /** `grpc.ServiceConfig`, `RetryPolicy`, `HedgingPolicy`, `retry`, `hedge`: a throttling bucket is a RetryBudget. */
  const grpc = grpcApi({ objects, budgetHandle })

  /** `aws.RetryConfig`, `decide`, `AdaptiveRateLimiter`: the retry quota is a RetryBudget the host asks. */
  const aws = awsApi({ objects })

  // ---- the retry run: the core's machine, one event per call --------------------------------------

  /** A host strategy as the backend takes it: `[function | name, best effort's policy handle]`. */
  function hostStrategy(strategy) {
    if (isExactly(strategy, BestEffort)) return ['best_effort', strategy[HANDLE]]
    if (isExactly(strategy, FailFast)) return ['fail_fast', undefined]
    if (typeof strategy === 'function') return [strategy, undefined]
    if (typeof strategy === 'object' && typeof strategy.retryAfter === 'function') {
      return [(r, why) => strategy.retryAfter(r, why), undefined]
    }
    throw invalidType('strategy', 'a function or an object with retryAfter(request, reason)', strategy)
  }

  /**
   * The documents a run's rules hold, passed as they are: `decide`'s `policy` (a Policy or its
   * snake_case document), `grpc`'s `retryPolicy` (gRPC's JSON) and `aws`'s `config` (an
   * aws.RetryConfig or its snake_case document): `[rules key, key, the document's wire form]`.
   */
  const RUN_DOCUMENTS = [
    ['decide', 'policy', (p) => (p instanceof Policy ? p.toJSON() : p)],
    ['grpc', 'retryPolicy', (p) => {
      if (p instanceof grpc.RetryPolicy) throw invalidType('rules.grpc.retryPolicy', "gRPC's retryPolicy document (a grpc.RetryPolicy keeps none)", p)
      return p
    }],
    ['aws', 'config', (c) => (c instanceof aws.RetryConfig ? c.toJSON() : c)],
  ]

  /** A run's configuration in the wire form: camelCase keys in snake_case, the documents of its rules (RUN_DOCUMENTS) as they are. */
  function runConfigText(config) {
    object(config, 'config', 'a run configuration object {rules, timeoutMs?, maxAttempts?, attemptTimeoutMs?}')
    const rules = config.rules
    const docs = RUN_DOCUMENTS.filter(([r, k]) => typeof rules?.[r] === 'object' && rules[r] !== null && rules[r][k] !== undefined)
    const without = (r, v) => docs.reduce((o, [d, k]) => (d === r ? { ...o, [k]: undefined } : o), v)
    const wire = toWire(docs.length === 0 ? config : { ...config, rules: Object.fromEntries(Object.entries(rules).map(([r, v]) => [r, without(r, v)])) }, '')
    for (const [r, k, of] of docs) {
      if (rules[r][k] !== null) wire.rules[r][snake(k)] = of(rules[r][k])
    }
    return documentText(wire, 'config')
  }

  /** An attempt's outcome (`{kind, ...}`) as JSON text in the wire form, as the backend's run reads it. */
  function outcomeText(outcome) {
    object(outcome, 'outcome', 'an outcome object {kind, ...}')
    checkOutcomeReason(outcome)
    return documentText(toWire(outcome, 'outcome'), 'outcome', 'outcome')
  }

  /** The core's errors renamed to the camelCase names the caller wrote (inside an AWS retry document, its own snake_case). */
  function camelError(e) {
    if (!isRetryPolicyError(e)) return e
    const aws = /^rules\.aws\.config\./.exec(e.field)
    return renamed(e, aws ? aws[0] + snake(e.field.slice(aws[0].length)) : camelPath(e.field)) // a backend may have camelCased it
  }

  /**
   * One retry run over the core's machine: the host reports each event with its clock reading
   * (`nowMs`, monotonic ms, fractions allowed) and does what the returned step says (send, wait, done).
   */
  class Run {
    #h
    #budget
    #breaker
    #breakerObject
    #strategy
    #strategyPolicy

    /** A run of `config` (`{rules: {decide} | {http} | {mongodb}, timeoutMs?, maxAttempts?, attemptTimeoutMs?}`), sharing `budget` and `breaker`, with a host `strategy`. */
    constructor(config, opts) {
      const { budget, breaker, strategy } = options(opts)
      const text = runConfigText(config)
      this.#budget = budgetHandle(budget)
      this.#breaker = breakerHandle(breaker)
      this.#breakerObject = this.#breaker === undefined ? undefined : breaker
      ;[this.#strategy, this.#strategyPolicy] = strategy === undefined || strategy === null ? [undefined, undefined] : hostStrategy(strategy)
      try {
        this.#h = new native.RunHandle(text, this.#strategy, this.#strategyPolicy, this.#budget, this.#breaker)
      } catch (e) {
        throw camelError(e)
      }
    }

    /** `step`, frozen, once each breaker change it carries is reported by the breaker, in order. */
    #reported(step) {
      if (this.#breakerObject !== undefined) breakerStepChanged(this.#breakerObject, step.breakerChanges)
      return frozenStep(step)
    }

    /** Starts the run at `nowMs`: send attempt 1 (or wait for the breaker, or done). */
    start(nowMs, random) {
      let step
      try {
        step = this.#h.start(this.#budget, this.#breaker, nowMs, random, this.#strategy, this.#strategyPolicy)
      } catch (e) {
        throw camelError(e)
      }
      return this.#reported(step)
    }

    /** The attempt of a `send` step ended with `outcome` (`{kind, ...}`) at `nowMs`: wait, or done. */
    attemptEnded(outcome, nowMs, random, nowUnixMs) {
      let step
      try {
        step = this.#h.attemptEnded(this.#budget, this.#breaker, outcomeText(outcome), nowMs, random, nowUnixMs,
          this.#strategy, this.#strategyPolicy)
      } catch (e) {
        throw camelError(e)
      }
      return this.#reported(step)
    }

    /** The wait of a `wait` step is over at `nowMs`: send the next attempt (or wait for the breaker, or done). */
    waitEnded(nowMs, random) {
      let step
      try {
        step = this.#h.waitEnded(this.#budget, this.#breaker, nowMs, random, this.#strategy, this.#strategyPolicy)
      } catch (e) {
        throw camelError(e)
      }
      return this.#reported(step)
    }

    /** The host cancelled the run at `nowMs`: done, cancelled (a canary out is released). */
    cancel(nowMs) {
      let step
      try {
        step = this.#h.cancel(this.#budget, this.#breaker, nowMs)
      } catch (e) {
        throw camelError(e)
      }
      return this.#reported(step)
    }

    /** Attempts sent so far. */
    get attemptsSent() {
      return this.#h.attemptsSent
    }

    /** What the run did so far (the core's RunStats, camelCase, frozen): attempts, retries, waitedMs, elapsedMs, the end, the last rule, reason and verdicts. */
    get stats() {
      return runStats(this.#h.statsJson())
    }
  }

  // ---- runners: the retry loop, fetch and withTransaction, thin loops over Run ------------------------

  /** `retry(fn, options)`, the classifiers of thrown errors, `retryFetch` and `runTransaction` (./runners.js). */
  const { retry, classifyNetworkError, classifyHttpStatus, classifyError, retryFetch, runTransaction } =
    runners({ Run, classifyDispatch, http, mongodb: mongodbRules, prepared: native.RunConfigHandle && { RunConfigHandle: native.RunConfigHandle,
      runConfigText, budgetHandle, breakerHandle, hostStrategy, camelError, isPolicy: (p) => p instanceof Policy, breakerStepChanged } })

  /** The MongoDB rules, with `runTransaction(session, callback, options)` (./transaction.js). */
  const mongodb = Object.freeze({ ...mongodbRules, runTransaction })

  /** The core's version. */
  const version = native.version()

  /** OpenTelemetry for every run and breaker, optional: `instrument`, `uninstrument`, `isInstrumented`, `record` (./otel.js). */
  const otel = makeOtel(version, CircuitBreaker)

  return {
    version, RetryReason, ERROR_CODES, isRetryPolicyError, parseReason, reasonFlags, allowsNonIdempotentRetry,
    alwaysRetry, isIdempotent, Policy, ErrorMap, decide, decideMany, decideBeforeStrategy, decideAfterStrategy,
    bestEffortDelay, BestEffort, FailFast, formatDecision, explain, classifyKv, classifyQuery, classifyAnalytics,
    classifySearch, classifyViews, classifyDispatch, controlledBackoffMs, backoffDelayMs, requestFromJson,
    requestToJson, simulate, simulateStorm, mongodb, http, Orchestrator, retry, retryFetch, RetryTimeoutError, DECISION_CHANNEL,
    classifyNetworkError, classifyHttpStatus, classifyError, RetryBudget, CircuitBreaker, decideWithBudget,
    explainWithBudget, CircuitOpenError, BodyNotReplayableError, Run, grpc, aws, otel, BREAKER_CHANNEL, setTesting, isTesting,
  }
}

module.exports = { makeApi, BACKEND, PageEmitter }

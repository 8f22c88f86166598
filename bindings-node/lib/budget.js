'use strict'
// Retry budgets and circuit breakers: objects over the backend's objects (json.js `objectsOf`),
// each holding one of the core's state machines. Conversion only:
// every rule is the core's, and the caller's clock comes with every call as `nowMs`. Documents and
// snapshots are the shared JSON form (snake_case, as every language writes them); verdicts and
// decisions come out camelCase. Shared by both packages (the wasm one copies it into pkg/runners).

const { typedError, invalidType, renamed } = require('./errors.js')
const { documentText, snapshotText, fromWire, camel } = require('./json.js')
const { breakerObserved, breakerChanged } = require('./observe.js')

const HANDLE = Symbol('retrypolicy.state')
/** A breaker's `onStateChange` callback (undefined for none). */
const CALLBACK = Symbol('retrypolicy.onStateChange')
/** A breaker's name (the `name` option), for its metrics. */
const NAME = Symbol('retrypolicy.breakerName')
/** `new CircuitBreaker({[RESTORED]: handle}, options)`: `restore`'s way to a breaker over a handle it made. */
const RESTORED = Symbol('retrypolicy.restored')

/** A breaker document as JSON text; none (undefined or null) is Couchbase's defaults. */
const breakerText = (doc) => (doc === undefined || doc === null ? '{}' : documentText(doc, 'breaker', 'breaker'))

/** `obj` holding `handle`, frozen. */
function holding(obj, handle) {
  Object.defineProperty(obj, HANDLE, { value: handle })
  return Object.freeze(obj)
}

/** A budget event as the handle takes it: a name, or `{kind, afterRetry?, cause?}`. */
function budgetEvent(event) {
  if (typeof event === 'string') return { kind: event }
  if (typeof event !== 'object' || event === null) throw invalidType('event', "an event name or {kind, afterRetry?, cause?}", event)
  const extra = Object.keys(event).find((k) => !['kind', 'afterRetry', 'cause'].includes(k))
  if (extra !== undefined) throw typedError('unknown_field', `event.${extra}`, 'unknown field: expected kind, afterRetry or cause')
  return event
}

/** The name of a breaker given none (spec-fixtures/observability.json, `breaker_name_default`). */
const DEFAULT_BREAKER_NAME = 'default'

/** A breaker's options: `{onStateChange?, name?}`, checked; `[the callback or undefined, the name]`. */
function breakerOptions(options) {
  if (options === undefined || options === null) return [undefined, DEFAULT_BREAKER_NAME]
  if (typeof options !== 'object') throw invalidType('options', 'an options object {onStateChange?, name?}', options)
  const { onStateChange, name } = options
  if (onStateChange !== undefined && onStateChange !== null && typeof onStateChange !== 'function') {
    throw invalidType('onStateChange', 'a function (change) => void', onStateChange)
  }
  if (name !== undefined && name !== null && typeof name !== 'string') throw invalidType('name', "a string (the breaker's name)", name)
  return [onStateChange ?? undefined, name ?? DEFAULT_BREAKER_NAME]
}

/** Changes as a run's step gives them (a list, its JSON text, or null/undefined for none) → `[{from, to, rule}, ...]`. */
const changesOf = (changes) => (changes === null || changes === undefined ? [] : typeof changes === 'string' ? JSON.parse(changes) : changes)

/**
 * `RetryBudget`, `CircuitBreaker`, `decideWithBudget` and `explainWithBudget` over the backend's
 * `objects` (`{open, call}`, json.js `objectsOf`) and `budgeted(fn, request, reason, policy, verdict)`,
 * which calls the core's JSON function `fn` (`decide_with_budget`, `explain_with_budget`);
 * `EventEmitter` is the class breakers extend (Node's, or a page's stand-in).
 */
function budgets({ objects: { open, call }, budgeted, EventEmitter }) {
  /** A retry budget: gRPC's token bucket, the AWS retry quota or Finagle's percentage. */
  class RetryBudget {
    /** A budget from its document (`{kind: 'token_bucket', max_tokens?, token_ratio?}`, ...), full. */
    constructor(document) {
      holding(this, open('budget', { document: documentText(document, 'budget', 'budget') }))
    }

    /** A budget of `document` in the state `state` (what `snapshot()` returned, or its JSON text; required). */
    static restore(document, state) {
      const handle = open('budget', { document: documentText(document, 'budget', 'budget'), state: snapshotText(state) })
      return holding(Object.create(RetryBudget.prototype), handle)
    }

    /** Whether a retry for `cause` (`'error'` or `'timeout'`) may be sent at `nowMs`; changes nothing. */
    permit(nowMs, cause = 'error') {
      return fromWire(call(this[HANDLE], 'permit', { now_ms: nowMs, cause }))
    }

    /** Asks for a retry at `nowMs` and, when permitted, records it: the one call before sending a retry. */
    tryRetry(nowMs, cause = 'error') {
      return fromWire(call(this[HANDLE], 'try_retry', { now_ms: nowMs, cause }))
    }

    /** Records what happened at `nowMs`: `'request'`, `'failure'`, `'timeout'`, `'final'`, `'success'`, `'retry'`, or `{kind, afterRetry?, cause?}`. */
    record(nowMs, event) {
      const { kind, afterRetry, cause } = budgetEvent(event)
      try {
        call(this[HANDLE], 'record', { now_ms: nowMs, event: { kind, after_retry: afterRetry, cause } })
      } catch (e) {
        throw e instanceof Error && typeof e.field === 'string' ? renamed(e, camel(e.field)) : e // the core names event.after_retry
      }
    }

    /** The state as a plain object in the shared JSON form (store it anywhere; `restore` reads it). */
    snapshot() {
      return call(this[HANDLE], 'snapshot')
    }

    /** The normalized document (every field of its kind set). */
    toJSON() {
      return call(this[HANDLE], 'to_json')
    }
  }

  /**
   * A circuit breaker with Couchbase's parameters: closed, open, half-open with one canary. Each
   * change of its state (by `permit` or `record`, or by a run's step) is reported: the
   * `onStateChange` callback, the 'stateChange' event, BREAKER_CHANNEL and OpenTelemetry
   * (./observe.js). Not frozen (an EventEmitter keeps its listeners on itself); its state is the
   * core's, behind a handle no property reaches.
   */
  class CircuitBreaker extends EventEmitter {
    /**
     * A closed breaker from its document (`{volume_threshold?, sleep_window_ms?, ...}`); none or null: Couchbase's defaults.
     * `options.onStateChange(change)` is called after each change; `options.name` (default `'default'`) is the
     * `retrypolicy.breaker.name` its metrics carry.
     */
    constructor(document, options) {
      super()
      const [callback, name] = breakerOptions(options)
      const restored = document !== null && typeof document === 'object' ? document[RESTORED] : undefined
      Object.defineProperty(this, HANDLE, { value: restored ?? open('breaker', { document: breakerText(document) }) })
      Object.defineProperty(this, CALLBACK, { value: callback })
      Object.defineProperty(this, NAME, { value: name })
    }

    /** A breaker of `document` in the state `state` (what `snapshot()` returned, or its JSON text; required), with `options` as the constructor's. */
    static restore(document, state, options) {
      breakerOptions(options)
      const handle = open('breaker', { document: breakerText(document), state: snapshotText(state) })
      return new CircuitBreaker({ [RESTORED]: handle }, options)
    }

    /** Whether a request may be sent at `nowMs`; past the sleep window it becomes the one canary. */
    permit(nowMs) {
      const verdict = fromWire(call(this[HANDLE], 'permit', { now_ms: nowMs }))
      if (breakerObserved(this, this[CALLBACK])) this.#report()
      return verdict
    }

    /** Records how a request ended at `nowMs`: `'success'`, `'failure'` or `'timeout'`. */
    record(nowMs, outcome) {
      call(this[HANDLE], 'record', { now_ms: nowMs, outcome })
      if (breakerObserved(this, this[CALLBACK])) this.#report()
    }

    /** Reports each change the last call made, in order. */
    #report() {
      breakerChanged(this, this[CALLBACK], call(this[HANDLE], 'last_changes'))
    }

    /**
     * The changes of state the last `permit` or `record` made (directly, or in a run's step), in
     * order: `[{from, to, rule}, ...]`, empty when it made none (two when a timed-out canary was
     * replaced at once).
     */
    get lastChanges() {
      return Object.freeze(call(this[HANDLE], 'last_changes').map((c) => Object.freeze(c)))
    }

    /** The callback given as `onStateChange`, or null. */
    get onStateChange() {
      return this[CALLBACK] ?? null
    }

    /** The name its metrics carry as `retrypolicy.breaker.name` (`'default'` when none was given). */
    get name() {
      return this[NAME]
    }

    /** The circuit's state at `nowMs`: `'closed'`, `'open'` or `'half_open'`; changes nothing. */
    state(nowMs) {
      return call(this[HANDLE], 'state', { now_ms: nowMs })
    }

    /** The state as a plain object in the shared JSON form (store it anywhere; `restore` reads it). */
    snapshot() {
      return call(this[HANDLE], 'snapshot')
    }

    /** The normalized document. */
    toJSON() {
      return call(this[HANDLE], 'to_json')
    }
  }

  /**
   * Reports each of `changes` (a run's step's `breakerChanges`, or the JSON text of such a list the
   * addon's fast path gave), in order, of `breaker` (a CircuitBreaker of this package) as its own calls do;
   * nothing for none.
   */
  function breakerStepChanged(breaker, changes) {
    const list = changesOf(changes)
    if (list.length === 0 || !breakerObserved(breaker, breaker[CALLBACK])) return
    breakerChanged(breaker, breaker[CALLBACK], list)
  }

  /** A verdict in the wire form (its keys are single words; anything else is the core's to refuse). */
  const verdictWire = (v) => (v === undefined ? null : v)

  /** `decide`, then a retry the budget's `verdict` refuses becomes a no-retry with cause `budget_exhausted`. */
  const decideWithBudget = (request, reason, policy, verdict) =>
    fromWire(budgeted('decide_with_budget', request, reason, policy, verdictWire(verdict)))

  /** `{decision, sentence}`: decideWithBudget's decision and the core's sentence about it. */
  function explainWithBudget(request, reason, policy, verdict) {
    const { decision, sentence } = budgeted('explain_with_budget', request, reason, policy, verdictWire(verdict))
    return Object.freeze({ decision: fromWire(decision), sentence })
  }

  /** The binding's handle behind a RetryBudget or CircuitBreaker of this package (none for undefined or null). */
  function handleOf(obj, Class, field) {
    if (obj === undefined || obj === null) return undefined
    if (!(obj instanceof Class)) throw invalidType(field, `a ${Class.name} of this package`, obj)
    return obj[HANDLE]
  }
  const budgetHandle = (budget) => handleOf(budget, RetryBudget, 'budget')
  const breakerHandle = (breaker) => handleOf(breaker, CircuitBreaker, 'breaker')

  return { RetryBudget, CircuitBreaker, decideWithBudget, explainWithBudget, budgetHandle, breakerHandle, breakerStepChanged }
}

module.exports = { budgets }

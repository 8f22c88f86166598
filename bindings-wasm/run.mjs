// The retry run: the Node package's `Run` (same constructor, methods and steps) over this module's
// `RunHandle`, the core's run machine. Shared by both entries: index.mjs (Node) and browser.mjs
// (pages), each passing its module and the helpers of the Node package's lib files. Conversion
// only: the configuration goes to the core once as JSON text, each event's outcome is read by the
// module property by property, and each step comes back camelCased and frozen.

/** A step's keys in the order the core declares them (the module's step comes with its keys sorted). */
const STEP_KEYS = ['action', 'attempt', 'timeout_ms', 'delay_ms', 'end', 'reason', 'rule', 'section', 'elapsed_ms',
  'retry_after_ms', 'decision', 'budget', 'breaker']

/** A camelCase name in snake_case. */
const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * `Run` over `wasm.RunHandle`, with the Node package's `{typedError, invalidType, renamed}`
 * (errors.js), `{documentText, fromWire, camel}` (json.js), `budgetHandle` / `breakerHandle`
 * (budget.js: the handle behind a RetryBudget / CircuitBreaker), and `strategyOf(strategy)`: a host
 * strategy as the module takes it, `[function | built-in name | undefined, policy handle]`.
 */
export function makeRun({ wasm, errors, json, budgetHandle, breakerHandle, strategyOf }) {
  const { invalidType, renamed } = errors
  const { documentText, fromWire, camel } = json
  const HANDLE = Symbol('retrypolicy.run')

  /** `o`'s own keys in snake_case, its values as they are (documents keep their own keys). */
  function snakeKeys(o, field) {
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw invalidType(field, 'an object', o)
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [snake(k), v]))
  }

  /**
   * A run's camelCase configuration in the wire form, as JSON text: its keys and its rules' keys in
   * snake_case; the values under them (an operation, a policy, a backoff) are documents, as they are
   * (a Policy writes its own document).
   */
  function configText(config) {
    const wire = snakeKeys(config, 'config')
    const rules = wire.rules
    if (typeof rules === 'object' && rules !== null && !Array.isArray(rules)) {
      wire.rules = Object.fromEntries(Object.entries(rules).map(([domain, r]) => [domain, snakeKeys(r, `rules.${domain}`)]))
    }
    return documentText(wire, 'config')
  }

  /** An outcome as the module reads it: a MongoDB error as JSON text, its keys in snake_case (`writeConcernCode`). */
  function outcomeIn(outcome) {
    if (outcome?.kind !== 'mongodb') return outcome
    return { ...outcome, error: documentText(snakeKeys(outcome.error, 'outcome.error'), 'outcome.error') }
  }

  /**
   * A host strategy as the module takes it; a function gets the run's request camelCased, with
   * `previousReasons` always an array (the wire form leaves it out when empty), as `decide`'s does.
   */
  function runStrategy(s) {
    const [strategy, policy] = strategyOf(s)
    if (typeof strategy !== 'function') return [strategy, policy]
    return [(request, reason) => strategy({ previousReasons: [], ...fromWire(request, false) }, reason), policy]
  }

  /** What `call` returns; an error of the core's it throws names its field in camelCase. */
  function camelErrors(call) {
    try {
      return call()
    } catch (e) {
      throw e instanceof Error && typeof e.code === 'string' && typeof e.field === 'string' ? renamed(e, camel(e.field)) : e
    }
  }

  /** Calls the run's handle: the step as the API returns it (camelCase, frozen, its keys in the core's order). */
  function stepOf(call) {
    const raw = camelErrors(call)
    return fromWire(Object.fromEntries(STEP_KEYS.map((k) => [k, raw[k]])))
  }

  /**
   * One retry run over the core's machine: the host reports each event with its clock and takes the
   * step it gets back (`send`, `wait` or `done`); the budget and breaker are shared with other runs.
   */
  class Run {
    /** A run of `config` (`{rules, timeoutMs?, maxAttempts?, attemptTimeoutMs?}`) with `{budget?, breaker?, strategy?}`. */
    constructor(config, options) {
      if (options !== undefined && options !== null && typeof options !== 'object') throw invalidType('options', 'an options object', options)
      const { budget, breaker, strategy } = options ?? {}
      const [b, c] = [budgetHandle(budget), breakerHandle(breaker)]
      const h = camelErrors(() => new wasm.RunHandle(configText(config), ...runStrategy(strategy)))
      if (b !== undefined) h.setBudget(b)
      if (c !== undefined) h.setBreaker(c)
      Object.defineProperty(this, HANDLE, { value: h })
      Object.freeze(this)
    }

    /** Starts the run at `nowMs` (monotonic ms, fractions allowed): the first step. */
    start(nowMs, random) {
      return stepOf(() => this[HANDLE].start(nowMs, random))
    }

    /** The attempt ended with `outcome` (`{kind, ...}`) at `nowMs`: the next step. */
    attemptEnded(outcome, nowMs, random, nowUnixMs) {
      return stepOf(() => this[HANDLE].attemptEnded(outcomeIn(outcome), nowMs, random, nowUnixMs))
    }

    /** The wait ended at `nowMs`: the next step. */
    waitEnded(nowMs, random) {
      return stepOf(() => this[HANDLE].waitEnded(nowMs, random))
    }

    /** The host cancelled the run at `nowMs`: done, cancelled. */
    cancel(nowMs) {
      return stepOf(() => this[HANDLE].cancel(nowMs))
    }

    /** Attempts sent so far. */
    get attemptsSent() {
      return this[HANDLE].attemptsSent
    }
  }

  return Run
}

'use strict'
// OpenTelemetry for every run and breaker, optional: `otel.instrument()` once at start-up, and from
// then on every run of `retry` and `retryFetch` records, through `@opentelemetry/api` (an optional
// peer dependency, loaded by `instrument` and not before), the metrics below on the meter
// `retrypolicy`, and a span event for each retry and for the give-up on the span active when the
// step is taken (none when no span is active). Every breaker's state change records
// `retrypolicy.breaker.state_changes` and the `retrypolicy.breaker.state` gauge, made by a run or
// by a direct `permit`/`record`. A host that drives a `Run` itself hands each step to `record`.
// The names, units and attributes are the table of spec-fixtures/observability.json (README,
// "Observability"), shared with the Python binding. Conversion only: what each step records is
// read off the core's step (its action, its signal: retry, breaker_wait, give_up or none, its end, reason, rule,
// delay, the budget's and breaker's verdicts), nothing decided here.

const SCOPE = 'retrypolicy'
const ATTEMPT = 'retrypolicy.attempt'
const REASON = 'retrypolicy.reason'
const RULE = 'retrypolicy.rule'
const DELAY = 'retrypolicy.delay_ms'
const END = 'retrypolicy.end'
const BUDGET_KIND = 'retrypolicy.budget.kind'
const BREAKER_FROM = 'retrypolicy.breaker.from'
const BREAKER_TO = 'retrypolicy.breaker.to'
const BREAKER_NAME = 'retrypolicy.breaker.name'
/** The name of a breaker given none (the table's `breaker_name_default`; ./budget.js names breakers so). */
const DEFAULT_BREAKER_NAME = 'default'
const RESEND_COUNT = 'http.request.resend_count'
/** The breaker state gauge's values (resilience4j's numbering). */
const STATES = Object.freeze({ closed: 0, open: 1, half_open: 2 })

const { observers } = require('./observe.js')
const { invalidType } = require('./errors.js')

/** The step's reason (when it has one) and rule, as attributes. */
const why = (step) => (step.reason === null ? { [RULE]: step.rule } : { [REASON]: step.reason, [RULE]: step.rule })

/** A number of ms as an attribute (a bigint past 2^53 − 1 is written as a number: attributes hold no bigint). */
const int = (v) => (typeof v === 'bigint' ? Number(v) : v ?? 0)

/** The instruments of one meter (`valueType`: the API's ValueType.INT). */
class Instruments {
  /** The table's counters and gauge on `meter`, each of `valueType`. */
  constructor(meter, valueType) {
    // every value is a count or a state's number: integers (Python's SDK records ints as ints)
    const counter = (name, unit, description) => meter.createCounter(name, { unit, description, valueType })
    this.attempts = counter('retrypolicy.attempts', '{attempt}', 'Attempts sent')
    this.retries = counter('retrypolicy.retries', '{retry}', 'Retries decided after a failed attempt')
    this.giveUps = counter('retrypolicy.give_ups', '{run}', 'Runs that gave up or timed out')
    this.budgetRefusals = counter('retrypolicy.budget.refusals', '{retry}', 'Retries the retry budget refused')
    this.breakerRejections = counter('retrypolicy.breaker.rejections', '{attempt}', 'Attempts the circuit breaker kept back')
    this.stateChanges = counter('retrypolicy.breaker.state_changes', '{change}', "Changes of a circuit breaker's state")
    this.state = meter.createGauge('retrypolicy.breaker.state', {
      unit: '{state}',
      description: "A circuit breaker's state after its last change: 0 closed, 1 open, 2 half-open",
      valueType,
    })
  }
}

/** What each step and state change records, on the instruments of the meter `retrypolicy` of a provider. */
class Recorder {
  /**
   * Span events through `api.trace`; metrics on `meterProvider`'s meter, or, without one, on the
   * meter of the global provider at the time of each record (`api.metrics.getMeterProvider()`:
   * the API has no proxy for metrics, so a provider registered after `instrument` is the one
   * recorded on from then on).
   */
  constructor(api, meterProvider, version) {
    this.trace = api.trace
    this.metrics = api.metrics
    this.fixed = meterProvider ?? (typeof api.metrics.getMeterProvider === 'function' ? undefined : api.metrics)
    this.version = version
    this.valueType = api.ValueType?.INT
    this.provider = undefined
    this.made = undefined
  }

  /** The instruments of the provider recorded on now (made again when the global provider changed). */
  get instruments() {
    const provider = this.fixed ?? this.metrics.getMeterProvider()
    if (provider !== this.provider) {
      this.made = new Instruments(provider.getMeter(SCOPE, this.version), this.valueType)
      this.provider = provider
    }
    return this.made
  }

  /**
   * Records `step`, in the table's order: a budget refusal, a breaker rejection (named by
   * `breakerObject`, the run's breaker, or the default name), then the attempt, the retry
   * (counter, then span event) or the give-up (the same). `http`: the run's rules are the HTTP
   * ones (a retry event carries `http.request.resend_count`).
   */
  step(step, http, breakerObject) {
    const i = this.instruments
    const { budget, breaker } = step
    if (budget !== null && budget !== undefined && !budget.permitted) i.budgetRefusals.add(1, { [BUDGET_KIND]: budget.kind, [RULE]: budget.rule })
    if (breaker !== null && breaker !== undefined && !breaker.permitted) {
      i.breakerRejections.add(1, { [BREAKER_NAME]: breakerObject?.name ?? DEFAULT_BREAKER_NAME, [RULE]: breaker.rule })
    }
    if (step.action === 'send') i.attempts.add(1)
    // What the step is (a retry, a give-up, or neither) is the core's `signal`.
    if (step.signal === 'retry') {
      const because = why(step)
      i.retries.add(1, because)
      const event = { [ATTEMPT]: step.attempt - 1, ...because, [DELAY]: int(step.delayMs) }
      if (http) event[RESEND_COUNT] = step.attempt - 1
      this.trace.getActiveSpan()?.addEvent('retrypolicy.retry', event)
    } else if (step.signal === 'give_up') {
      const ended = { [END]: step.end, ...why(step) }
      i.giveUps.add(1, ended)
      this.trace.getActiveSpan()?.addEvent('retrypolicy.give_up', { [ATTEMPT]: step.attempt, ...ended })
    }
  }

  /** Records a state change (`{from, to, rule}`) of the breaker named `name`: the counter, then the state gauge (one point per name). */
  breakerChanged(change, name) {
    const i = this.instruments
    i.stateChanges.add(1, { [BREAKER_NAME]: name, [BREAKER_FROM]: change.from, [BREAKER_TO]: change.to, [RULE]: change.rule })
    i.state.record(STATES[change.to], { [BREAKER_NAME]: name })
  }
}

/** `@opentelemetry/api`, loaded now (it is an optional peer dependency); an error saying how to get it when it is not installed. */
function loadApi() {
  try {
    return require('@opentelemetry/api')
  } catch (cause) {
    const e = new Error(
      'retrypolicy: otel.instrument() needs @opentelemetry/api, which did not load: npm install @opentelemetry/api ' +
        '(an optional peer dependency of retrypolicy), or pass the module as instrument({api})',
      { cause },
    )
    e.code = 'ERR_RETRYPOLICY_NO_OPENTELEMETRY'
    throw e
  }
}

/** The `otel` namespace; `version` names the meter's instrumentation scope version, `CircuitBreaker` the class of a `record` breaker. */
function makeOtel(version, CircuitBreaker) {
  /**
   * Records every run's and breaker's signals from now on: on the meter `retrypolicy` of
   * `meterProvider` (default: the global one, `api.metrics`, read at each record, so an SDK
   * started after this call is recorded on), span events on the active span.
   * `api`: the `@opentelemetry/api` module (default: loaded now; pass it where `require` cannot
   * find it, e.g. a page). Calling it again replaces the meter.
   */
  function instrument(options) {
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw invalidType('options', 'an options object {meterProvider?, api?}', options)
    }
    const { meterProvider, api = loadApi() } = options ?? {}
    if (typeof api?.metrics?.getMeter !== 'function' || typeof api?.trace?.getActiveSpan !== 'function') {
      throw invalidType('api', 'the @opentelemetry/api module (metrics, trace)', api)
    }
    if (meterProvider !== undefined && meterProvider !== null && typeof meterProvider.getMeter !== 'function') {
      throw invalidType('meterProvider', 'a MeterProvider (getMeter)', meterProvider)
    }
    observers.sink = new Recorder(api, meterProvider ?? undefined, version)
  }

  /** Stops recording: runs (those in flight too) and breakers record nothing from now on. */
  function uninstrument() {
    observers.sink = undefined
  }

  /** Whether `instrument` was called (and `uninstrument` not since). */
  const isInstrumented = () => observers.sink !== undefined

  /**
   * Records one step of a `Run` the host drives itself (`http`: its rules are the HTTP ones, so a
   * retry event carries `http.request.resend_count`; `breaker`: the run's, whose name a breaker
   * rejection carries), as the runners do for theirs; nothing when not instrumented. A breaker's
   * state change is recorded by the breaker.
   */
  function record(step, options) {
    if (step === null || typeof step !== 'object') throw invalidType('step', 'a step of a Run', step)
    if (options !== undefined && options !== null && typeof options !== 'object') throw invalidType('options', 'an options object {http?, breaker?}', options)
    const breaker = options?.breaker ?? undefined
    if (breaker !== undefined && !(breaker instanceof CircuitBreaker)) throw invalidType('breaker', "a CircuitBreaker (the run's) or undefined", breaker)
    observers.sink?.step(step, options?.http === true, breaker)
  }

  return Object.freeze({ instrument, uninstrument, isInstrumented, record, SCOPE })
}

module.exports = { makeOtel, STATES }

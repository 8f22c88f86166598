'use strict'
// Errors shaped like the core's: an `Error` with the stable `code` and the `field` it names. The
// addon throws the core's own; these are for what only JavaScript can see (a value of the wrong
// kind where the addon expects an object or a callback). Then the runners' own errors, and how a
// runner attaches the failure it was handling (`cause`) or the machine's step to an error.

/** An `Error` with `code` and `field`, its message starting with the field. */
function typedError(code, field, detail) {
  const e = new Error(`${field}: ${detail}`)
  e.code = code
  e.field = field
  return e
}

/** An `invalid_type` error: `field` should be `expected`. */
function invalidType(field, expected, value) {
  const got = value === null ? 'null' : typeof value
  return typedError('invalid_type', field, `expected ${expected}, got ${got}`)
}

/** The same error, naming `field` instead (for an item of a batch). */
function renamed(e, field) {
  const old = e.field
  e.message = e.message.startsWith(`${old}: `) ? field + e.message.slice(old.length) : `${field}: ${e.message}`
  e.field = field
  return e
}

/** The code of a run's own timeout error: no classifier retries it (an outer run surfaces it as it is). */
const TIMEOUT_CODE = 'ERR_RETRYPOLICY_TIMEOUT'

/** The run ended at its deadline: `retryStep` is the decision that ended it, `cause` the last error, `retryStats` what the run did. */
class RetryTimeoutError extends Error {
  /** `step`: the machine's done step (or a transaction's `raise_timeout` action); `cause`: the last failure; `stats`: the run's RunStats (none for a transaction). */
  constructor(message, step, cause, stats) {
    super(message, { cause })
    this.name = 'RetryTimeoutError'
    this.code = TIMEOUT_CODE
    this.retryStep = step
    if (stats !== undefined) this.retryStats = stats
  }

  /** Deprecated alias of `retryStep`. */
  get step() {
    return this.retryStep
  }

  /** Deprecated: the step's domain decision (`retryStep.decision`; a transaction's action itself). */
  get decision() {
    return stepDecision(this.retryStep)
  }
}

/** A step's domain decision; a transaction's action is its own. */
const stepDecision = (step) => (step?.decision !== undefined ? step.decision : step)

/** A circuit breaker refused the attempt: nothing was sent. `verdict` is the breaker's. */
class CircuitOpenError extends Error {
  /** `verdict`: the breaker's refusal (reason CIRCUIT_BREAKER_OPEN, rule, source). */
  constructor(verdict) {
    super(`retrypolicy: the circuit breaker refused the attempt (${verdict.rule})`)
    this.name = 'CircuitOpenError'
    this.code = 'ECIRCUITOPEN'
    this.verdict = verdict
  }
}

/**
 * `err` carrying `failure` (the attempt's failure that was being handled) as its `cause`, when it
 * is an object with no cause of its own; anything else is wrapped in an Error with that cause.
 */
function withCause(err, failure) {
  if (failure === undefined || err === failure) return err
  if (err !== null && typeof err === 'object') {
    if (err.cause !== undefined) return err
    if (Object.isExtensible(err)) {
      Object.defineProperty(err, 'cause', { value: failure, writable: true, configurable: true, enumerable: false })
      return err
    }
  }
  return new Error(`retrypolicy: ${String(err)} while handling a failed attempt`, { cause: failure })
}

/**
 * `err` (the error a runner gives up on) with `retryStep`, the decision that ended the run (the
 * machine's done step, or a transaction's action), and `retryStats`, the run's statistics (when
 * given), when it is an object that can take them; and `retryDecision`, the deprecated name of
 * its domain decision, not enumerable.
 */
function withDecision(err, step, stats) {
  if (err !== null && typeof err === 'object' && Object.isExtensible(err)) {
    err.retryStep = step
    if (stats !== undefined) err.retryStats = stats
    Object.defineProperty(err, 'retryDecision', { value: stepDecision(step), writable: true, configurable: true, enumerable: false })
  }
  return err
}

module.exports = {
  typedError, invalidType, renamed, TIMEOUT_CODE, RetryTimeoutError, CircuitOpenError, withCause, withDecision,
}

'use strict'
// `retry(fn, options)`: the retry loop every adopter would otherwise write, a thin loop over the
// core's run machine (`Run`): it reads the clock, draws, calls `fn`, turns what it threw into an
// outcome, sleeps, reports and throws. Whether to send, wait or stop, and how long, is the machine's.

const { invalidType } = require('./errors.js')

/** A Node built-in, or null where there is none (a browser bundle of the wasm package). */
function builtin(name) {
  try {
    return require(name)
  } catch {
    return null
  }
}
const timers = builtin('node:timers/promises')
const { performance } = globalThis // Node's perf_hooks one, or the browser's

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the hooks still report.
const channel = builtin('node:diagnostics_channel')?.channel(DECISION_CHANNEL)

/** Publishes `message` (`{runner, step?, decision, error, attempt}`) when someone listens. */
function publishMessage(message) {
  if (channel?.hasSubscribers) channel.publish(message)
}

/** The code of a run's own timeout error: no classifier retries it (an outer run surfaces it as it is). */
const TIMEOUT_CODE = 'ERR_RETRYPOLICY_TIMEOUT'

/** The run ended at its deadline: `step` is the machine's last step, `decision` its decision, `cause` the last error. */
class RetryTimeoutError extends Error {
  /** `step`: the step that ended the run (or a transaction's action); `cause`: the last failure. */
  constructor(message, step, cause) {
    super(message, { cause })
    this.name = 'RetryTimeoutError'
    this.code = TIMEOUT_CODE
    this.step = step
    this.decision = step?.decision !== undefined ? step.decision : step
  }
}

/** setTimeout's longest delay (2^31 − 1 ms): a longer one fires at once, so longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** One timer of at most MAX_TIMER_MS, cancelled by `signal`. */
function oneTimer(ms, signal) {
  if (timers) return timers.setTimeout(ms, undefined, signal ? { signal } : undefined)
  return new Promise((resolve, reject) => {
    const stop = () => (clearTimeout(id), reject(signal.reason))
    const id = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms)
    signal?.addEventListener('abort', stop, { once: true })
  })
}

/** The default sleep: `timers/promises` `setTimeout` (a timer otherwise), chained past 2^31 − 1 ms, cancelled by `signal`. */
async function defaultSleep(ms, signal) {
  for (let left = ms; left > MAX_TIMER_MS; left -= MAX_TIMER_MS) await oneTimer(MAX_TIMER_MS, signal)
  await oneTimer(ms > MAX_TIMER_MS ? ms % MAX_TIMER_MS : ms, signal)
}

/**
 * A signal that aborts `ms` from now with a TimeoutError (timers chained past 2^31 − 1 ms, so it
 * never fires early), and `clear()` to drop its timer. A real timer: the bound of an attempt in flight;
 * `unref`: it keeps no process alive.
 */
function timeoutSignal(ms, what, unref = false) {
  const ac = new AbortController()
  let id
  const arm = (left) => {
    id = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : ac.abort(timeoutError(ms, what))), Math.min(left, MAX_TIMER_MS))
    if (unref) id?.unref?.() // as AbortSignal.timeout's: it keeps no process alive
  }
  arm(Math.max(0, ms))
  return { signal: ac.signal, clear: () => clearTimeout(id) }
}

/** The TimeoutError an attempt's bound aborts with (a DOMException, as AbortSignal.timeout's). */
const timeoutError = (ms, what) => new DOMException(`retrypolicy: ${what} did not end within ${ms} ms`, 'TimeoutError')

/** One signal out of the defined ones (undefined for none). */
function anySignal(signals) {
  const present = signals.filter(Boolean)
  return present.length > 1 ? AbortSignal.any(present) : present[0]
}

/**
 * The bound of one attempt of `retry`: a real timer firing `ms` from now (chained past 2^31 − 1 ms),
 * and the signal `fn` gets (made on first read, as an AbortController costs a few µs): it aborts
 * with a TimeoutError when the timer fires, or with the caller's reason when `caller` aborts.
 */
function attemptBound(ms, what, caller) {
  let controller
  let signal
  let timer
  let onCut
  const bound = {
    fired: false,
    reason: undefined,
    /** The attempt's signal. */
    get signal() {
      if (signal === undefined) {
        controller = new AbortController()
        if (bound.fired) controller.abort(bound.reason)
        signal = anySignal([caller, controller.signal])
      }
      return signal
    },
    /** Calls `f` when the bound fires (at once if it has). */
    onFire(f) {
      onCut = f
      if (bound.fired) f()
    },
    /** Drops the timer. */
    clear: () => clearTimeout(timer),
  }
  const fire = () => {
    bound.fired = true
    bound.reason = timeoutError(ms, `attempt ${what}`)
    controller?.abort(bound.reason)
    onCut?.()
  }
  const arm = (left) => {
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fire()), Math.min(left, MAX_TIMER_MS))
  }
  if (ms !== undefined) arm(Math.max(0, ms))
  return bound
}

/** `['ok', value]`, `['error', err]`, or `['cut']` when `bound` fires or `caller` aborts first (the promise is still handled). */
function settle(promise, bound, caller) {
  return new Promise((resolve) => {
    const cut = () => resolve(['cut'])
    const done = () => caller?.removeEventListener('abort', cut)
    promise.then((v) => (done(), resolve(['ok', v])), (e) => (done(), resolve(['error', e])))
    bound.onFire(cut)
    if (caller?.aborted) cut()
    else caller?.addEventListener('abort', cut, { once: true })
  })
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

/** Sleeps `ms` (none for 0); an abort rejects with the signal's reason. */
async function pause(sleep, ms, signal) {
  if (ms > 0) {
    try {
      await sleep(ms, signal)
    } catch (e) {
      signal?.throwIfAborted()
      throw e
    }
  }
  signal?.throwIfAborted()
}

/** The options every runner shares, checked, with their defaults. */
function runnerOptions(o) {
  if (o === null || typeof o !== 'object') throw invalidType('options', 'an options object', o)
  for (const k of ['classify', 'onRetry', 'onGiveUp', 'clock', 'random', 'sleep', 'now']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw invalidType(k, 'a function', o[k])
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalidType('signal', 'an AbortSignal', o.signal)
  return {
    clock: o.clock ?? (() => performance.now()),
    random: o.random ?? Math.random,
    now: o.now ?? Date.now,
    sleep: o.sleep ?? defaultSleep,
    signal: o.signal,
    onRetry: o.onRetry,
    onGiveUp: o.onGiveUp,
  }
}

/**
 * Throws `invalid_type` for a run option (`timeoutMs`, `maxAttempts`, `attemptTimeoutMs`) that is
 * neither a number nor a BigInt: the wire form would read a decimal string as a number.
 */
function checkRunNumbers(options) {
  for (const k of ['timeoutMs', 'maxAttempts', 'attemptTimeoutMs']) {
    const v = options[k]
    if (v !== undefined && v !== null && typeof v !== 'number' && typeof v !== 'bigint') throw invalidType(k, 'a number', v)
  }
}

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
 * Drives `run` to its end, doing what each step says: `send(step)` makes the attempt and resolves
 * with `[outcome, result]` (the result: a value, an error or a response); a wait sleeps; `done`
 * returns `{step, result}` (the last attempt's result, or a CircuitOpenError when the breaker kept
 * the next one back); `discard(result)` before a wait. An abort cancels the run and rejects with
 * the signal's reason. An error raised while handling a failed attempt (the machine refusing the
 * clock, a hook) carries that failure as its `cause`.
 */
async function drive(runner, run, o, send, discard) {
  let step = run.start(o.clock(), o.random())
  let result
  let failure // the last failed attempt's result, while it is being handled
  const cancelled = (e) => {
    try {
      run.cancel(o.clock())
    } catch {
      // the run already ended, or the clock is what failed: the error at hand is the one to surface
    }
    return withCause(e, failure)
  }
  for (;;) {
    if (step.action === 'send') {
      if (o.signal?.aborted) throw cancelled(o.signal.reason)
      failure = undefined
      let outcome
      try {
        ;[outcome, result] = await send(step)
      } catch (e) {
        throw cancelled(e) // an abort, or an error the runner cannot report (a fetch misuse)
      }
      if (outcome.kind !== 'success') failure = result
      try {
        step = run.attemptEnded(outcome, o.clock(), o.random(), outcome.kind === 'http' ? o.now() : undefined)
      } catch (e) {
        throw cancelled(e)
      }
      continue
    }
    if (step.breaker?.permitted === false) result = new CircuitOpenError(step.breaker) // the attempt it kept back
    try {
      if (step.action === 'done') {
        if (step.end !== 'succeeded' && step.end !== 'final') {
          publish(runner, step, result)
          o.onGiveUp?.(step, result)
        }
        return { step, result }
      }
      publish(runner, step, result)
      o.onRetry?.(step, result)
      await discard?.(result, step)
      await pause(o.sleep, step.delayMs, o.signal)
      step = run.waitEnded(o.clock(), o.random())
    } catch (e) {
      throw cancelled(e)
    }
  }
}

/** Publishes `{runner, step, decision, error, attempt}` when someone listens. */
function publish(runner, step, error) {
  if (channel?.hasSubscribers) publishMessage({ runner, step, decision: step.decision, error, attempt: step.attempt })
}

/** `retry` over the binding's `Run`, turning errors into outcomes with `errorOutcome` unless `classify` is given. */
function makeRetry(Run, errorOutcome) {
  /** Runs `fn({attempt, remainingMs, signal})` until it succeeds or the run machine says stop. */
  async function retry(fn, options) {
    if (typeof fn !== 'function') throw invalidType('fn', 'a function', fn)
    const o = runnerOptions(options)
    checkRunNumbers(options)
    const { operation, timeoutMs, maxAttempts, attemptTimeoutMs, policy, strategy, idempotent, budget, breaker, classify } = options
    if (operation === null || typeof operation !== 'object') throw invalidType('operation', 'an operation object', operation)
    const config = { rules: { decide: { operation, idempotent, policy } }, timeoutMs, maxAttempts, attemptTimeoutMs }
    const run = new Run(config, { budget, breaker, strategy })
    const outcomeOf = classify === undefined ? errorOutcome : (e) => reasonOutcome(classify(e))
    const attempt = async (step) => {
      // the attempt's signal fires at its bound (the deadline or the attempt timeout) or at the
      // caller's abort, and the attempt is awaited no longer than that, whatever `fn` does
      const ms = step.timeoutMs === null || step.timeoutMs === undefined ? undefined : Number(step.timeoutMs)
      const bound = attemptBound(ms, step.attempt, o.signal)
      try {
        let call
        try {
          const context = { attempt: step.attempt, remainingMs: step.timeoutMs, get signal() { return bound.signal } }
          call = Promise.resolve(fn(context))
        } catch (e) {
          call = Promise.reject(e)
        }
        const [how, value] = await settle(call, bound, o.signal)
        if (how === 'ok') return [SUCCESS, value]
        o.signal?.throwIfAborted()
        if (bound.fired) return [TIMEOUT, how === 'cut' ? bound.reason : value]
        try {
          return [outcomeOf(value), value]
        } catch (e) {
          throw withCause(e, value) // the classifier failed: the attempt's failure is its cause
        }
      } finally {
        bound.clear()
      }
    }
    const { step, result } = await drive('retry', run, o, attempt)
    if (step.end === 'succeeded') return result
    if (step.end === 'final') throw result
    if (step.end === 'timed_out') {
      throw new RetryTimeoutError(`retrypolicy: gave up at the deadline after ${step.attempt} attempts`, step, result)
    }
    throw withDecision(result, step)
  }
  return retry
}

const SUCCESS = Object.freeze({ kind: 'success' })
const FINAL = Object.freeze({ kind: 'final' })
const TIMEOUT = Object.freeze({ kind: 'timeout' })

/** A classifier's answer as an outcome: a reason the host named, or final (null/undefined). */
const reasonOutcome = (reason) => (reason === null || reason === undefined ? FINAL : { kind: 'reason', reason })

/** `err` with `retryDecision` (the machine's decision) and `retryStep` set (when it is an object that can take them). */
function withDecision(err, step) {
  if (err !== null && typeof err === 'object' && Object.isExtensible(err)) {
    err.retryDecision = step.decision
    err.retryStep = step
  }
  return err
}

// ---- classifiers: a thrown error → a RetryReason name, or null (surface it now) -------------------

// Conversion, not a rule: whether a failed request may have left, read off the error codes only
// JavaScript sees (Node's and undici's). false: it surely did not (refused, no DNS answer, no route,
// a connect timeout); true: it may have reached the server. Other codes are not network failures.
const MAY_HAVE_BEEN_SENT = new Map([
  ['ECONNREFUSED', false], ['ENOTFOUND', false], ['EAI_AGAIN', false], ['ENETUNREACH', false],
  ['EHOSTUNREACH', false], ['EADDRNOTAVAIL', false], ['UND_ERR_CONNECT_TIMEOUT', false],
  ['ECONNRESET', true], ['EPIPE', true], ['ETIMEDOUT', true], ['ECONNABORTED', true], ['UND_ERR_SOCKET', true],
  ['UND_ERR_CLOSED', true], ['UND_ERR_HEADERS_TIMEOUT', true], ['UND_ERR_BODY_TIMEOUT', true],
])

/**
 * Whether the network failure behind `err` (its own code, or its causes', e.g. fetch's `TypeError:
 * fetch failed`) may have sent the request: true or false; null when it is no network failure.
 */
function mayHaveBeenSent(err) {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = e.cause, depth++) {
    const { code, syscall } = e.code === undefined && Array.isArray(e.errors) ? e.errors[0] ?? {} : e
    if (code === 'ETIMEDOUT' && syscall === 'connect') return false
    const sent = MAY_HAVE_BEEN_SENT.get(code)
    if (sent !== undefined) return sent
  }
  return null
}

/** The HTTP status an error carries (`status`, `statusCode` or `response.status`, as fetch's Response, got, ky and axios have it), or undefined. */
function errorStatus(err) {
  if (err === null || typeof err !== 'object') return undefined
  const s = err.status ?? err.statusCode ?? err.response?.status
  return Number.isInteger(s) && s >= 100 && s <= 599 ? s : undefined
}

/** The `Retry-After` header of the response behind `err` (a Headers object or a plain object), or undefined. */
function errorRetryAfter(err) {
  const h = err.response?.headers ?? err.headers
  if (h === null || typeof h !== 'object') return undefined
  const v = typeof h.get === 'function' ? h.get('retry-after') : h['retry-after'] ?? h['Retry-After']
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined
}

/**
 * The default conversion of a thrown error into an outcome (the machine classifies it): a network
 * failure (with whether the request may have left), an HTTP status failure with its Retry-After,
 * or final (a run's own RetryTimeoutError included: an outer run never retries it).
 */
function errorOutcome(err) {
  if (err?.code === TIMEOUT_CODE) return FINAL
  const sent = mayHaveBeenSent(err)
  if (sent !== null) return { kind: 'network', sent }
  const status = errorStatus(err)
  if (status !== undefined) return { kind: 'http', status, retryAfter: errorRetryAfter(err) }
  return FINAL
}

/** The classifiers over the core's `classifyDispatch` and `http.classify`. */
function makeClassifiers(classifyDispatch, http) {
  // The core's two reasons, asked once (a call per error cost ~1 µs): a request that may have been
  // in flight (the HTTP network error's `retry_reason`) and one whose socket was never available.
  const inFlight = http.classify(undefined, true).retryReason
  const notSent = classifyDispatch('socket_not_available').reason
  /** A Node/undici network error → SOCKET_NOT_AVAILABLE (not sent) or SOCKET_CLOSED_WHILE_IN_FLIGHT; else null. */
  const classifyNetworkError = (err) => {
    const sent = err?.code === TIMEOUT_CODE ? null : mayHaveBeenSent(err) // a run's timeout, not its cause
    return sent === null ? null : sent ? inFlight : notSent
  }
  /** An error with an HTTP status → the core's `retry_reason` for it (null when final); no status → null. */
  const classifyHttpStatus = (err) => {
    const status = errorStatus(err)
    if (status === undefined) return null
    try {
      return http.classify(status).retryReason
    } catch (e) {
      if (e?.code === 'out_of_range') return null // 1xx
      throw e
    }
  }
  /** A network error, else an HTTP status error, else null (a RetryTimeoutError included). */
  const classifyError = (err) => classifyNetworkError(err) ?? classifyHttpStatus(err)
  return { classifyNetworkError, classifyHttpStatus, classifyError }
}

module.exports = {
  makeRetry, makeClassifiers, errorOutcome, drive, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, publishMessage, pause,
  runnerOptions, mayHaveBeenSent, withDecision, TIMEOUT_CODE, MAX_TIMER_MS, timeoutSignal, checkRunNumbers, anySignal, withCause,
}

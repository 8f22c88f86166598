'use strict'
// The host loop every runner shares: the options it takes (clock, draw, sleep, signal, hooks),
// the diagnostics channel it publishes on, how it starts a run (`runStarts`), and `drive`, which
// does what each step of a run says.

const { invalidType, CircuitOpenError, withCause } = require('./errors.js')
const { defaultSleep, pause } = require('./timers.js')

const { performance } = globalThis // Node's perf_hooks one, or the browser's

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the hooks still report.
const channel = (() => {
  try {
    return require('node:diagnostics_channel').channel(DECISION_CHANNEL)
  } catch {
    return undefined
  }
})()

/** Publishes `message` (`{runner, step?, decision, error, attempt}`) when someone listens. */
function publishMessage(message) {
  if (channel?.hasSubscribers) channel.publish(message)
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
function checkRunNumbers(o) {
  for (const k of ['timeoutMs', 'maxAttempts', 'attemptTimeoutMs']) {
    const v = o[k]
    if (v !== undefined && v !== null && typeof v !== 'number' && typeof v !== 'bigint') throw invalidType(k, 'a number', v)
  }
}

/** A step as the addon's `make` hands it over: the core's RunStep's keys, in its order, camelCase. */
function makeStep(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChange) {
  return { action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChange }
}

/** A `decide` decision in a step, as the addon's `make.decision` hands it over: the wire form's keys, camelCase. */
makeStep.decision = function decision(retry, delayMs, capped, thenCancel, reason, rule, section, cause, attempts, idempotent) {
  return retry
    ? { action: 'retry', delayMs, capped, thenCancel, reason, rule, section, attempts, idempotent }
    : { action: 'no_retry', cause, reason, rule, section, attempts, idempotent }
}

/** A budget's verdict in a step, as the addon's `make.budget` hands it over. */
makeStep.budget = function budget(permitted, cause, kind, rule, source, balance) {
  return { permitted, cause, kind, rule, source, balance }
}

/** A breaker's verdict in a step, as the addon's `make.breaker` hands it over. */
makeStep.breaker = function breaker(permitted, canary, state, reason, rule, source) {
  return { permitted, canary, state, reason, rule, source }
}

/** A run's first step as `RunConfigHandle.start` hands it over with the run: `[run, step]`. */
function makeStarted(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChange, run) {
  return [run, makeStep(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChange)]
}
Object.assign(makeStarted, { decision: makeStep.decision, budget: makeStep.budget, breaker: makeStep.breaker })

/**
 * `prepare(config)` → `{start(opts, nowMs, random)}`, which starts a run of `config` with `opts`'
 * `{budget, breaker, strategy}` and returns `[run, its first step]`; `run` takes the events of the
 * facade's `Run` (attemptEnded, waitEnded, cancel) and, over the addon, `succeeded(nowMs)`. Over a
 * backend with `RunConfigHandle` (the addon; `prepared` carries the facade's conversions) the
 * configuration is converted and checked once by `prepare`, a run is created and started in one
 * call, and each step is built by `makeStep` from positional arguments. Otherwise (the wasm
 * backend) a start is `new Run(config, opts)`, then `start`.
 * Measured in bench/runners.mjs (BENCHMARKS.md): `new Run` cost about 23 µs of `retry`'s 60 (the
 * configuration written as JSON text and parsed per run), and each step built key by key through
 * N-API 5-10 µs.
 */
function runStarts(Run, prepared) {
  if (prepared === undefined) {
    return (config) => ({
      start(opts, nowMs, random) {
        const run = new Run(config, opts)
        return [run, run.start(nowMs, random)]
      },
    })
  }
  const { RunConfigHandle, runConfigText, budgetHandle, breakerHandle, hostStrategy, camelError } = prepared
  /** One run over the addon's handle, with its budget, breaker and strategy handles. */
  class PreparedRun {
    constructor(h, budget, breaker, strategy, strategyPolicy) {
      this.h = h
      this.budget = budget
      this.breaker = breaker
      this.strategy = strategy
      this.strategyPolicy = strategyPolicy
    }

    /** The attempt ended with `outcome` (never a `mongodb` one: no runner here makes one). */
    attemptEnded(outcome, nowMs, random, nowUnixMs) {
      try {
        return this.h.attemptEnded(this.budget, this.breaker, outcome, nowMs, random, nowUnixMs, this.strategy,
          this.strategyPolicy, undefined, makeStep)
      } catch (e) {
        throw camelError(e)
      }
    }

    /** The attempt succeeded: the run is done, and no step is built. */
    succeeded(nowMs) {
      try {
        this.h.succeeded(this.budget, this.breaker, nowMs)
      } catch (e) {
        throw camelError(e)
      }
    }

    /** The wait is over. */
    waitEnded(nowMs, random) {
      try {
        return this.h.waitEnded(this.budget, this.breaker, nowMs, random, this.strategy, this.strategyPolicy, makeStep)
      } catch (e) {
        throw camelError(e)
      }
    }

    /** The host cancelled the run. */
    cancel(nowMs) {
      try {
        return this.h.cancel(this.budget, this.breaker, nowMs, makeStep)
      } catch (e) {
        throw camelError(e)
      }
    }
  }
  return (config) => {
    let handle
    try {
      handle = new RunConfigHandle(runConfigText(config))
    } catch (e) {
      throw camelError(e)
    }
    return {
      start(opts, nowMs, random) {
        const { budget, breaker, strategy } = opts
        const b = budgetHandle(budget)
        const k = breakerHandle(breaker)
        const [s, sp] = strategy === undefined || strategy === null ? [undefined, undefined] : hostStrategy(strategy)
        let started
        try {
          started = handle.start(b, k, nowMs, random, s, sp, makeStarted)
        } catch (e) {
          throw camelError(e)
        }
        return [new PreparedRun(started[0], b, k, s, sp), started[1]]
      },
    }
  }
}

/**
 * Drives the run `start(nowMs, random)` starts (it returns `[run, its first step]`) to its end,
 * doing what each step says: `send(step)` makes the attempt and resolves with `[outcome, result]`
 * (the result: a value, an error or a response); a wait sleeps; `done` returns `{step, result}`
 * (the last attempt's result, or a CircuitOpenError when the breaker kept the next one back;
 * `step` is null after a success told through `run.succeeded`); `discard(result, step)` before a
 * wait. An abort cancels the run and rejects with the signal's reason. An error raised while handling a failed attempt (the machine refusing
 * the clock, a hook) carries that failure as its `cause`.
 */
async function drive(runner, start, o, send, discard) {
  const started = start(o.clock(), o.random())
  const run = started[0]
  let step = started[1]
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
      else if (run.succeeded !== undefined) {
        try {
          run.succeeded(o.clock())
        } catch (e) {
          throw cancelled(e)
        }
        return { step: null, result } // done, succeeded: no step is built for it
      }
      try {
        step = run.attemptEnded(outcome, o.clock(), o.random(), outcome.kind === 'http' ? o.now() : undefined)
      } catch (e) {
        throw cancelled(e)
      }
      continue
    }
    if (step.breaker?.permitted === false) result = new CircuitOpenError(step.breaker) // the attempt it kept back
    if (step.end === 'succeeded' || step.end === 'final') return { step, result }
    try {
      if (channel?.hasSubscribers) channel.publish({ runner, step, decision: step.decision, error: result, attempt: step.attempt })
      if (step.action === 'done') {
        o.onGiveUp?.(step, result)
        return { step, result }
      }
      o.onRetry?.(step, result)
      await discard?.(result, step)
      await pause(o.sleep, step.delayMs, o.signal)
      step = run.waitEnded(o.clock(), o.random())
    } catch (e) {
      throw cancelled(e)
    }
  }
}

module.exports = { DECISION_CHANNEL, publishMessage, runnerOptions, checkRunNumbers, makeStep, runStarts, drive }

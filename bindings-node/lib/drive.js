'use strict'
// The host loop every runner shares: the options it takes (clock, draw, sleep, signal, hooks),
// the testing switch (`setTesting`), the diagnostics channel it publishes on, how it starts a run
// (`runStarts`), and `drive`, which does what each step of a run says and records it for
// OpenTelemetry when instrumented (./observe.js's sink).

const { invalidType, typedError, CircuitOpenError, withCause } = require('./errors.js')
const { defaultSleep, pause } = require('./timers.js')
const { runStats, frozenStep } = require('./json.js')
const { channelNamed, observers, rethrowLater } = require('./observe.js')

const { performance } = globalThis // Node's perf_hooks one, or the browser's

/** The diagnostics channel every runner publishes each decision on. */
const DECISION_CHANNEL = 'retrypolicy:decision'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the hooks still report.
const channel = channelNamed(DECISION_CHANNEL)

/** Publishes `message` (`{runner, step?, decision, error, attempt}`) when someone listens. */
function publishMessage(message) {
  if (channel?.hasSubscribers) channel.publish(message)
}

// ---- testing: instant sleeps and seeded draws --------------------------------------------------

/** The testing switch (`setTesting`): `instant` skips every runner's sleeps; `seed` seeds the draws of a runner given no `random`. */
const testing = { instant: false, seed: undefined }

/** How many skipped waits a testing run makes before it yields to the macrotask queue (timers, I/O) once. */
const YIELD_EVERY = 64

/** Lets timers and I/O run (setImmediate where there is one, a 0 ms timer in a page). */
const yieldToLoop = () => new Promise((resolve) => (globalThis.setImmediate ?? setTimeout)(resolve))

/**
 * A testing run's time: its `clock` and `now` read the run's own (or the default) clock plus every
 * wait skipped so far, and its `sleep` skips the wait (the call's `sleep` too) and adds it, so the
 * run, its budget and its breaker see the time a real run would, and decide as it would.
 */
function skippedTime(clock, now) {
  let skipped = 0
  let waits = 0
  return {
    clock: () => clock() + skipped,
    now: () => now() + skipped,
    sleep: async (ms) => {
      skipped += ms
      if (++waits % YIELD_EVERY === 0) await yieldToLoop()
    },
  }
}

/**
 * Sets testing mode for every runner (retry, retryFetch, mongodb.runTransaction) until set again:
 * `true` makes their sleeps instant (a `sleep` option is skipped too) and each run's clock (its
 * own `clock` and `now`, or the default) run ahead by every wait skipped, so the decisions, hooks,
 * channels and signals are those of a real run (a run failing until its deadline makes the same
 * attempts), keeping a seed set before; `false` makes them real again and drops the seed;
 * `{instant?, seed?}` sets both
 * (`instant` defaults to true), `seed` (an integer) drawing each run's jitter from its own
 * generator seeded with it (unless the call gives `random`), so every run draws the same sequence.
 */
function setTesting(mode) {
  if (typeof mode === 'boolean') {
    testing.instant = mode
    if (!mode) testing.seed = undefined // `true` keeps a seed set before; `false` ends testing mode
    return
  }
  if (mode === null || typeof mode !== 'object') throw invalidType('testing', 'a boolean or {instant?, seed?}', mode)
  const { instant = true, seed } = mode
  if (typeof instant !== 'boolean') throw invalidType('instant', 'a boolean', instant)
  if (seed !== undefined && seed !== null && !Number.isSafeInteger(seed)) {
    if (typeof seed !== 'number') throw invalidType('seed', 'an integer', seed)
    throw typedError('out_of_range', 'seed', `${seed} is out of range: expected an integer`)
  }
  testing.instant = instant
  testing.seed = seed ?? undefined
}

/** Whether testing mode is on (instant sleeps, or seeded draws). */
const isTesting = () => testing.instant || testing.seed !== undefined

/** Draws in [0, 1) from `seed` (mulberry32): the same sequence for the same seed. */
function seededDraws(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The options every runner shares, checked, with their defaults (and the testing switch's). */
function runnerOptions(o) {
  if (o === null || typeof o !== 'object') throw invalidType('options', 'an options object', o)
  for (const k of ['classify', 'onRetry', 'onBreakerWait', 'onGiveUp', 'onStats', 'clock', 'random', 'sleep', 'now']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw invalidType(k, 'a function', o[k])
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalidType('signal', 'an AbortSignal', o.signal)
  const clock = o.clock ?? (() => performance.now())
  const now = o.now ?? Date.now
  return {
    clock,
    now,
    sleep: o.sleep ?? defaultSleep,
    ...(testing.instant ? skippedTime(clock, now) : {}),
    random: o.random ?? (testing.seed === undefined ? Math.random : seededDraws(testing.seed)),
    signal: o.signal,
    onRetry: o.onRetry,
    onBreakerWait: o.onBreakerWait,
    onGiveUp: o.onGiveUp,
    onStats: o.onStats,
    breaker: o.breaker, // the run's breaker, whose name a rejection's metric carries
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
function makeStep(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChanges, signal) {
  return { action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChanges, signal }
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
function makeStarted(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChanges, signal, run) {
  return [run, makeStep(action, attempt, timeoutMs, delayMs, end, reason, rule, section, elapsedMs, retryAfterMs, decision, budget, breaker, breakerChanges, signal)]
}
Object.assign(makeStarted, { decision: makeStep.decision, budget: makeStep.budget, breaker: makeStep.breaker })

/**
 * An outcome a runner made (./outcome.js: success, final, timeout, reason, network, http; no key
 * but `retryAfter` camelCase, a whole status; a reason is the caller's `classify` answer, checked
 * to be a string) as JSON text in the wire form. Not the facade's `outcomeText`, which checks any
 * caller's object (toWire, documentText): 1.9 µs a failed attempt against 0.14 µs, of a run's
 * 17 µs in bench/runners.mjs (BENCHMARKS.md).
 */
function runnerOutcomeText(outcome) {
  checkOutcomeReason(outcome)
  const { retryAfter, ...wire } = outcome
  return JSON.stringify(retryAfter === undefined ? wire : { ...wire, retry_after: retryAfter })
}

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
  const { RunConfigHandle, runConfigText, budgetHandle, breakerHandle, hostStrategy, camelError, breakerStepChanged } = prepared
  /** One run over the addon's handle, with its budget, breaker and strategy handles (and the breaker, which reports its changes). */
  class PreparedRun {
    constructor(h, budget, breaker, strategy, strategyPolicy, breakerObject) {
      this.h = h
      this.budget = budget
      this.breaker = breaker
      this.strategy = strategy
      this.strategyPolicy = strategyPolicy
      this.breakerObject = breakerObject
    }

    /** `step`, frozen, once each breaker change it carries is reported by the breaker, in order. */
    reported(step) {
      if (this.breakerObject !== undefined) breakerStepChanged(this.breakerObject, step.breakerChanges)
      return frozenStep(step)
    }

    /** The attempt ended with `outcome` (`{kind, ...}`). */
    attemptEnded(outcome, nowMs, random, nowUnixMs) {
      let step
      try {
        step = this.h.attemptEnded(this.budget, this.breaker, runnerOutcomeText(outcome), nowMs, random, nowUnixMs,
          this.strategy, this.strategyPolicy, makeStep)
      } catch (e) {
        throw camelError(e)
      }
      return this.reported(step)
    }

    /** The attempt succeeded: the run is done, and no step is built (the breaker's changes are reported). */
    succeeded(nowMs) {
      let changes
      try {
        changes = this.h.succeeded(this.budget, this.breaker, nowMs)
      } catch (e) {
        throw camelError(e)
      }
      if (changes !== null && changes !== undefined && this.breakerObject !== undefined) breakerStepChanged(this.breakerObject, changes)
    }

    /** The wait is over. */
    waitEnded(nowMs, random) {
      let step
      try {
        step = this.h.waitEnded(this.budget, this.breaker, nowMs, random, this.strategy, this.strategyPolicy, makeStep)
      } catch (e) {
        throw camelError(e)
      }
      return this.reported(step)
    }

    /** The host cancelled the run. */
    cancel(nowMs) {
      let step
      try {
        step = this.h.cancel(this.budget, this.breaker, nowMs, makeStep)
      } catch (e) {
        throw camelError(e)
      }
      return this.reported(step)
    }

    /** What the run did so far (the core's RunStats, camelCase, frozen). */
    get stats() {
      return runStats(this.h.statsJson())
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
        const run = new PreparedRun(started[0], b, k, s, sp, k === undefined ? undefined : breaker)
        return [run, run.reported(started[1])]
      },
    }
  }
}

/**
 * Drives the run `start(nowMs, random)` starts (it returns `[run, its first step]`) to its end,
 * doing what each step says: `send(step)` makes the attempt and resolves with `[outcome, result]`
 * (the result: a value, an error or a response); a wait sleeps; `done` returns `{step, result,
 * stats}` (the last attempt's result, or a CircuitOpenError when the breaker kept the next one
 * back; `step` is null after a success told through `run.succeeded`; `stats`, the run's RunStats,
 * read when `onStats` wants them or the run did not succeed or end final); `discard(result, step)`
 * before a wait. `onStats(stats)` is called once the run is over, whatever the end. Each step is
 * recorded for OpenTelemetry while it is instrumented (read at each step: `uninstrument` stops a
 * run in flight too; `http`: the runner is fetch). An abort
 * cancels the run and rejects with the signal's reason. An error raised while handling a failed
 * attempt (the machine refusing the clock, a hook) carries that failure as its `cause`.
 */
async function drive(runner, start, o, send, discard) {
  const http = runner === 'fetch'
  const started = start(o.clock(), o.random())
  const run = started[0]
  let step = started[1]
  observers.sink?.step(step, http, o.breaker)
  let result
  let failure // the last failed attempt's result, while it is being handled
  let told = false // whether onStats was called
  const cancelled = (e) => {
    try {
      run.cancel(o.clock())
    } catch {
      // the run already ended, or the clock is what failed: the error at hand is the one to surface
    }
    if (o.onStats !== undefined && !told) {
      told = true
      try {
        o.onStats(run.stats)
      } catch (h) {
        rethrowLater(h) // the error at hand is the one to surface
      }
    }
    return withCause(e, failure)
  }
  /** The run is over at `step` (null: a success told through `run.succeeded`): its statistics when wanted, told to onStats. */
  const ended = (step, result) => {
    const giveUp = step !== null && step.end !== 'succeeded' && step.end !== 'final'
    const stats = giveUp || o.onStats !== undefined ? run.stats : undefined
    if (o.onStats !== undefined) {
      told = true
      if (step === null || step.end === 'succeeded') o.onStats(stats) // its error rejects the call
      else {
        try {
          o.onStats(stats)
        } catch (h) {
          rethrowLater(h) // the run's own error (a give-up, a timeout, a final error) is the one to surface
        }
      }
    }
    return { step, result, stats }
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
        return ended(null, result) // done, succeeded: no step is built for it
      }
      try {
        step = run.attemptEnded(outcome, o.clock(), o.random(), outcome.kind === 'http' ? o.now() : undefined)
        observers.sink?.step(step, http, o.breaker)
      } catch (e) {
        throw cancelled(e)
      }
      continue
    }
    if (step.breaker?.permitted === false) result = new CircuitOpenError(step.breaker) // the attempt it kept back
    if (step.end === 'succeeded' || step.end === 'final') return ended(step, result)
    try {
      if (channel?.hasSubscribers) channel.publish({ runner, step, decision: step.decision, error: result, attempt: step.attempt })
      // Each hook fires on its signal, the core's (RunSignal): none of them on a final or cancelled
      // end. An async hook is awaited: its rejection cancels the run as a throw does.
      if (step.signal === 'retry') await o.onRetry?.(step, result)
      else if (step.signal === 'breaker_wait') await o.onBreakerWait?.(step, result)
      else if (step.signal === 'give_up') await o.onGiveUp?.(step, result)
      if (step.action === 'done') break
      await discard?.(result, step)
      await pause(o.sleep, step.delayMs, o.signal)
      step = run.waitEnded(o.clock(), o.random())
      observers.sink?.step(step, http, o.breaker)
    } catch (e) {
      throw cancelled(e)
    }
  }
  return ended(step, result)
}

/** Throws `invalid_type` naming `outcome.reason` for a `reason` outcome whose reason is given but not a string (a classifier's answer). */
function checkOutcomeReason(outcome) {
  if (outcome.kind === 'reason' && outcome.reason !== undefined && typeof outcome.reason !== 'string') throw invalidType('outcome.reason', 'a retry reason name', outcome.reason)
}

module.exports = { checkOutcomeReason, DECISION_CHANNEL, publishMessage, runnerOptions, checkRunNumbers, makeStep, runStarts, drive, setTesting, isTesting }

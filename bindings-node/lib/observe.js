'use strict'
// What runs and breakers report as they go, with nothing of OpenTelemetry loaded: a breaker's state
// changes (its `onStateChange` callback, its 'stateChange' event and the BREAKER_CHANNEL
// diagnostics channel), and the hand-off to ./otel.js while it is instrumented (`observers.sink`).
// Conversion only: each change is the core's (`CircuitBreaker::last_changes`, a step's
// `breaker_changes`: every change a call made, in order), reported as it came, one at a time.

/** The `node:diagnostics_channel` channel `name`, or undefined where that module does not exist (a page). */
function channelNamed(name) {
  try {
    return require('node:diagnostics_channel').channel(name)
  } catch {
    return undefined
  }
}

/** The diagnostics channel on which every breaker publishes each change of its state. */
const BREAKER_CHANNEL = 'retrypolicy:breaker'
// Published where `node:diagnostics_channel` exists (Node); elsewhere the callback and event still report.
const breakerChannel = channelNamed(BREAKER_CHANNEL)

/**
 * Where the signals of runs and breakers go: `sink`, while ./otel.js is instrumented, is its
 * recorder (`step(step, http)`, `breakerChanged(change, breakerName)`); else undefined, and nothing is recorded.
 */
const observers = { sink: undefined }

/** The name of a breaker's state-change event (EventEmitter). */
const STATE_CHANGE = 'stateChange'

/**
 * Throws `e` outside the current call, as `diagnostics_channel` does with a subscriber's error:
 * an uncaught exception (Node's 'uncaughtException'; a page's error event), while the call that
 * made the change goes on.
 */
function rethrowLater(e) {
  queueMicrotask(() => {
    throw e
  })
}

/** The warning code of a breaker listener's error (`process.emitWarning`). */
const LISTENER_THREW = 'RETRYPOLICY_LISTENER_THREW'

/**
 * Reports `e`, thrown by a listener (`which`: `onStateChange` or `'stateChange'`) of `breaker` on
 * the change `c`, without failing anything: a process warning (`process.emitWarning`: the
 * 'warning' event, and Node prints it on stderr unless run with --no-warnings; `name` RetryPolicyWarning, `code`
 * RETRYPOLICY_LISTENER_THREW, `cause` the error, `breaker` and `change`), as Python logs the
 * callback's error on `retrypolicy.breaker`; where there is no process (a page), `console.error`.
 */
function listenerThrew(e, breaker, c, which) {
  const w = new Error(`retrypolicy: the breaker's ${which} threw on its change ${c.from} -> ${c.to} (${c.rule}); the change stands`, { cause: e })
  w.name = 'RetryPolicyWarning'
  Object.assign(w, { code: LISTENER_THREW, breaker, change: c })
  const proc = globalThis.process
  if (typeof proc?.emitWarning === 'function') proc.emitWarning(w)
  else console.error(w)
}

/** Whether a change of `breaker` (whose callback is `callback`) has anyone to go to. */
function breakerObserved(breaker, callback) {
  return callback !== undefined || observers.sink !== undefined || breakerChannel?.hasSubscribers === true ||
    breaker.listenerCount(STATE_CHANGE) > 0
}

/**
 * Reports `changes` (a call's list of `{from, to, rule}` in the core's names, in order) of
 * `breaker`: for each, the channel's message `{breaker, from, to, rule}`, OpenTelemetry's signals
 * when instrumented, then `callback(change)` and the 'stateChange' event (each with `this` the
 * breaker). An error any of them throws is reported as a process warning (listenerThrew), never
 * thrown: the change stands, the listeners after it still hear it, and the call, or the run, goes on. All of a call's changes are queued before
 * the first is delivered, and a change a listener makes (calling the breaker again) is delivered
 * after them: each listener hears a breaker's changes in the order they happened.
 */
function breakerChanged(breaker, callback, changes) {
  const frozen = changes.map((change) => [callback, Object.freeze({ from: change.from, to: change.to, rule: change.rule })])
  const queued = delivering.get(breaker)
  if (queued !== undefined) {
    queued.push(...frozen) // changes made by a listener of this breaker: delivered after those queued
    return
  }
  const queue = frozen
  delivering.set(breaker, queue)
  try {
    while (queue.length > 0) deliver(breaker, ...queue.shift())
  } finally {
    delivering.delete(breaker)
  }
}

/** The changes of each breaker whose changes are being delivered, waiting their turn (first in, first out). */
const delivering = new WeakMap()

/** Reports the change `c` of `breaker` to the channel, OpenTelemetry, `callback` and the event. */
function deliver(breaker, callback, c) {
  if (breakerChannel?.hasSubscribers) breakerChannel.publish({ breaker, from: c.from, to: c.to, rule: c.rule })
  observers.sink?.breakerChanged(c, breaker.name)
  if (callback !== undefined) tell(callback, breaker, c, 'onStateChange')
  // Each listener on its own (not `emit`, which stops at the first that throws): one listener's
  // error is its warning, and the listeners after it still hear the change. A `once` listener is
  // its wrapper here, which removes itself as `emit` would.
  for (const listener of breaker.rawListeners(STATE_CHANGE)) tell(listener, breaker, c, "'stateChange' listener")
}

/**
 * Calls `listener` (`which`) of `breaker` with the change `c`: what it throws, or the rejection of
 * the promise it returns (an async listener), is its warning (listenerThrew), never an uncaught
 * error or an unhandled rejection.
 */
function tell(listener, breaker, c, which) {
  try {
    const answer = listener.call(breaker, c)
    if (typeof answer?.then === 'function') answer.then(undefined, (e) => listenerThrew(e, breaker, c, which))
  } catch (e) {
    listenerThrew(e, breaker, c, which)
  }
}

module.exports = { BREAKER_CHANNEL, STATE_CHANGE, LISTENER_THREW, channelNamed, observers, rethrowLater, breakerObserved, breakerChanged }

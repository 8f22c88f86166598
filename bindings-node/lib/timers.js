'use strict'
// Time for the runners: sleeps and attempt bounds that hold past setTimeout's 2^31 − 1 ms (chained
// timers), the signal an attempt gets (it fires at the attempt's bound or at the caller's abort),
// and waiting for an attempt no longer than its bound, whatever the attempt does.

/** `timers/promises` where Node has it; null elsewhere (a browser bundle of the wasm package). */
const timers = (() => {
  try {
    return require('node:timers/promises')
  } catch {
    return null
  }
})()

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

/** Sleeps `ms` with `sleep` (none for 0); an abort of `signal` rejects with its reason. */
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

/** One signal out of the defined ones (undefined for none). */
function anySignal(signals) {
  const present = signals.filter(Boolean)
  return present.length > 1 ? AbortSignal.any(present) : present[0]
}

/**
 * The bound of one attempt: a real timer firing `ms` from now (none when `ms` is undefined; chained
 * past 2^31 − 1 ms, so it never fires early; `unref`, it keeps no process alive, as
 * AbortSignal.timeout's), and the signal the attempt gets, made on first read (an AbortController
 * costs a few µs): it aborts with a TimeoutError when the timer fires, or as `caller` aborts.
 */
function attemptBound(ms, what, caller, unref = false) {
  let controller
  let signal
  let timer
  let onCut
  const bound = {
    fired: false,
    reason: undefined,
    /** The attempt's signal (the caller's alone when there is no bound). */
    get signal() {
      if (signal === undefined) {
        if (ms === undefined) return caller
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
    // a DOMException, as AbortSignal.timeout's
    bound.reason = new DOMException(`retrypolicy: attempt ${what} did not end within ${ms} ms`, 'TimeoutError')
    controller?.abort(bound.reason)
    onCut?.()
  }
  const arm = (left) => {
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fire()), Math.min(left, MAX_TIMER_MS))
    if (unref) timer?.unref?.()
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

module.exports = { MAX_TIMER_MS, defaultSleep, pause, anySignal, attemptBound, settle }

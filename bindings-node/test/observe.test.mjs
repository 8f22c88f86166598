// What a run and a breaker report without OpenTelemetry (issue 27): a breaker's state changes
// (onStateChange, the 'stateChange' event, BREAKER_CHANNEL, lastChanges), a run's statistics (Run,
// the runners' onStats and their give-up errors), and the testing switch (instant sleeps, seeded
// draws). Every clock and sleep is injected; no test bounds real elapsed time. Binding-agnostic.
import { test, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import diagnostics from 'node:diagnostics_channel'
import fs from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import rp, { which } from './binding.mjs'
import { fakeTime } from './fake-time.mjs'

const KV_GET = { service: 'kv', operation: 'get' }
const OPEN = { version: 1, state: 'open', since_ms: 0, window_start_ms: 0, total: 1, failures: 1 }

afterEach(() => rp.setTesting(false))

// ---- breaker state changes --------------------------------------------------------------------

test(`[${which}] a breaker reports each change to its callback, its event and the channel, with itself as this`, () => {
  const calls = []
  const breaker = new rp.CircuitBreaker({ volume_threshold: 2, sleep_window_ms: 100 }, {
    onStateChange(change) {
      calls.push(['callback', this === breaker, change])
    },
  })
  breaker.on('stateChange', function (change) {
    calls.push(['event', this === breaker, change])
  })
  const messages = []
  const listener = (m) => messages.push(m)
  diagnostics.subscribe(rp.BREAKER_CHANNEL, listener)
  try {
    breaker.record(0, 'failure') // one failure of two: no change
    assert.deepEqual([calls, breaker.lastChanges], [[], []])
    breaker.record(1, 'failure') // tripped
    assert.equal(breaker.permit(50).permitted, false) // open within the window: no change
    assert.ok(breaker.permit(102).canary) // the canary, past the window (opened at 1, 100 ms)
    breaker.record(103, 'success') // closed
  } finally {
    diagnostics.unsubscribe(rp.BREAKER_CHANNEL, listener)
  }
  const tripped = { from: 'closed', to: 'open', rule: 'breaker_tripped' }
  const canary = { from: 'open', to: 'half_open', rule: 'breaker_canary' }
  const closed = { from: 'half_open', to: 'closed', rule: 'canary_succeeded' }
  assert.deepEqual(calls, [
    ['callback', true, tripped], ['event', true, tripped],
    ['callback', true, canary], ['event', true, canary],
    ['callback', true, closed], ['event', true, closed],
  ])
  assert.ok(calls.every(([, , c]) => Object.isFrozen(c)))
  assert.deepEqual(messages, [tripped, canary, closed].map((c) => ({ breaker, ...c })))
  assert.equal(rp.BREAKER_CHANNEL, 'retrypolicy:breaker')
  assert.deepEqual(breaker.lastChanges, [closed])
  assert.ok(Object.isFrozen(breaker.lastChanges) && Object.isFrozen(breaker.lastChanges[0]))
  breaker.record(104, 'success')
  assert.deepEqual(breaker.lastChanges, []) // the last call changed nothing
  assert.equal(calls.length, 6)
})

test(`[${which}] a restored breaker takes the callback too; a callback that is not a function is refused by name`, () => {
  const seen = []
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100 }, OPEN, { onStateChange: (c) => seen.push(c.rule) })
  assert.equal(typeof breaker.onStateChange, 'function')
  assert.equal(new rp.CircuitBreaker().onStateChange, null)
  breaker.permit(101) // past the window: opened at 0, 100 ms
  assert.deepEqual(seen, ['breaker_canary'])
  const coded = (code, field) => (e) => e.code === code && e.field === field
  assert.throws(() => new rp.CircuitBreaker({}, { onStateChange: 'log' }), coded('invalid_type', 'onStateChange'))
  assert.throws(() => rp.CircuitBreaker.restore({}, OPEN, { onStateChange: 1 }), coded('invalid_type', 'onStateChange'))
  assert.throws(() => new rp.CircuitBreaker({}, 'x'), coded('invalid_type', 'options'))
})

test(`[${which}] a run's step reports the breaker's change through the breaker, and carries it`, () => {
  const seen = []
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100 }, OPEN)
  breaker.on('stateChange', (c) => seen.push(c))
  const run = new rp.Run({ rules: { decide: { operation: KV_GET } }, timeoutMs: 10_000 }, { breaker })
  const first = run.start(200)
  assert.deepEqual([first.action, first.breakerChanges], ['send', [{ from: 'open', to: 'half_open', rule: 'breaker_canary' }]])
  const cancelled = run.cancel(210) // the canary is released
  assert.deepEqual(cancelled.breakerChanges, [{ from: 'half_open', to: 'open', rule: 'canary_released' }])
  assert.deepEqual(seen, [...first.breakerChanges, ...cancelled.breakerChanges])
  assert.deepEqual([first.signal, cancelled.signal], ['none', 'none'])
})

test(`[${which}] a run's steps are frozen with all they hold, on either backend (a Run's and the runners')`, async () => {
  const deepFrozen = (v) => v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(deepFrozen))
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100 }, OPEN)
  const budget = new rp.RetryBudget({ kind: 'retry_quota' })
  const run = new rp.Run({ rules: { decide: { operation: KV_GET } }, timeoutMs: 10_000 }, { breaker, budget })
  const first = run.start(200) // the canary: a breaker verdict and a change
  const failed = run.attemptEnded({ kind: 'kv', status: 0x86 }, 210) // a retry: a decision and the budget's verdict
  assert.ok(first.breaker !== null && first.breakerChanges.length === 1)
  assert.ok(failed.decision !== null && failed.budget !== null && failed.breakerChanges.length === 1)
  assert.ok([first, failed].every(deepFrozen))
  const t = fakeTime()
  const seen = []
  let calls = 0
  await rp.retry(async () => {
    if (++calls === 1) throw new Error('busy')
    return calls
  }, { operation: KV_GET, timeoutMs: 10_000, classify: () => 'KV_TEMPORARY_FAILURE', clock: t.clock, sleep: t.sleep, budget, onRetry: (s) => seen.push(s) })
  assert.equal(seen.length, 1)
  assert.ok(seen[0].decision !== null && seen.every(deepFrozen))
})

test(`[${which}] one call that makes two changes reports each, in order, to the callback, the event and the channel`, () => {
  // The canary sent at 101 times out at 151 (open again); at 252, 101 ms into that window, the same
  // permit finds it failed and sends the next canary.
  const calls = []
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 100, canary_timeout_ms: 50 }, {
    onStateChange: (c) => calls.push(['callback', c.rule]),
  })
  breaker.on('stateChange', (c) => calls.push(['event', c.rule]))
  breaker.record(0, 'failure')
  assert.ok(breaker.permit(101).canary)
  calls.length = 0
  const messages = []
  const listener = (m) => messages.push([m.from, m.to, m.rule])
  diagnostics.subscribe(rp.BREAKER_CHANNEL, listener)
  try {
    assert.ok(breaker.permit(252).canary)
  } finally {
    diagnostics.unsubscribe(rp.BREAKER_CHANNEL, listener)
  }
  assert.deepEqual(calls, [['callback', 'canary_timed_out'], ['event', 'canary_timed_out'], ['callback', 'breaker_canary'], ['event', 'breaker_canary']])
  assert.deepEqual(messages, [['half_open', 'open', 'canary_timed_out'], ['open', 'half_open', 'breaker_canary']])
  assert.deepEqual(breaker.lastChanges, [
    { from: 'half_open', to: 'open', rule: 'canary_timed_out' },
    { from: 'open', to: 'half_open', rule: 'breaker_canary' },
  ])
})

test(`[${which}] a run's step that makes two changes carries both and the breaker reports each, in order`, () => {
  // Restored half-open (a canary sent at 0, never answered): the start at 200 finds it timed out at
  // 50 and, the 100 ms window over, sends this attempt as the next canary.
  const seen = []
  const halfOpen = { version: 1, state: 'half_open', since_ms: 0, window_start_ms: null, total: 0, failures: 0 }
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100, canary_timeout_ms: 50 }, halfOpen, {
    onStateChange: (c) => seen.push(c),
  })
  const run = new rp.Run({ rules: { decide: { operation: KV_GET } }, timeoutMs: 10_000 }, { breaker })
  const first = run.start(200)
  const both = [{ from: 'half_open', to: 'open', rule: 'canary_timed_out' }, { from: 'open', to: 'half_open', rule: 'breaker_canary' }]
  assert.deepEqual(first.breakerChanges, both)
  assert.deepEqual(seen, both)
})

test(`[${which}] a runner's retry reports each change of a call in order (the addon's fast path too)`, async () => {
  const seen = []
  const halfOpen = { version: 1, state: 'half_open', since_ms: 0, window_start_ms: null, total: 0, failures: 0 }
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100, canary_timeout_ms: 50 }, halfOpen, {
    onStateChange: (c) => seen.push(c.rule),
  })
  const t = fakeTime() // at 1000: the canary sent at 0 timed out at 50, the window after it ended at 150
  assert.equal(await rp.retry(async () => 'done', { operation: KV_GET, timeoutMs: 10_000, breaker, clock: t.clock, sleep: t.sleep }), 'done')
  assert.deepEqual(seen, ['canary_timed_out', 'breaker_canary', 'canary_succeeded'])
})

test(`[${which}] a change a listener makes reaches every listener after the change at hand, in the order they happened`, () => {
  const log = []
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 100 }, {
    onStateChange(c) {
      log.push(['callback', c.from, c.to])
      if (c.to === 'open') this.permit(1000) // past the window: the canary (open → half_open), from inside the callback
    },
  })
  breaker.on('stateChange', (c) => log.push(['event', c.from, c.to]))
  const messages = []
  const listener = (m) => messages.push([m.from, m.to])
  diagnostics.subscribe(rp.BREAKER_CHANNEL, listener)
  try {
    breaker.record(0, 'failure')
  } finally {
    diagnostics.unsubscribe(rp.BREAKER_CHANNEL, listener)
  }
  assert.deepEqual(log, [
    ['callback', 'closed', 'open'], ['event', 'closed', 'open'],
    ['callback', 'open', 'half_open'], ['event', 'open', 'half_open'],
  ])
  assert.deepEqual(messages, [['closed', 'open'], ['open', 'half_open']])
  assert.equal(breaker.state(1000), 'half_open')
})

test(`[${which}] a change a listener makes during a call that made two is delivered after both`, () => {
  const log = []
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 100, canary_timeout_ms: 50 }, {
    onStateChange(c) {
      log.push(['callback', c.rule])
      if (c.rule === 'canary_timed_out') this.record(253, 'failure') // the new canary fails, from inside the callback
    },
  })
  breaker.on('stateChange', (c) => log.push(['event', c.rule]))
  breaker.record(0, 'failure') // closed → open
  breaker.permit(101) // open → half_open
  log.length = 0
  assert.equal(breaker.permit(252).canary, true) // the canary timed out at 151 (half_open → open), then the next one (open → half_open)
  assert.deepEqual(log, [
    ['callback', 'canary_timed_out'], ['event', 'canary_timed_out'],
    ['callback', 'breaker_canary'], ['event', 'breaker_canary'],
    ['callback', 'canary_failed'], ['event', 'canary_failed'],
  ])
  assert.equal(breaker.state(253), 'open')
})

test(`[${which}] what a breaker's listener throws is a process warning, never a crash: the change stands, the call returns`, () => {
  const entry = which === 'native' ? "require('retrypolicy')" : `require(${JSON.stringify(fileURLToPath(new URL('../../bindings-wasm/index.mjs', import.meta.url)))})`
  const script = `
    const rp = ${entry}
    process.on('uncaughtException', (e) => console.log('uncaught ' + e.message))
    process.on('warning', (w) => console.log([w.name, w.code, w.cause.message, w.change.rule, w.breaker === breaker].join(' ')))
    const breaker = new rp.CircuitBreaker({ volume_threshold: 1 }, { onStateChange: () => { throw new Error('from the callback') } })
    breaker.on('stateChange', () => { throw new Error('from the listener') })
    breaker.on('stateChange', async () => { throw new Error('from an async listener') })
    breaker.once('stateChange', (c) => console.log('the next listener heard ' + c.rule))
    breaker.record(0, 'failure')
    console.log('returned ' + breaker.state(0) + ', once-listeners left ' + breaker.listenerCount('stateChange'))`
  const r = spawnSync(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const heard = [
    'the next listener heard breaker_tripped', // one listener's error does not stop the next
    'returned open, once-listeners left 2',
    'RetryPolicyWarning RETRYPOLICY_LISTENER_THREW from the callback breaker_tripped true',
    'RetryPolicyWarning RETRYPOLICY_LISTENER_THREW from the listener breaker_tripped true',
    'RetryPolicyWarning RETRYPOLICY_LISTENER_THREW from an async listener breaker_tripped true', // its rejection: no crash
  ]
  assert.deepEqual(r.stdout.trim().split('\n'), heard)
  // A 'warning' listener does not stop Node's own printer: the warning is on stderr too.
  assert.match(r.stderr, /RetryPolicyWarning: retrypolicy: the breaker's onStateChange threw on its change closed -> open \(breaker_tripped\); the change stands/)
  // Only --no-warnings silences stderr; the 'warning' event still comes, with its code.
  const quiet = spawnSync(process.execPath, ['--no-warnings', '--input-type=commonjs', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8',
  })
  assert.equal(quiet.status, 0, quiet.stderr)
  assert.deepEqual(quiet.stdout.trim().split('\n'), heard)
  assert.doesNotMatch(quiet.stderr, /RetryPolicyWarning/)
})

test(`[${which}] what onStats throws after a run that did not succeed is rethrown outside the call: the call rejects with the run's error`, () => {
  const entry = which === 'native' ? "require('retrypolicy')" : `require(${JSON.stringify(fileURLToPath(new URL('../../bindings-wasm/index.mjs', import.meta.url)))})`
  const script = `
    const rp = ${entry}
    process.on('uncaughtException', (e) => console.log('uncaught ' + e.message))
    let now = 0
    const o = { operation: { service: 'kv', operation: 'get' }, timeoutMs: 1000, classify: () => 'KV_TEMPORARY_FAILURE',
      clock: () => now, sleep: async (ms) => { now += ms }, onStats: () => { throw new Error('from onStats') } }
    const busy = async () => { throw new Error('busy') }
    ;(async () => {
      console.log('gave up: ' + await rp.retry(busy, { ...o, maxAttempts: 2 }).catch((e) => e.message))
      now = 0
      console.log('timed out: ' + await rp.retry(busy, o).catch((e) => e.constructor.name))
      console.log('final: ' + await rp.retry(busy, { ...o, classify: () => null }).catch((e) => e.message))
      console.log('succeeded: ' + await rp.retry(async () => 1, o).catch((e) => e.message))
      await new Promise((r) => setTimeout(r, 0))
    })()`
  const r = spawnSync(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.stdout.trim().split('\n'), [
    'uncaught from onStats', 'gave up: busy',
    'uncaught from onStats', 'timed out: RetryTimeoutError',
    'uncaught from onStats', 'final: busy',
    'succeeded: from onStats', // a success has no error of its own: the hook's rejects the call
  ])
})

test("a page's emitter (no node:events) does what Node's EventEmitter does with the methods a breaker declares", () => {
  const { PageEmitter } = createRequire(import.meta.url)('../lib/api.js')
  const { EventEmitter } = createRequire(import.meta.url)('node:events')
  const script = (e) => {
    const log = []
    const a = () => log.push('a')
    const b = () => log.push('b')
    const c = function () { log.push(this === e ? 'c' : 'not this') }
    e.on('x', a).prependListener('x', b).prependOnceListener('x', c).addListener('x', a).once('y', a)
    e.emit('x')
    e.emit('x')
    e.removeListener('x', a)
    const seen = [e.emit('x'), e.listenerCount('x'), e.eventNames(), e.listeners('x').length, e.rawListeners('y').length !== 0]
    e.off('y', a).setMaxListeners(3)
    seen.push(e.eventNames(), e.getMaxListeners(), e.removeAllListeners('x').listenerCount('x'), e.emit('x'))
    return [log.join(''), ...seen]
  }
  const node = script(new EventEmitter())
  assert.deepEqual(node, ['cbaabaaba', true, 2, ['x', 'y'], 2, true, ['x'], 3, 0, false]) // worked by hand from Node's documentation
  assert.deepEqual(script(new PageEmitter()), node)
})

// ---- run statistics ---------------------------------------------------------------------------

test(`[${which}] Run.stats: what the run did so far`, () => {
  const run = new rp.Run({ rules: { decide: { operation: KV_GET } }, timeoutMs: 10_000 })
  assert.deepEqual(run.stats, {
    attempts: 0, retries: 0, waitedMs: 0, elapsedMs: 0, budgetRefusals: 0, breakerRejections: 0,
    end: null, lastRule: null, lastReason: null, lastBudget: null, lastBreaker: null,
  })
  run.start(0)
  run.attemptEnded({ kind: 'kv', status: 0x86 }, 10) // KV_TEMPORARY_FAILURE: best effort's first retry, 1 ms
  const s = run.stats
  assert.ok(Object.isFrozen(s))
  assert.deepEqual([s.attempts, s.retries, s.waitedMs, s.elapsedMs, s.end, s.lastRule, s.lastReason],
    [1, 1, 1, 10, null, 'best_effort_backoff', 'KV_TEMPORARY_FAILURE'])
  run.waitEnded(11)
  run.attemptEnded({ kind: 'success' }, 15)
  assert.deepEqual([run.stats.attempts, run.stats.end, run.stats.lastRule, run.stats.elapsedMs], [2, 'succeeded', 'attempt_succeeded', 15])
})

test(`[${which}] a runner's give-up errors carry retryStats; onStats hears every end, an abort included`, async () => {
  // The breaker (volume 1, window 5 s) trips on the first failure at 0; the retry waits 1 ms; at 1
  // the breaker keeps attempt 2 back past the deadline (1 s): timed out.
  let t = fakeTime()
  const failing = async () => { throw new Error('busy') }
  const base = { operation: KV_GET, classify: () => 'KV_TEMPORARY_FAILURE', clock: t.clock, sleep: t.sleep }
  const timedOut = await rp.retry(failing, { ...base, timeoutMs: 1000, breaker: new rp.CircuitBreaker({ volume_threshold: 1 }) }).catch((e) => e)
  assert.ok(timedOut instanceof rp.RetryTimeoutError)
  const s = timedOut.retryStats
  assert.deepEqual([s.attempts, s.retries, s.breakerRejections, s.waitedMs, s.elapsedMs, s.end], [1, 1, 1, 1, 1, 'timed_out'])

  // A breaker open for a long while and a fail-fast strategy: no attempt sent, a CircuitOpenError.
  const breaker = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100_000 }, OPEN)
  const open = await rp.retry(failing, { ...base, timeoutMs: 1_000_000, breaker, strategy: new rp.FailFast() }).catch((e) => e)
  assert.ok(open instanceof rp.CircuitOpenError)
  assert.deepEqual([open.retryStats.attempts, open.retryStats.breakerRejections, open.retryStats.end, open.retryStep.end], [0, 1, 'gave_up', 'gave_up'])

  // Capped at two attempts: the last error comes back with the step and the statistics.
  t = fakeTime()
  const ends = []
  const busy = await rp.retry(failing, { ...base, clock: t.clock, sleep: t.sleep, timeoutMs: 1000, maxAttempts: 2, onStats: (x) => ends.push(x) }).catch((e) => e)
  assert.equal(busy.message, 'busy')
  assert.deepEqual([busy.retryStep.rule, busy.retryStats.attempts, busy.retryStats.end], ['max_attempts_reached', 2, 'gave_up'])
  assert.deepEqual(ends, [busy.retryStats])

  // An abort during the wait: the run is cancelled, onStats hears it, the call rejects with the reason.
  const ac = new AbortController()
  const stop = new Error('stop')
  const sleep = async (_ms, signal) => { ac.abort(stop); signal.throwIfAborted() }
  await assert.rejects(rp.retry(failing, { ...base, sleep, timeoutMs: 1000, signal: ac.signal, onStats: (x) => ends.push(x) }), (e) => e === stop)
  assert.deepEqual([ends.length, ends[1].end, ends[1].attempts], [2, 'cancelled', 1])

  // A success, told without a step over the addon: onStats still hears it; a final error is surfaced untouched.
  t = fakeTime()
  assert.equal(await rp.retry(async () => 7, { ...base, timeoutMs: 1000, onStats: (x) => ends.push(x) }), 7)
  assert.deepEqual([ends[2].end, ends[2].attempts], ['succeeded', 1])
  const final = new Error('final')
  assert.equal(await rp.retry(async () => { throw final }, { ...base, classify: () => null, timeoutMs: 1000 }).catch((e) => e), final)
  assert.equal(final.retryStats, undefined)
  await assert.rejects(rp.retry(async () => 1, { ...base, timeoutMs: 1000, onStats: 1 }), (e) => e.code === 'invalid_type' && e.field === 'onStats')
})

// ---- testing helpers --------------------------------------------------------------------------

/** The delays `retry` decided for a call failing `failures` times (`policy` given), and the sleeps it made. */
async function delays(options, failures = 4) {
  const t = fakeTime()
  const decided = []
  let calls = 0
  const result = await rp.retry(async () => {
    if (++calls <= failures) throw new Error('busy')
    return calls
  }, { operation: KV_GET, timeoutMs: 60_000, classify: () => 'KV_TEMPORARY_FAILURE', clock: t.clock, sleep: t.sleep, onRetry: (s) => decided.push(s.delayMs), ...options })
  assert.equal(result, failures + 1)
  return { decided, slept: t.sleeps }
}

test(`[${which}] setTesting(true) skips every sleep and keeps every decision`, async () => {
  const policy = new rp.Policy({ backoff: { kind: 'exponential', min_ms: 100, max_ms: 10_000, factor: 2 } })
  const real = await delays({ policy })
  assert.deepEqual(real.decided, real.slept)
  assert.equal(rp.isTesting(), false)
  rp.setTesting(true)
  assert.equal(rp.isTesting(), true)
  const instant = await delays({ policy })
  assert.deepEqual([instant.decided, instant.slept], [real.decided, []])
  rp.setTesting(false)
  assert.equal(rp.isTesting(), false)
  assert.deepEqual((await delays({ policy })).slept, real.decided)
})

test(`[${which}] setTesting(true) runs a call failing until its deadline as a real run would: the skipped waits move its clock`, async () => {
  // Exponential 100, 200, 400, 800 ms, no jitter, a 2 s deadline: attempts at 0, 100, 300, 700
  // and 1500 ms; the next wait (1600 ms) would end at 3100, past the deadline: timed out after 5
  // attempts, 1500 ms waited (worked by hand).
  const policy = new rp.Policy({ backoff: { kind: 'exponential', min_ms: 100, max_ms: 10_000, factor: 2 } })
  const failing = async (options) => {
    let calls = 0
    let stats
    const e = await rp.retry(async () => {
      calls++
      if (calls > 100) throw new Error('runaway') // classified final: ends the run
      throw new Error('busy')
    }, { operation: KV_GET, policy, timeoutMs: 2000, classify: (e) => (e.message === 'busy' ? 'KV_TEMPORARY_FAILURE' : null), onStats: (s) => { stats = s }, ...options }).catch((e) => e)
    return [e.constructor.name, calls, stats.waitedMs, stats.end]
  }
  const byHand = ['RetryTimeoutError', 5, 1500, 'timed_out']
  rp.setTesting(true)
  // the default clock: it reads real time plus the skipped waits (no real wait reaches 500 ms here)
  assert.deepEqual(await failing({}), byHand)
  // a call's own clock and sleep: the sleep is skipped, the clock still moves by each wait
  const t = fakeTime()
  assert.deepEqual(await failing({ clock: t.clock, sleep: t.sleep }), byHand)
  assert.deepEqual([t.sleeps, t.now], [[], 1000])
  rp.setTesting(false)
  const real = fakeTime()
  assert.deepEqual(await failing({ clock: real.clock, sleep: real.sleep }), byHand)
  assert.deepEqual(real.sleeps, [100, 200, 400, 800])
})

test(`[${which}] setTesting(true) lets timers run during a long run of skipped waits`, async () => {
  rp.setTesting(true)
  let fired = 0
  const timer = setInterval(() => fired++, 0)
  let calls = 0
  const t = fakeTime()
  try {
    // 1 ms waits for 1000 ms of a fake clock: a thousand skipped waits
    await rp.retry(async () => { if (++calls > 2000) return 'runaway'; throw new Error('busy') }, {
      operation: KV_GET, timeoutMs: 1000, classify: () => 'KV_TEMPORARY_FAILURE', clock: t.clock, sleep: t.sleep,
      policy: new rp.Policy({ backoff: { kind: 'exponential', min_ms: 1, max_ms: 1, factor: 2 } }),
    }).catch(() => {})
  } finally {
    clearInterval(timer)
  }
  assert.ok(calls > 500 && calls <= 1001, `${calls} attempts`)
  assert.ok(fired > 0, 'a 0 ms interval fired while the run skipped its waits')
})

test(`[${which}] setTesting({seed}) draws the same jitter for every run; a call's own random wins`, async () => {
  const policy = new rp.Policy({ backoff: { kind: 'exponential', min_ms: 100, max_ms: 10_000, factor: 2 }, jitter: 'full' })
  rp.setTesting({ seed: 7 })
  assert.equal(rp.isTesting(), true)
  const a = await delays({ policy })
  const b = await delays({ policy })
  assert.deepEqual([a.decided, a.slept, b.decided], [b.decided, [], a.decided])
  rp.setTesting({ seed: 8, instant: false })
  const c = await delays({ policy })
  assert.deepEqual(c.slept, c.decided) // sleeps are real (the fake clock's) again
  assert.notDeepEqual(c.decided, a.decided)
  rp.setTesting({ seed: 7 })
  assert.deepEqual((await delays({ policy, random: () => 0 })).decided, [0, 0, 0, 0]) // full jitter of a 0 draw
  rp.setTesting({ seed: 7, instant: false })
  rp.setTesting(true) // instant sleeps, the seed kept
  const d = await delays({ policy })
  assert.deepEqual([d.decided, d.slept], [a.decided, []])
  rp.setTesting(false) // testing off: real sleeps, no seed
  assert.equal(rp.isTesting(), false)
  const e = await delays({ policy })
  assert.deepEqual(e.slept, e.decided)
  const coded = (code, field) => (e) => e.code === code && e.field === field
  assert.throws(() => rp.setTesting({ seed: 1.5 }), coded('out_of_range', 'seed'))
  assert.throws(() => rp.setTesting({ seed: '7' }), coded('invalid_type', 'seed'))
  assert.throws(() => rp.setTesting({ instant: 'yes' }), coded('invalid_type', 'instant'))
  assert.throws(() => rp.setTesting('on'), coded('invalid_type', 'testing'))
})

test('make test-node-api runs these suites and the OpenTelemetry one over the wasm backend too', () => {
  const makefile = fs.readFileSync(new URL('../../bindings-wasm/Makefile', import.meta.url), 'utf8')
  const suites = makefile.match(/^NODE_API_SUITES := (.*)$/m)[1].split(' ')
  for (const s of ['observability', 'observe']) assert.ok(suites.includes(s), `${s} in ${suites}`)
})

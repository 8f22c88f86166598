// retry's prepared runs: a configuration made once per operation object and reused only while the
// options it was made of are the same, steps built from positional arguments equal to the public
// Run's, and a success told without a step still reaching the budget and the breaker.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import rp, { which } from './binding.mjs'
import { fakeTime } from './fake-time.mjs'

const coded = (code) => Object.assign(new Error(code), { code })

/** A call that throws each of `errors` in turn, then returns the number of calls. */
function failing(...errors) {
  let calls = 0
  const fn = async () => {
    if (calls < errors.length) throw errors[calls++]
    return ++calls
  }
  fn.calls = () => calls
  return fn
}

test('a reused operation object whose method changes is decided by its new method', async () => {
  const operation = { service: 'management', method: 'GET' }
  const t = fakeTime()
  const o = { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep, random: () => 0.5 }
  // A reset connection may have sent the request: a GET is retried, a POST is not.
  assert.equal(await rp.retry(failing(coded('ECONNRESET')), o), 2)
  operation.method = 'POST'
  const post = failing(coded('ECONNRESET'))
  await assert.rejects(rp.retry(post, o), { code: 'ECONNRESET' })
  assert.equal(post.calls(), 1)
  operation.method = 'GET'
  assert.equal(await rp.retry(failing(coded('ECONNRESET')), o), 2)
})

test('each run option that makes the configuration is read again on every call', async () => {
  const operation = { service: 'management', method: 'GET' }
  const fixed = (ms) => new rp.Policy({ backoff: { kind: 'fixed', delay_ms: ms }, jitter: 'none' })
  const t = fakeTime()
  const base = { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep, random: () => 0.5 }
  await rp.retry(failing(coded('ECONNREFUSED')), { ...base, policy: fixed(7) })
  await rp.retry(failing(coded('ECONNREFUSED')), { ...base, policy: fixed(9) })
  // A policy document is read on each call, even the same object changed in place.
  const doc = { backoff: { kind: 'fixed', delay_ms: 11 }, jitter: 'none' }
  await rp.retry(failing(coded('ECONNREFUSED')), { ...base, policy: doc })
  doc.backoff.delay_ms = 13
  await rp.retry(failing(coded('ECONNREFUSED')), { ...base, policy: doc })
  assert.deepEqual(t.sleeps, [7, 9, 11, 13])
  // An attempt cap, then none: the same operation object.
  const capped = failing(coded('ECONNREFUSED'), coded('ECONNREFUSED'))
  await assert.rejects(rp.retry(capped, { ...base, policy: fixed(1), maxAttempts: 2 }), { code: 'ECONNREFUSED' })
  assert.equal(capped.calls(), 2)
  assert.equal(await rp.retry(failing(coded('ECONNREFUSED'), coded('ECONNREFUSED')), { ...base, policy: fixed(1) }), 3)
  // idempotent: a POST whose request may have been sent is retried only when declared idempotent.
  const post = { service: 'management', method: 'POST' }
  await assert.rejects(rp.retry(failing(coded('ECONNRESET')), { ...base, operation: post }), { code: 'ECONNRESET' })
  assert.equal(await rp.retry(failing(coded('ECONNRESET')), { ...base, operation: post, idempotent: true }), 2)
  await assert.rejects(rp.retry(failing(coded('ECONNRESET')), { ...base, operation: post }), { code: 'ECONNRESET' })
})

test('operations written in each call are told apart by their fields, past the configurations kept', async () => {
  const t = fakeTime()
  const base = { timeoutMs: 5000, clock: t.clock, sleep: t.sleep, random: () => 0.5 }
  for (let i = 0; i < 3; i++) {
    assert.equal(await rp.retry(failing(coded('ECONNRESET')), { ...base, operation: { service: 'management', method: 'GET' } }), 2)
    const post = failing(coded('ECONNRESET'))
    await assert.rejects(rp.retry(post, { ...base, operation: { service: 'management', method: 'POST' } }), { code: 'ECONNRESET' })
    assert.equal(post.calls(), 1)
    // the same fields in another order are another configuration, decided alike
    assert.equal(await rp.retry(failing(coded('ECONNRESET')), { ...base, operation: { method: 'GET', service: 'management' } }), 2)
  }
  // more distinct configurations than are kept: each call still runs with its own attempt cap
  for (let round = 0; round < 2; round++) {
    for (let cap = 1; cap <= 12; cap++) {
      const fn = failing(...Array.from({ length: 20 }, () => coded('ECONNREFUSED')))
      await assert.rejects(rp.retry(fn, { ...base, operation: { service: 'management', method: 'GET' }, maxAttempts: cap }), { code: 'ECONNREFUSED' })
      assert.equal(fn.calls(), cap)
    }
  }
})

test('a bad option is refused on every call, naming the field, also after a good run', async () => {
  const operation = { service: 'management', method: 'GET' }
  const t = fakeTime()
  const base = { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep }
  assert.equal(await rp.retry(async () => 1, base), 1)
  await assert.rejects(rp.retry(async () => 1, { ...base, maxAttempts: 0 }), { code: 'out_of_range', field: 'maxAttempts' })
  await assert.rejects(rp.retry(async () => 1, { ...base, budget: {} }), { code: 'invalid_type', field: 'budget' })
  operation.method = 7
  const named = (e) => rp.isRetryPolicyError(e) && /(^|\.)method$/.test(e.field)
  await assert.rejects(rp.retry(async () => 1, base), named)
  operation.method = 'GET'
  assert.equal(await rp.retry(async () => 2, base), 2)
  operation.method = 7
  await assert.rejects(rp.retry(async () => 1, base), named)
})

test("the runner's steps are the public Run's, key for key", async () => {
  const operation = { service: 'management', method: 'GET' }
  const budget = new rp.RetryBudget({ kind: 'retry_quota' })
  const breaker = new rp.CircuitBreaker({ volume_threshold: 100 })
  const t = fakeTime()
  const seen = []
  const fn = failing(coded('ECONNREFUSED'), Object.assign(new Error('busy'), { status: 429, headers: { 'retry-after': '1' } }))
  let given
  const result = await rp.retry(fn, {
    operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep, random: () => 0.25, budget, breaker,
    onRetry: (step) => seen.push(step),
  })
  assert.equal(result, 3)
  // The same events through the public Run, on a budget and a breaker in the same state.
  const budget2 = new rp.RetryBudget({ kind: 'retry_quota' })
  const breaker2 = new rp.CircuitBreaker({ volume_threshold: 100 })
  const run = new rp.Run({ rules: { decide: { operation } }, timeoutMs: 5000 }, { budget: budget2, breaker: breaker2 })
  given = [run.start(1000, 0.25)]
  given.push(run.attemptEnded({ kind: 'network', sent: false }, 1000, 0.25))
  const t2 = 1000 + Number(given[1].delayMs)
  given.push(run.waitEnded(t2, 0.25))
  given.push(run.attemptEnded({ kind: 'http', status: 429, retryAfter: '1' }, t2, 0.25))
  assert.equal(seen.length, 2)
  for (const [mine, theirs] of [[seen[0], given[1]], [seen[1], given[3]]]) {
    assert.deepStrictEqual(Object.keys(mine).sort(), Object.keys(theirs).sort())
    assert.deepStrictEqual(mine, theirs)
  }
  assert.equal(seen[0].action, 'wait')
  assert.equal(typeof seen[0].decision, 'object')
  assert.notEqual(seen[0].budget, null)
})

test('a success told without a step reaches the budget and the breaker', async () => {
  const operation = { service: 'management', method: 'GET' }
  const t = fakeTime()
  // A retry quota refunds its retry's cost when the retried run succeeds.
  const budget = new rp.RetryBudget({ kind: 'retry_quota' })
  const before = budget.snapshot().balance
  assert.equal(await rp.retry(failing(coded('ECONNREFUSED')), { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep, budget }), 2)
  assert.equal(budget.snapshot().balance, before)
  // A half-open breaker's canary that succeeds closes it.
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, error_threshold_percentage: 50, sleep_window_ms: 100 })
  await assert.rejects(rp.retry(async () => { throw new Error('final') }, { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep }))
  const failAll = async () => { throw coded('ECONNREFUSED') }
  await assert.rejects(rp.retry(failAll, { operation, timeoutMs: 50, maxAttempts: 1, clock: t.clock, sleep: t.sleep, breaker }))
  assert.equal(breaker.snapshot().state, 'open')
  t.now += 1000
  assert.equal(await rp.retry(async () => 'ok', { operation, timeoutMs: 5000, clock: t.clock, sleep: t.sleep, breaker }), 'ok')
  assert.equal(breaker.snapshot().state, 'closed')
})

// The addon's two ways of handing a step over, compared event for event: built by the runners'
// make (and make.decision, make.budget, make.breaker) and built key by key in Rust (the public Run's).
test('steps built by make equal the steps built in Rust, for every kind of step', { skip: which !== 'native' }, async () => {
  const require = createRequire(import.meta.url)
  const addon = require('../index.js')
  const { makeStep } = require('../lib/drive.js')
  const decide = (method, extra) => ({ rules: { decide: { operation: { service: 'management', method } } }, timeout_ms: 10000, ...extra })
  const network = { kind: 'network', sent: false }
  const cases = [
    // a retry quota of 10 tokens: one retry (cost 5), then refused; a breaker that opens at once
    [decide('GET', { max_attempts: 5 }), '{"kind":"retry_quota","capacity":10}', '{"volume_threshold":1,"error_threshold_percentage":50,"sleep_window_ms":100}'],
    [decide('POST'), undefined, undefined, [{ kind: 'network', sent: true }]],
    [decide('GET', { attempt_timeout_ms: 50 }), '{"kind":"token_bucket","max_tokens":10,"token_ratio":0.1}', undefined],
    [{ rules: { http: { method: 'GET' } }, timeout_ms: 10000 }, undefined, '{"volume_threshold":100}'],
  ]
  const all = []
  for (const [config, budgetDoc, breakerDoc, given] of cases) {
    const text = JSON.stringify(config)
    const object = (kind, document) => document && new addon.ObjectHandle(kind, JSON.stringify({ document }))
    const guards = () => [object('budget', budgetDoc), object('breaker', breakerDoc)]
    const [b1, k1] = guards()
    const [b2, k2] = guards()
    const [mine, first] = new addon.RunConfigHandle(text).start(b1, k1, 0, 0.5, undefined, undefined, (...a) => [a[15], makeStep(...a.slice(0, 15))])
    const theirs = new addon.RunHandle(text)
    const steps = [[first, theirs.start(b2, k2, 0, 0.5)]]
    // each outcome as the facade hands it over: JSON text in the wire form
    const outcomes = given ?? (config.rules.http ? [{ kind: 'http', status: 503 }, { kind: 'http', status: 429, retry_after: '1' }] : [network, { kind: 'timeout' }, network, network])
    let now = 0
    for (let i = 0; steps.at(-1)[1].action !== 'done' && i < 40; i++) {
      const [, last] = steps.at(-1)
      now += 10
      if (last.action === 'send') {
        const o = JSON.stringify(outcomes[i % outcomes.length])
        steps.push([mine.attemptEnded(b1, k1, o, now, 0.5, 0, undefined, undefined, makeStep),
          theirs.attemptEnded(b2, k2, o, now, 0.5, 0, undefined, undefined)])
      } else {
        now += Number(last.delayMs)
        steps.push([mine.waitEnded(b1, k1, now, 0.5, undefined, undefined, makeStep), theirs.waitEnded(b2, k2, now, 0.5)])
      }
    }
    for (const [a, b] of steps) assert.deepStrictEqual(a, b)
    all.push(...steps.map(([a]) => a))
    const kinds = new Set(steps.map(([a]) => a.action))
    assert.ok(kinds.has('send') && kinds.has('done'), `${text}: ${[...kinds]}`)
  }
  // the steps met each kind of decision and verdict
  assert.ok(all.some((s) => s.decision?.action === 'retry' && 'thenCancel' in s.decision))
  assert.ok(all.some((s) => s.decision?.action === 'no_retry'))
  assert.ok(all.some((s) => s.decision !== null && 'fromRetryAfter' in s.decision)) // HTTP's
  assert.ok(all.some((s) => s.budget?.permitted === true) && all.some((s) => s.budget?.permitted === false))
  assert.ok(all.some((s) => s.breaker?.permitted === true))
  const r = new addon.RunConfigHandle(JSON.stringify(decide('GET'))).start(undefined, undefined, 0, 0.5, undefined, undefined, (...a) => [a[15], makeStep(...a.slice(0, 15))])
  assert.equal(r[1].action, 'send')
  // a run cancelled: the same through both
  const c1 = r[0].cancel(undefined, undefined, 5, makeStep)
  const t = new addon.RunHandle(JSON.stringify(decide('GET')))
  t.start(undefined, undefined, 0, 0.5)
  assert.deepStrictEqual(c1, t.cancel(undefined, undefined, 5))
})

// RetryBudget, CircuitBreaker and decideWithBudget through the public API, and the runners (retry,
// retryFetch) with a budget and a breaker under a fake clock. Expected counts are worked out by hand
// from gRFC A6 (a failure takes a token, no retry at or below max_tokens / 2) and Couchbase's
// breaker (trip at the volume threshold, one canary after more than the sleep window).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import rp from './binding.mjs'

const A6 = { kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }
const KV_GET = { service: 'kv', operation: 'get' }
const failing = (reason) => Object.assign(new Error(reason), { reason })

/** A fake clock whose sleep advances it. */
function fakeTime() {
  const t = { now: 1000 }
  t.clock = () => t.now
  t.sleep = async (ms) => void (t.now += ms)
  return t
}

test('a token bucket: verdicts, the balance after a withdrawal, snapshots that survive JSON and restore', () => {
  const budget = new rp.RetryBudget(A6)
  for (let at = 0; at < 4; at++) budget.record(at, 'failure')
  const v = budget.permit(4)
  assert.deepEqual({ ...v, source: undefined }, { permitted: true, cause: null, kind: 'token_bucket', rule: 'token_bucket_above_half', source: undefined, balance: 6000 })
  assert.ok(Object.isFrozen(v) && v.source.includes('gRFC A6'))
  budget.record(5, 'failure') // 5 tokens: at half
  assert.equal(budget.tryRetry(6).rule, 'token_bucket_at_or_below_half')
  const stored = JSON.stringify(budget.snapshot())
  assert.equal(stored, '{"version":1,"kind":"token_bucket","balance":5000}')
  const again = rp.RetryBudget.restore(A6, JSON.parse(stored))
  again.record(7, 'success') // 5.1 tokens: above half again; a retry itself takes no token in gRPC's bucket
  assert.deepEqual([again.tryRetry(8).permitted, again.snapshot().balance], [true, 5100])
  assert.deepEqual(JSON.parse(JSON.stringify(again)), { version: 1, ...A6 })
  assert.equal(rp.RetryBudget.restore(A6, stored).snapshot().balance, 5000) // the snapshot's JSON text too
})

test('the AWS retry quota: a retry of a timeout costs 10, its success refunds it; Finagle: 20% of requests', () => {
  const quota = new rp.RetryBudget({ kind: 'retry_quota' })
  assert.equal(quota.tryRetry(0, 'timeout').balance, 490)
  quota.record(1, { kind: 'success', afterRetry: 'timeout' })
  assert.equal(quota.permit(2).balance, 500)
  const pct = new rp.RetryBudget({ kind: 'percentage', percent: 20, min_retries_per_sec: 0 })
  for (let i = 0; i < 5; i++) pct.record(0, 'request')
  assert.deepEqual([pct.tryRetry(1).permitted, pct.tryRetry(2).permitted], [true, false])
  assert.deepEqual(pct.snapshot().buckets, [{ slice: 0, requests: 5, retries: 1 }])
})

test('typed errors name the field: documents, snapshots, events, the clock', () => {
  const fails = (f, code, field) => assert.throws(f, (e) => rp.isRetryPolicyError(e) && e.code === code && e.field === field)
  fails(() => new rp.RetryBudget({ kind: 'token_bucket', maxTokens: 10 }), 'unknown_field', 'budget.maxTokens')
  fails(() => new rp.RetryBudget({ kind: 'token_bucket', max_tokens: 0 }), 'out_of_range', 'budget.max_tokens')
  fails(() => new rp.RetryBudget({ kind: 'leaky' }), 'unknown_name', 'budget.kind')
  fails(() => rp.RetryBudget.restore(A6, { kind: 'token_bucket', balance: 10001 }), 'out_of_range', 'state.balance')
  fails(() => rp.RetryBudget.restore(A6, { kind: 'retry_quota', balance: 1 }), 'unknown_name', 'state.kind')
  const budget = new rp.RetryBudget(A6)
  fails(() => budget.record(0, 'explode'), 'unknown_name', 'event.kind')
  fails(() => budget.record(0, { kind: 'failure', cause: 'timeout' }), 'unknown_field', 'event.cause')
  fails(() => budget.record(0, { kind: 'retry', afterRetry: 'error' }), 'unknown_field', 'event.afterRetry')
  fails(() => budget.record(0, { kind: 'retry', tokens: 1 }), 'unknown_field', 'event.tokens')
  fails(() => budget.permit(-1), 'invalid_duration', 'nowMs')
  fails(() => budget.permit(1.5), 'invalid_duration', 'nowMs')
  fails(() => budget.tryRetry(0, 'throttle'), 'unknown_name', 'cause')
  fails(() => new rp.CircuitBreaker({ error_threshold_percentage: 101 }), 'out_of_range', 'breaker.error_threshold_percentage')
  fails(() => rp.CircuitBreaker.restore(null, { state: 'open', total: 0, failures: 0 }), 'missing_field', 'state.since_ms')
  fails(() => new rp.CircuitBreaker().record(0, 'request'), 'unknown_name', 'outcome')
})

test("a breaker with Couchbase's defaults trips at 20 outcomes, half of them failed; one canary after 5 s", () => {
  const breaker = new rp.CircuitBreaker()
  for (let i = 0; i < 19; i++) breaker.record(i, 'failure')
  assert.equal(breaker.state(19), 'closed')
  breaker.record(19, 'failure')
  const refused = breaker.permit(20)
  assert.deepEqual([refused.permitted, refused.reason, refused.rule, refused.state], [false, 'CIRCUIT_BREAKER_OPEN', 'breaker_open', 'open'])
  assert.equal(breaker.permit(5019).permitted, false) // not past the sleep window yet
  const canary = breaker.permit(5020)
  assert.deepEqual([canary.permitted, canary.canary, canary.state], [true, true, 'half_open'])
  assert.equal(breaker.permit(5021).rule, 'breaker_canary_in_flight')
  const moved = rp.CircuitBreaker.restore(undefined, JSON.parse(JSON.stringify(breaker.snapshot())))
  moved.record(5030, 'success')
  assert.deepEqual([moved.state(5030), breaker.state(5030)], ['closed', 'half_open'])
})

test('decideWithBudget: no verdict is decide; a refusing verdict turns a retry into budget_exhausted', () => {
  const request = { ...KV_GET, timeoutMs: 2500, attempts: 0, elapsedMs: 0 }
  assert.deepEqual(rp.decideWithBudget(request, 'KV_LOCKED'), rp.decide(request, 'KV_LOCKED'))
  const budget = rp.RetryBudget.restore(A6, { kind: 'token_bucket', balance: 4500 })
  const d = rp.decideWithBudget(request, 'KV_LOCKED', undefined, budget.permit(0))
  assert.deepEqual(
    { action: d.action, cause: d.cause, rule: d.rule, reason: d.reason, refusedDelayMs: d.refusedDelayMs, balance: d.budget.balance },
    { action: 'no_retry', cause: 'budget_exhausted', rule: 'token_bucket_at_or_below_half', reason: 'KV_LOCKED', refusedDelayMs: 1, balance: 4500 },
  )
  assert.match(rp.explainWithBudget(request, 'KV_LOCKED', undefined, budget.permit(0)).sentence, /holds 4\.5 tokens/)
  assert.throws(() => rp.decideWithBudget(request, 'KV_LOCKED', undefined, { permitted: true, rule: 'retry_quota_exhausted' }),
    (e) => e.code === 'out_of_range' && e.field === 'budgetVerdict.permitted')
})

test('retry with an A6 token bucket: a 100% failure storm stops retrying once the bucket drains to half', async () => {
  const budget = new rp.RetryBudget(A6)
  const t = fakeTime()
  const attemptsPerRun = []
  const gaveUp = []
  for (let run = 0; run < 10; run++) {
    let calls = 0
    await assert.rejects(
      rp.retry(async () => { calls++; throw failing('KV_TEMPORARY_FAILURE') }, {
        operation: KV_GET, timeoutMs: 2500, budget, classify: (e) => e.reason, clock: t.clock, sleep: t.sleep,
        onGiveUp: (d) => gaveUp.push(d),
      }),
      (e) => e.reason === 'KV_TEMPORARY_FAILURE' && e.retryStep.decision.cause === 'budget_exhausted',
    )
    attemptsPerRun.push(calls)
  }
  // Run 1: failures take the bucket 10 → 9 → 8 → 7 → 6 (each retried), the fifth leaves 5 (at half: refused).
  // Then every failure finds the bucket at or below half: one attempt per run.
  assert.deepEqual(attemptsPerRun, [5, 1, 1, 1, 1, 1, 1, 1, 1, 1])
  assert.ok(gaveUp.every((d) => d.rule === 'token_bucket_at_or_below_half' && d.budget.permitted === false))
  assert.equal(budget.snapshot().balance, 0) // 5 + 9 failures, clamped at 0
})

test('retry with a breaker: it opens at its volume threshold, refused attempts send nothing, one canary after the sleep window', async () => {
  const breaker = new rp.CircuitBreaker({ volume_threshold: 4, error_threshold_percentage: 50, sleep_window_ms: 1000, canary_timeout_ms: 500 })
  const t = fakeTime()
  const calls = []
  const refusals = []
  const retried = []
  const result = await rp.retry(
    async () => {
      calls.push(t.now)
      if (calls.length <= 5) throw failing('KV_TEMPORARY_FAILURE') // four trip it; the first canary fails too
      return 'served'
    },
    {
      operation: KV_GET, timeoutMs: 60_000, breaker, classify: (e) => e.reason, clock: t.clock, sleep: t.sleep,
      onRetry: (d, e) => retried.push([d.signal, e.reason]),
      onBreakerWait: (d, e) => refusals.push([t.now, d.reason, e instanceof rp.CircuitOpenError && e.verdict.rule, d.signal]),
    },
  )
  assert.equal(result, 'served')
  assert.equal(calls.length, 6)
  const [opened, canary1, canary2] = [calls[3], calls[4], calls[5]]
  assert.ok(canary1 - opened > 1000, `first canary ${canary1 - opened} ms after the circuit opened`)
  assert.ok(canary2 - canary1 > 1000, `second canary ${canary2 - canary1} ms after the first failed`)
  // onRetry hears the five failures, each retried; a wait for the breaker is onBreakerWait's alone (the core's signal).
  assert.deepEqual(retried, Array(5).fill(['retry', 'KV_TEMPORARY_FAILURE']))
  assert.ok(refusals.length > 0 && refusals.every(([, reason, rule, signal]) => reason === 'CIRCUIT_BREAKER_OPEN' && rule === 'breaker_open' && signal === 'breaker_wait'))
  assert.ok(refusals.every(([at]) => (at >= opened && at < canary1) || (at >= canary1 && at < canary2)))
  assert.equal(breaker.state(t.now), 'closed')
})

test("retryFetch with a budget and a breaker: a 503 storm ends with the core's stop by the budget; an open breaker sends nothing", async () => {
  const budget = new rp.RetryBudget(A6)
  const t = fakeTime()
  let sent = 0
  const fetch = async () => (sent++, new Response('busy', { status: 503 }))
  let gaveUp
  const response = await rp.retryFetch('http://127.0.0.1:9/', undefined, {
    maxAttempts: 10, fetch, budget, clock: t.clock, sleep: t.sleep, onGiveUp: (step) => (gaveUp = step),
  })
  assert.equal(response.status, 503)
  assert.equal(sent, 5) // as in retry: four retries, then the bucket is at half
  // the machine's end under the core's http_next stop: transient, the budget's rule and source
  assert.deepEqual([gaveUp.action, gaveUp.end, gaveUp.rule, gaveUp.budget.permitted], ['done', 'gave_up', 'token_bucket_at_or_below_half', false])
  const { action, outcome, class: cls, rule, delayMs } = gaveUp.decision
  assert.deepEqual({ action, outcome, cls, rule, delayMs }, { action: 'stop', outcome: 'transient', cls: 'transient', rule: 'token_bucket_at_or_below_half', delayMs: undefined })
  assert.ok(gaveUp.decision.section.includes('gRFC A6') && !('permitted' in gaveUp.decision))
  assert.equal(budget.snapshot().balance, 5000) // the refused retry took nothing
  // An open breaker whose window outlasts the run: nothing is sent, the run ends at its deadline.
  const breaker = rp.CircuitBreaker.restore(null, { state: 'open', since_ms: t.now, total: 20, failures: 20 })
  await assert.rejects(
    rp.retryFetch('http://127.0.0.1:9/', undefined, { timeoutMs: 1000, fetch, breaker, clock: t.clock, sleep: t.sleep }),
    (e) => e instanceof rp.RetryTimeoutError && e.retryStep.rule === 'breaker_open_at_deadline' && e.cause instanceof rp.CircuitOpenError &&
      e.cause.verdict.reason === 'CIRCUIT_BREAKER_OPEN',
  )
  assert.equal(sent, 5) // nothing more was sent
})

test('retryFetch: a wait for the breaker before any attempt leaves a streamed body unsent; it goes once after the wait', async () => {
  const t = fakeTime()
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 1000 })
  breaker.record(t.now, 'failure') // open: the first attempt waits for the window
  const big = 'x'.repeat(100)
  const bodies = []
  const fetch = async (_input, init) => {
    let text = ''
    for await (const chunk of init.body) text += new TextDecoder().decode(chunk)
    bodies.push(text)
    return new Response('ok', { status: 200 })
  }
  const body = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(big)), c.close()) })
  const waits = []
  const response = await rp.retryFetch('http://127.0.0.1:9/', { method: 'PUT', body, duplex: 'half' }, {
    fetch, maxBodyBytes: 10, timeoutMs: 5000, breaker, clock: t.clock, sleep: t.sleep, onBreakerWait: (step) => waits.push(step.signal),
  })
  // The body cannot be replayed (100 bytes over maxBodyBytes 10), but it was never sent before the wait.
  assert.equal(response.status, 200)
  assert.deepEqual(bodies, [big])
  assert.deepEqual(waits, ['breaker_wait'])
})

test('retryFetch: a deadline that passes during the wait after a 503 is a RetryTimeoutError, not the cancelled 503', async () => {
  const t = fakeTime()
  let sent = 0
  const fetch = async () => (sent++, new Response('busy', { status: 503 }))
  const overshoot = async (ms) => void (t.now += ms + 5000) // the process stalled: the wait ends past the deadline
  const heard = []
  await assert.rejects(
    rp.retryFetch('http://127.0.0.1:9/', undefined, {
      timeoutMs: 1000, fetch, clock: t.clock, sleep: overshoot, onGiveUp: (step, r) => heard.push([step.rule, r.status]),
    }),
    // The 503's body was cancelled before the wait: returned, it could not be read ("Body is unusable").
    (e) => e instanceof rp.RetryTimeoutError && e.retryStep.rule === 'deadline_passed' && e.cause instanceof Response && e.cause.status === 503,
  )
  assert.equal(sent, 1)
  assert.deepEqual(heard, [['deadline_passed', 503]])
})

test('runners refuse a budget or breaker that is not one', async () => {
  await assert.rejects(rp.retry(async () => 1, { operation: KV_GET, timeoutMs: 10, budget: 5 }), (e) => e.code === 'invalid_type' && e.field === 'budget')
  await assert.rejects(rp.retry(async () => 1, { operation: KV_GET, timeoutMs: 10, breaker: {} }), (e) => e.code === 'invalid_type' && e.field === 'breaker')
})

test('restore needs a snapshot; deep or cyclic documents are typed errors, not RangeError (issue 31 #13)', () => {
  for (const none of [null, undefined]) {
    assert.throws(() => rp.CircuitBreaker.restore({}, none), (e) => rp.isRetryPolicyError(e) && e.code === 'missing_field' && e.field === 'state')
    assert.throws(() => rp.RetryBudget.restore(A6, none), (e) => rp.isRetryPolicyError(e) && e.code === 'missing_field' && e.field === 'state')
  }
  const deep = (n) => { let v = {}; for (let i = 0; i < n; i++) v = { a: v }; return v }
  const cyclic = { ...A6 }
  cyclic.self = cyclic
  const loop = []
  loop.push(loop)
  const typed = (code) => (e) => rp.isRetryPolicyError(e) && e.code === code && typeof e.field === 'string'
  assert.throws(() => new rp.RetryBudget(cyclic), typed('invalid_type'))
  assert.throws(() => rp.CircuitBreaker.restore({}, { state: 'closed', total: 0, failures: 0, x: loop }), typed('invalid_type'))
  assert.throws(() => new rp.Policy(deep(100_000)), typed('out_of_range'))
  assert.throws(() => rp.RetryBudget.restore(A6, deep(100_000)), typed('out_of_range'))
  assert.throws(() => rp.mongodb.classifyError(deep(100_000)), typed('out_of_range'))
  assert.throws(() => rp.mongodb.classifyError({ code: 6, x: loop }), typed('invalid_type'))
  assert.throws(() => new rp.Run({ rules: { decide: { operation: deep(100_000) } }, timeoutMs: 1 }), typed('out_of_range'))
})

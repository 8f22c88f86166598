// retry(fn, options): the loop's behaviour with a fake clock and sleep (properties over seeded
// random runs), and with real timers for cancellation; the classifiers of thrown errors.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import diagnostics from 'node:diagnostics_channel'
import rp, { which } from './binding.mjs'
import { rng, KV_OPS, POLICY_DOCS } from './random.mjs'

const SEED = Number(process.env.RETRYPOLICY_SEED ?? 20261125)
const REASONS = Object.values(rp.RetryReason)
// RFC 0049's RetryReason table: the two reasons whose "non-idempotent retry" column says false.
const NOT_FOR_NON_IDEMPOTENT = new Set(['UNKNOWN', 'SOCKET_CLOSED_WHILE_IN_FLIGHT'])
const GET = { service: 'management', method: 'GET' }
const coded = (code, extra) => Object.assign(new Error(code), { code }, extra)

/** A fake monotonic clock whose sleep advances it, recording every sleep as [at, ms]. */
function fakeTime() {
  const t = { now: 1000, sleeps: [] }
  t.clock = () => t.now
  t.sleep = async (ms) => {
    t.sleeps.push([t.now, ms])
    t.now += ms
  }
  return t
}

/** One random run: an operation, a policy, a timeout, and each attempt's latency and outcome. */
function randomRun(r) {
  const service = r.pick(['kv', 'kv', 'query', 'management', 'search'])
  const operation =
    service === 'kv' ? { service, operation: r.pick(KV_OPS) }
      : service === 'query' ? { service, readonly: r.pick([true, false]) }
        : service === 'management' ? { service, method: r.pick(['GET', 'POST']) } : { service }
  const doc = r.pick(POLICY_DOCS.filter((d) => d?.backoff?.delay_ms === undefined))
  const outcomes = Array.from({ length: r.int(0, 12) }, () => r.pick(REASONS))
  return { operation, doc, timeoutMs: r.pick([0, 1, 50, 2500, r.int(0, 20_000)]), outcomes, latency: () => r.int(0, 400) }
}

test('property: no sleep reaches past the deadline, no attempt starts at or after it, attempts counted exactly', async () => {
  const r = rng(SEED)
  for (let i = 0; i < 400; i++) {
    const run = randomRun(r)
    const t = fakeTime()
    const start = t.now
    const starts = []
    const decisions = []
    const where = `seed ${SEED} run ${i}: ${JSON.stringify({ ...run, latency: undefined })}`
    const outcome = await rp
      .retry(
        async ({ attempt, remainingMs }) => {
          starts.push(t.now)
          assert.equal(attempt, starts.length, where)
          assert.equal(remainingMs, Math.max(0, run.timeoutMs - (t.now - start)), where) // the send step's bound
          t.now += run.latency()
          const reason = run.outcomes[attempt - 1]
          if (reason === undefined) return 'done'
          throw Object.assign(new Error(reason), { reason })
        },
        {
          operation: run.operation,
          timeoutMs: run.timeoutMs,
          policy: run.doc && new rp.Policy(run.doc),
          classify: (e) => e.reason,
          clock: t.clock,
          sleep: t.sleep,
          random: r.next,
          onRetry: (d) => decisions.push(d),
          onGiveUp: (d) => decisions.push(d),
        },
      )
      .then((v) => ({ v }), (e) => ({ e }))
    for (const [at, ms] of t.sleeps) assert.ok(at + ms < start + run.timeoutMs, `${where}: slept ${ms} ms at ${at - start}`)
    for (const s of starts.slice(1)) assert.ok(s < start + run.timeoutMs, where)
    // every failed attempt got exactly one step (a wait or the end), its decision numbered by the retries
    // made before it; a run with no time at all sends nothing and ends at once (rule deadline_passed)
    if (run.timeoutMs === 0) assert.deepEqual([starts.length, decisions.map((s) => s.rule)], [0, ['deadline_passed']], where)
    if (run.timeoutMs === 0) continue
    assert.equal(decisions.length, Math.min(starts.length, run.outcomes.length), where)
    decisions.forEach((s, k) => assert.equal(s.decision.attempts, k, where))
    assert.equal(t.sleeps.filter(([, ms]) => ms > 0).length, decisions.filter((s) => s.action === 'wait' && s.delayMs > 0).length, where)
    if ('v' in outcome) assert.equal(starts.length, run.outcomes.length + 1, where)
    else assert.ok(decisions.at(-1).action === 'done' && decisions.at(-1).end !== 'succeeded', where)
  }
})

test('property: a non-idempotent operation is never retried after a reason that forbids it', async () => {
  const r = rng(SEED + 1)
  for (let i = 0; i < 400; i++) {
    const operation = r.pick([{ service: 'kv', operation: 'upsert' }, { service: 'kv', operation: 'increment' }, { service: 'management', method: 'POST' }])
    const reasons = Array.from({ length: r.int(1, 6) }, () => r.pick(REASONS))
    const t = fakeTime()
    let calls = 0
    const retried = []
    await rp
      .retry(
        async ({ attempt }) => {
          calls = attempt
          const reason = reasons[attempt - 1]
          if (reason === undefined) return
          throw Object.assign(new Error(reason), { reason })
        },
        { operation, timeoutMs: 75_000, classify: (e) => e.reason, clock: t.clock, sleep: t.sleep, onRetry: (d) => retried.push(d.reason) },
      )
      .catch(() => {})
    const where = `seed ${SEED + 1} run ${i}: ${JSON.stringify({ operation, reasons })}`
    for (const reason of retried) assert.ok(!NOT_FOR_NON_IDEMPOTENT.has(reason), where)
    const firstForbidden = reasons.findIndex((x) => NOT_FOR_NON_IDEMPOTENT.has(x))
    if (firstForbidden >= 0) assert.ok(calls <= firstForbidden + 1, where)
    else assert.equal(calls, reasons.length + 1, where)
  }
})

test('success needs no decision; an error classified null surfaces at once, untouched', async () => {
  assert.equal(await rp.retry(async ({ attempt }) => attempt * 10, { operation: GET, timeoutMs: 100 }), 10)
  const boom = new Error('bad input')
  let calls = 0
  const hooked = []
  const hooks = { onRetry: () => hooked.push('retry'), onBreakerWait: () => hooked.push('breaker_wait'), onGiveUp: () => hooked.push('give_up') }
  await assert.rejects(rp.retry(async () => { calls++; throw boom }, { operation: GET, timeoutMs: 1000, ...hooks }), (e) => e === boom && e.retryStep === undefined && e.retryDecision === undefined)
  assert.equal(calls, 1)
  assert.deepEqual(hooked, [], 'a final failure is no give-up: no hook fires')
})

test("a classifier's answer that is not a reason name is a typed error naming outcome.reason, on every backend", async () => {
  for (const answer of [1n, 5, Symbol('x'), new String('KV_TEMPORARY_FAILURE')]) {
    await assert.rejects(
      rp.retry(async () => { throw new Error('x') }, { operation: GET, timeoutMs: 1000, classify: () => answer }),
      (e) => e.code === 'invalid_type' && e.field === 'outcome.reason',
      String(typeof answer),
    )
  }
})

test('an async hook is awaited: its rejection rejects the call, cancelling the run (no unhandled rejection)', async () => {
  const reset = coded('ECONNRESET')
  const hookError = new Error('the hook failed')
  let calls = 0
  let unhandled = 0
  const count = () => unhandled++
  process.on('unhandledRejection', count)
  try {
    await assert.rejects(
      rp.retry(async () => { calls++; throw reset }, {
        operation: GET, timeoutMs: 60_000, sleep: async () => {}, onRetry: async () => { throw hookError },
      }),
      (e) => e === hookError && e.cause === reset,
    )
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('unhandledRejection', count)
  }
  assert.equal(calls, 1) // the run stopped at the hook: no second attempt
  assert.equal(unhandled, 0)
})

test('giving up: not idempotent → the last error with the decision; the deadline → RetryTimeoutError with the cause', async () => {
  const reset = coded('ECONNRESET')
  let gaveUp
  await assert.rejects(
    rp.retry(async () => { throw reset }, { operation: { service: 'management', method: 'POST' }, timeoutMs: 1000, onGiveUp: (d, e) => (gaveUp = [d, e]) }),
    (e) => e === reset && e.retryStep.end === 'gave_up' && e.retryStep.decision.cause === 'not_idempotent' &&
      e.retryStep.decision.rule === 'best_effort_not_idempotent',
  )
  assert.equal(gaveUp[0], reset.retryStep) // what onGiveUp got
  assert.equal(gaveUp[1], reset)
  // The deprecated name: the step's decision, not enumerable (console.log of the error shows retryStep and retryStats alone).
  assert.equal(reset.retryDecision, reset.retryStep.decision)
  assert.deepEqual(Object.keys(reset).filter((k) => k.startsWith('retry')), ['retryStep', 'retryStats'])
  assert.deepEqual([reset.retryStats.attempts, reset.retryStats.end, reset.retryStats.lastRule], [1, 'gave_up', 'best_effort_not_idempotent'])
  const t = fakeTime()
  const refused = coded('ECONNREFUSED')
  await assert.rejects(
    rp.retry(async () => { t.now += 40; throw refused }, { operation: GET, timeoutMs: 100, clock: t.clock, sleep: t.sleep }),
    (e) => e instanceof rp.RetryTimeoutError && e.cause === refused && e.code === 'ERR_RETRYPOLICY_TIMEOUT' && e.retryStep.end === 'timed_out' &&
      e.retryStep.action === 'done' && e.step === e.retryStep && e.decision === e.retryStep.decision && Object.keys(e).includes('retryStep'),
  )
  assert.ok(t.now - 1000 <= 100 + 40)
})

test('every decision is published on the retrypolicy:decision channel', async () => {
  assert.equal(rp.DECISION_CHANNEL, 'retrypolicy:decision')
  const seen = []
  const listener = (m) => seen.push(m)
  diagnostics.subscribe(rp.DECISION_CHANNEL, listener)
  try {
    const t = fakeTime()
    await rp.retry(async ({ attempt }) => { if (attempt < 3) throw coded('EPIPE') }, { operation: GET, timeoutMs: 5000, clock: t.clock, sleep: t.sleep })
  } finally {
    diagnostics.unsubscribe(rp.DECISION_CHANNEL, listener)
  }
  // each wait step, numbered by the attempt it leads to
  assert.deepEqual(seen.map((m) => [m.runner, m.attempt, m.step.action, m.decision.action, m.decision.reason, m.error.code]), [
    ['retry', 2, 'wait', 'retry', 'SOCKET_CLOSED_WHILE_IN_FLIGHT', 'EPIPE'],
    ['retry', 3, 'wait', 'retry', 'SOCKET_CLOSED_WHILE_IN_FLIGHT', 'EPIPE'],
  ])
})

test('an abort during the wait rejects with the signal reason and calls fn no more (real timers)', async () => {
  const ac = new AbortController()
  const why = new Error('shutting down')
  let calls = 0
  const run = rp.retry(async () => { calls++; throw coded('ECONNREFUSED') }, {
    operation: GET, timeoutMs: 60_000, signal: ac.signal, policy: new rp.Policy({ backoff: { kind: 'fixed', delay_ms: 10_000 } }),
  })
  setTimeout(() => ac.abort(why), 20)
  await assert.rejects(run, (e) => e === why) // the 10 s wait was cut: the test would time out otherwise
  assert.equal(calls, 1)
  await assert.rejects(rp.retry(async () => calls++, { operation: GET, timeoutMs: 10, signal: AbortSignal.abort(why) }), (e) => e === why)
  assert.equal(calls, 1)
})

test('bad arguments are typed errors', async () => {
  await assert.rejects(rp.retry('nope', { operation: GET, timeoutMs: 1 }), { code: 'invalid_type', field: 'fn' })
  await assert.rejects(rp.retry(async () => {}, { timeoutMs: 1 }), { code: 'invalid_type', field: 'operation' })
  await assert.rejects(rp.retry(async () => {}, { operation: GET, timeoutMs: 1, classify: 3 }), { code: 'invalid_type', field: 'classify' })
  await assert.rejects(rp.retry(async () => {}, { operation: GET, timeoutMs: 1, signal: {} }), { code: 'invalid_type', field: 'signal' })
  await assert.rejects(rp.retry(async () => { throw coded('EPIPE') }, { operation: GET }), { code: 'missing_field' })
})

test('classifiers: Node and fetch network errors by whether the request left; HTTP status errors by class', () => {
  const n = rp.classifyNetworkError
  assert.equal(n(coded('ECONNREFUSED')), 'SOCKET_NOT_AVAILABLE')
  assert.equal(n(coded('ETIMEDOUT', { syscall: 'connect' })), 'SOCKET_NOT_AVAILABLE')
  assert.equal(n(coded('ETIMEDOUT', { syscall: 'read' })), 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.equal(n(coded('ECONNRESET')), 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.equal(n(coded('EPIPE')), 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.equal(n(new TypeError('fetch failed', { cause: coded('UND_ERR_SOCKET') })), 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  const refusedTwice = Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), { code: undefined })
  assert.equal(n(new TypeError('fetch failed', { cause: refusedTwice })), 'SOCKET_NOT_AVAILABLE')
  assert.equal(n(new TypeError('fetch failed')), null)
  assert.equal(n('ECONNRESET'), null)
  const h = rp.classifyHttpStatus
  assert.equal(h({ status: 503 }), 'SERVICE_RESPONSE_CODE_INDICATED')
  assert.equal(h({ statusCode: 429 }), 'SERVICE_RESPONSE_CODE_INDICATED')
  assert.equal(h({ response: { status: 404 } }), null)
  assert.equal(h({ status: 501 }), null)
  assert.equal(h({ status: 100 }), null) // an interim response, not a result
  assert.equal(h({ status: 600 }), null)
  assert.equal(n(coded('ENOTFOUND')), 'SOCKET_NOT_AVAILABLE')
  assert.equal(n(coded('UND_ERR_CONNECT_TIMEOUT')), 'SOCKET_NOT_AVAILABLE')
  assert.equal(n(coded('constructor')), null)
  assert.equal(h(new Error('x')), null)
  assert.equal(rp.classifyError(coded('ECONNRESET', { status: 404 })), 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.equal(rp.classifyError({ status: 500 }), 'SERVICE_RESPONSE_CODE_INDICATED')
})

test('a host strategy sees each request as the runner counted it: attempts, elapsed time, earlier reasons and delay', async () => {
  const t = fakeTime()
  const seen = []
  const strategy = (request, reason) => {
    seen.push({ attempts: request.attempts, elapsedMs: request.elapsedMs, previousReasons: request.previousReasons, previousDelayMs: request.previousDelayMs, reason })
    return 25
  }
  const reasons = ['KV_LOCKED', 'KV_TEMPORARY_FAILURE']
  const out = await rp.retry(async ({ attempt }) => {
    t.now += 10
    if (attempt <= reasons.length) throw Object.assign(new Error('x'), { reason: reasons[attempt - 1] })
    return 'ok'
  }, { operation: { service: 'kv', operation: 'get' }, timeoutMs: 1000, strategy, classify: (e) => e.reason, clock: t.clock, sleep: t.sleep })
  assert.equal(out, 'ok')
  assert.deepEqual(seen, [
    { attempts: 0, elapsedMs: 10, previousReasons: [], previousDelayMs: undefined, reason: 'KV_LOCKED' },
    { attempts: 1, elapsedMs: 45, previousReasons: ['KV_LOCKED'], previousDelayMs: 25, reason: 'KV_TEMPORARY_FAILURE' },
  ])
})

test('ready for HTTP by default: a status error is retried after its Retry-After (Headers or a plain object); a 404 surfaces at once', async () => {
  const t = fakeTime()
  const statuses = [
    Object.assign(new Error('HTTP 429'), { response: { status: 429, headers: new Headers({ 'retry-after': '2' }) } }),
    Object.assign(new Error('HTTP 503'), { statusCode: 503, headers: { 'retry-after': '1' } }),
  ]
  const out = await rp.retry(async ({ attempt }) => {
    if (attempt <= statuses.length) throw statuses[attempt - 1]
    return 'ok'
  }, { operation: GET, timeoutMs: 10_000, clock: t.clock, sleep: t.sleep })
  assert.equal(out, 'ok')
  assert.deepEqual(t.sleeps.map(([, ms]) => ms), [2000, 1000])
  const missing = Object.assign(new Error('HTTP 404'), { status: 404 })
  let calls = 0
  await assert.rejects(rp.retry(async () => { calls++; throw missing }, { operation: GET, timeoutMs: 10_000 }), (e) => e === missing)
  assert.equal(calls, 1)
})

test('maxAttempts caps the attempts; options are checked before the first attempt', async () => {
  const t = fakeTime()
  let calls = 0
  await assert.rejects(
    rp.retry(async () => { calls++; throw coded('ECONNRESET') }, { operation: GET, timeoutMs: 60_000, maxAttempts: 2, clock: t.clock, sleep: t.sleep }),
    (e) => e.code === 'ECONNRESET' && e.retryStep.rule === 'max_attempts_reached' && e.retryStep.end === 'gave_up',
  )
  assert.equal(calls, 2)
  for (const [bad, field] of [[{ maxAttempts: 0 }, 'maxAttempts'], [{ attemptTimeoutMs: 0 }, 'attemptTimeoutMs'], [{ timeoutMs: -1 }, 'timeoutMs']]) {
    await assert.rejects(rp.retry(async () => calls++, { operation: GET, timeoutMs: 1000, ...bad }), (e) => rp.isRetryPolicyError(e) && e.field.includes(field))
  }
  assert.equal(calls, 2)
})

test('attemptTimeoutMs cuts a hung attempt (a timeout for the budget); the run ends at its deadline', async () => {
  const t = fakeTime()
  const budget = new rp.RetryBudget({ kind: 'retry_quota' })
  let calls = 0
  await assert.rejects(
    rp.retry(() => { calls++; return new Promise(() => {}) }, {
      operation: GET, timeoutMs: 1000, attemptTimeoutMs: 300, budget, clock: t.clock, sleep: t.sleep,
    }),
    (e) => e instanceof rp.RetryTimeoutError && e.retryStep.end === 'timed_out',
  )
  assert.ok(calls >= 2, String(calls))
  // the cut attempts were timeouts: each retry of one cost the quota its timeout_cost of 10
  assert.equal(budget.snapshot().balance, 500 - 10 * (calls - 1))
})

test("a run's own RetryTimeoutError is never retried by an outer run", async () => {
  const t = fakeTime()
  let inner = 0
  let outer = 0
  const innerRun = () => rp.retry(async () => { inner++; t.now += 60; throw coded('ECONNRESET') }, { operation: GET, timeoutMs: 100, clock: t.clock, sleep: t.sleep })
  await assert.rejects(
    rp.retry(() => (outer++, innerRun()), { operation: GET, timeoutMs: 60_000, clock: t.clock, sleep: t.sleep }),
    (e) => e instanceof rp.RetryTimeoutError && e.code === 'ERR_RETRYPOLICY_TIMEOUT',
  )
  assert.equal(outer, 1)
  assert.ok(inner >= 1)
  assert.equal(rp.classifyError(new rp.RetryTimeoutError('x', null, coded('ECONNRESET'))), null)
})

test('an attempt that never settles: its signal fires at the deadline and the run ends; a caller abort ends it too (issue 31 #4)', async () => {
  let given
  await assert.rejects(
    rp.retry(({ signal }) => { given = signal; return new Promise(() => {}) }, { operation: GET, timeoutMs: 200 }),
    (e) => e instanceof rp.RetryTimeoutError && e.retryStep.end === 'timed_out' && e.cause.name === 'TimeoutError',
  )
  assert.equal(given.aborted, true)
  assert.equal(given.reason.name, 'TimeoutError')
  const ac = new AbortController()
  const why = new Error('caller gave up')
  let seen
  const run = rp.retry(({ signal }) => { seen = signal; return new Promise(() => {}) }, { operation: GET, timeoutMs: 600_000, signal: ac.signal })
  setTimeout(() => ac.abort(why), 30)
  await assert.rejects(run, (e) => e === why)
  assert.equal(seen.aborted, true)
  assert.equal(seen.reason, why)
})

test('an error raised while handling a failure carries it as cause: classifier, hook, bad clock (issue 31 #5)', async () => {
  const t = fakeTime()
  const fail = coded('ECONNRESET')
  const base = { operation: GET, timeoutMs: 5000, sleep: t.sleep }
  const boom = new Error('classifier broke')
  await assert.rejects(rp.retry(async () => { throw fail }, { ...base, clock: t.clock, classify: () => { throw boom } }), (e) => e === boom && e.cause === fail)
  const hook = new Error('hook broke')
  await assert.rejects(rp.retry(async () => { throw fail }, { ...base, clock: t.clock, onRetry: () => { throw hook } }), (e) => e === hook && e.cause === fail)
  let reads = 0
  const clock = () => (++reads === 1 ? 1000 : NaN) // the clock breaks once the attempt failed
  await assert.rejects(rp.retry(async () => { throw fail }, { ...base, clock }), (e) => rp.isRetryPolicyError(e) && e.field.includes('nowMs') && e.cause === fail)
})

test('options are checked before the first attempt: NaN, negative and string timeoutMs, a misspelled operation (issue 31 #5)', async () => {
  let calls = 0
  const fn = async () => { calls++; throw coded('ECONNRESET') }
  for (const bad of [{ timeoutMs: NaN }, { timeoutMs: -1 }, { timeoutMs: '100' }, { operation: { service: 'kv', operation: 'gett' } }]) {
    await assert.rejects(rp.retry(fn, { operation: GET, timeoutMs: 1000, ...bad }), (e) => rp.isRetryPolicyError(e), JSON.stringify(bad))
  }
  assert.equal(calls, 0)
})

test('a wait past 2^31 - 1 ms is chained: it does not fire early (issue 31 #8)', async () => {
  const ac = new AbortController()
  let calls = 0
  const run = rp.retry(async () => { calls++; throw coded('ECONNREFUSED') }, {
    operation: GET, timeoutMs: 1e10, signal: ac.signal, policy: new rp.Policy({ backoff: { kind: 'fixed', delay_ms: 3e9 } }),
  })
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(calls, 1) // a single 3e9 ms timer would have fired after 1 ms and retried
  ac.abort(new Error('done'))
  await assert.rejects(run, { message: 'done' })
  assert.equal(calls, 1)
})

// The native RunHandle takes the strategy on start and waitEnded (src/run.rs); lib/retrypolicy.js's Run
// (issue 25's facade) must pass it there as it does to attemptEnded: until then the native run waits.
const FACADE_TODO = which === 'native' && 'lib/retrypolicy.js Run.start/waitEnded do not pass the strategy yet (issue 25 facade)'
test('a host strategy declining CIRCUIT_BREAKER_OPEN gives the run up at the refusal, at the start or after a wait, instead of waiting (issue 24)', { todo: FACADE_TODO }, async () => {
  const KV_GET = { service: 'kv', operation: 'get' }
  const asked = []
  const declinesOpen = (request, reason) => (asked.push(reason), reason === 'CIRCUIT_BREAKER_OPEN' ? null : 10)
  const gaveUpAtRefusal = (e) => e instanceof rp.CircuitOpenError && e.retryStep.end === 'gave_up' && e.retryStep.rule === 'custom_strategy'
  // The breaker is open when the run starts: nothing is sent, nothing is waited for.
  let t = fakeTime()
  const open = () => rp.CircuitBreaker.restore(null, { state: 'open', since_ms: t.now, total: 20, failures: 20 })
  let calls = 0
  const base = { operation: KV_GET, timeoutMs: 60_000, classify: (e) => e.reason, clock: () => t.now, sleep: (ms) => t.sleep(ms) }
  await assert.rejects(rp.retry(async () => { calls++ }, { ...base, breaker: open(), strategy: declinesOpen }), gaveUpAtRefusal)
  assert.deepEqual([calls, t.sleeps, asked], [0, [], ['CIRCUIT_BREAKER_OPEN']])
  // A strategy that retries it: the run waits for the breaker's window (not the strategy's 10 ms), then sends.
  t = fakeTime()
  assert.equal(await rp.retry(async () => ++calls, { ...base, breaker: open(), strategy: () => 10 }), 1)
  assert.ok(t.sleeps.length > 0 && t.sleeps.every(([, ms]) => ms > 10), JSON.stringify(t.sleeps))
  // The breaker opens on the first failure: the failure is retried after the strategy's 10 ms, the
  // breaker refuses that retry, and the strategy's null for the refusal ends the run there.
  t = fakeTime()
  asked.length = 0
  calls = 0
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, error_threshold_percentage: 50, sleep_window_ms: 5000 })
  const failure = Object.assign(new Error('busy'), { reason: 'KV_TEMPORARY_FAILURE' })
  await assert.rejects(rp.retry(async () => { calls++; throw failure }, { ...base, breaker, strategy: declinesOpen }), gaveUpAtRefusal)
  assert.deepEqual([calls, t.sleeps.map(([, ms]) => ms), asked], [1, [10], ['KV_TEMPORARY_FAILURE', 'CIRCUIT_BREAKER_OPEN']])
})

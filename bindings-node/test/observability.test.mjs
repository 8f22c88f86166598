// OpenTelemetry (`otel`) held to the one table Python and Node share (spec-fixtures/observability.json),
// read back from the OpenTelemetry SDKs' own in-memory metric exporter and span exporter; a run
// with two retries, a budget refusal and a breaker that opens and closes, through `retry`; the
// HTTP resend count through `retryFetch`; and `import 'retrypolicy'` without `otel.instrument()`
// loads none of @opentelemetry. Binding-agnostic (./binding.mjs): the same over the wasm backend,
// to which the API module is handed as `instrument({api})` (its facade's `require` resolves from
// the wasm package's folder, where @opentelemetry/api is not installed).
import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import * as otelApi from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import rp, { which } from './binding.mjs'
import { camelInput } from './fixture-format.mjs'
import { runConfigIn } from './fixtures-grpc-aws.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TABLE = JSON.parse(fs.readFileSync(path.join(ROOT, 'spec-fixtures/observability.json'), 'utf8'))
const METRICS = new Map(TABLE.metrics.map((m) => [m.name, m]))
const EVENTS = new Map(TABLE.span_events.map((e) => [e.name, e]))
const KV_GET = { service: 'kv', operation: 'get' }

// ---- the SDKs: a meter provider exporting deltas to memory, a tracer provider exporting spans to memory ----

const metricExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA)
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: 60_000 })
const meterProvider = new MeterProvider({ readers: [reader] })
const spanExporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] }).getTracer('test')
const instruments = new Map() // metric name → [instrument kind, unit], as exported

before(() => {
  otelApi.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
})
beforeEach(async () => {
  rp.otel.instrument({ meterProvider, api: otelApi })
  await collect() // nothing left over from another test
  spanExporter.reset()
})
after(async () => {
  rp.otel.uninstrument()
  await meterProvider.shutdown()
})

/** The data points recorded since the last collection, on the scope `retrypolicy` (each instrument's kind and unit noted). */
async function collect() {
  await reader.forceFlush()
  const points = []
  for (const resource of metricExporter.getMetrics()) {
    for (const scope of resource.scopeMetrics) {
      assert.equal(scope.scope.name, TABLE.scope)
      for (const m of scope.metrics) {
        const kind = m.descriptor.type === 'COUNTER' ? 'counter' : m.descriptor.type === 'GAUGE' ? 'gauge' : m.descriptor.type
        instruments.set(m.descriptor.name, [kind, m.descriptor.unit, m.descriptor.valueType])
        for (const p of m.dataPoints) points.push({ metric: m.descriptor.name, value: p.value, attributes: { ...p.attributes } })
      }
    }
  }
  metricExporter.reset()
  return points
}

/** The span events of every finished span, in order. */
const spanEvents = () =>
  spanExporter.getFinishedSpans().flatMap((s) => s.events.map((e) => ({ event: e.name, attributes: { ...e.attributes } })))

/** `fn(span)` with a new span `name` active (ended after `fn` settles). */
async function inSpan(name, fn) {
  const span = tracer.startSpan(name)
  try {
    return await otelApi.context.with(otelApi.trace.setSpan(otelApi.context.active(), span), () => fn(span))
  } finally {
    span.end()
  }
}

// The table's "order" sentence, as its words stand for the signals.
const ORDER_WORDS = {
  state_changes: 'retrypolicy.breaker.state_changes',
  'state gauge': 'retrypolicy.breaker.state',
  'budget.refusals': 'retrypolicy.budget.refusals',
  'breaker.rejections': 'retrypolicy.breaker.rejections',
  attempts: 'retrypolicy.attempts',
  retries: 'retrypolicy.retries',
  'retry event': 'retrypolicy.retry',
  give_ups: 'retrypolicy.give_ups',
  'give-up event': 'retrypolicy.give_up',
}

/** Where the table's order puts `signal` within a step. */
const rank = (signal) => TABLE.order.indexOf(Object.entries(ORDER_WORDS).find(([, n]) => n === (signal.metric ?? signal.event))[0])

/** Every signal's name, unit, kind and attribute names are the table's. */
function heldToTheTable(signals) {
  for (const s of signals) {
    const names = Object.keys(s.attributes)
    if (s.metric !== undefined) {
      const row = METRICS.get(s.metric)
      // every value is a count or a state's number: integers, as Python's SDK records them
      assert.deepEqual(instruments.get(s.metric), [row.instrument, row.unit, otelApi.ValueType.INT], s.metric)
      assert.ok(names.every((a) => row.attributes.includes(a)), JSON.stringify(s))
    } else {
      assert.ok(names.every((a) => EVENTS.get(s.event).attributes.includes(a)), JSON.stringify(s))
    }
    assert.ok(names.every((a) => a in TABLE.attributes), JSON.stringify(s))
  }
}

/**
 * Instrument options over this file's SDKs and `otelApi` that also note in `log`, by name, each
 * metric record and span event in the order `otel` makes them (the SDKs still get every call; an
 * exporter hands metrics over in the instruments' order, not the records').
 */
function noting(log) {
  const noted = (instrument, name) => ({
    add: (v, a) => (log.push(name), instrument.add(v, a)),
    record: (v, a) => (log.push(name), instrument.record(v, a)),
  })
  const provider = {
    getMeter(name, version, options) {
      const meter = meterProvider.getMeter(name, version, options)
      return {
        createCounter: (n, o) => noted(meter.createCounter(n, o), n),
        createGauge: (n, o) => noted(meter.createGauge(n, o), n),
      }
    },
  }
  const span = (s) => s && { addEvent: (name, a) => (log.push(name), s.addEvent(name, a)) }
  return { meterProvider: provider, api: { ...otelApi, trace: { getActiveSpan: () => span(otelApi.trace.getActiveSpan()) } } }
}

/** The run fixture case `id` of spec-fixtures/cases. */
function fixtureCase(id) {
  const dir = path.join(ROOT, 'spec-fixtures/cases')
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const doc = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))
    const c = doc.function === 'run' ? doc.cases.find((x) => x.id === id) : undefined
    if (c !== undefined) return c
  }
  throw new Error(`no run fixture ${id}`)
}

test("the table's order sentence names every signal", () => {
  assert.deepEqual(new Set(Object.values(ORDER_WORDS)), new Set([...METRICS.keys(), ...EVENTS.keys()]))
  for (const word of Object.keys(ORDER_WORDS)) assert.ok(TABLE.order.includes(word), word)
})

for (const example of TABLE.examples) {
  test(`[${which}] the example ${example.run_fixture} records exactly its signals, in order`, async () => {
    // The run fixture replayed through the public Run (with this package's budget and breaker),
    // each step handed to otel.record as the runners do: the metrics read back after each step
    // and the span events of the span it ran in are the example's; the order otel made them in
    // (noted as it records, the table's order within a step) is the example's.
    const { input } = fixtureCase(example.run_fixture)
    const http = 'http' in input.run.rules
    const shared = (C, doc, state) => (doc === undefined ? undefined : state === undefined ? new C(doc) : C.restore(doc, state))
    const budget = shared(rp.RetryBudget, input.budget, input.budget_state)
    const breaker = shared(rp.CircuitBreaker, input.breaker, input.breaker_state)
    const made = []
    rp.otel.instrument(noting(made))
    const run = new rp.Run(runConfigIn(input.run), { budget, breaker })
    const signals = []
    await inSpan('run', async (span) => {
      for (const e of input.events) {
        const seen = span.events.length
        const o = e.outcome === undefined ? undefined : camelInput(e.outcome)
        const step = e.event === 'start' ? run.start(e.at_ms, e.random)
          : e.event === 'attempt_ended' ? run.attemptEnded(o, e.at_ms, e.random, e.now_unix_ms)
            : e.event === 'wait_ended' ? run.waitEnded(e.at_ms, e.random) : run.cancel(e.at_ms)
        rp.otel.record(step, { http, breaker }) // unnamed: a rejection carries the default name
        const events = span.events.slice(seen).map((x) => ({ event: x.name, attributes: { ...x.attributes } }))
        // the exporter's order is the instruments': put the metrics in the table's, as the example lists them
        signals.push(...[...(await collect()), ...events].sort((a, b) => rank(a) - rank(b)))
      }
    })
    assert.deepEqual(signals, example.signals)
    assert.deepEqual(made, example.signals.map((s) => s.metric ?? s.event))
    assert.deepEqual(signals.filter((s) => s.event !== undefined), spanEvents())
    heldToTheTable(signals)
  })
}

/** Each metric's total per attribute set (a gauge's last value), keyed `name attributes-as-JSON`. */
function totals(signals) {
  const out = {}
  for (const s of signals) {
    const key = `${s.metric} ${JSON.stringify(Object.fromEntries(Object.entries(s.attributes).sort()))}`
    out[key] = METRICS.get(s.metric).instrument === 'gauge' ? s.value : (out[key] ?? 0) + s.value
  }
  return out
}

/** `totals`' key for `metric` with attributes `retrypolicy.<name>` (`__` standing for `.`). */
const key = (metric, a = {}) =>
  `${metric} ${JSON.stringify(Object.fromEntries(Object.entries(a).map(([k, v]) => [`retrypolicy.${k.replace('__', '.')}`, v]).sort()))}`

test(`[${which}] retry: two retries, a budget refusal, a breaker that opens and closes, read back from the SDKs`, async () => {
  // Worked out by hand (the same run as bindings-python's test). Call 1 fails every attempt
  // (KV_TEMPORARY_FAILURE): attempt 1 at 0 trips the breaker (volume 1); the retry quota (10
  // tokens, 5 a retry) allows the retry, 1 ms; at 1 the breaker, open since 0, keeps attempt 2
  // back (a wait of 100 ms); at 101 attempt 2 is the canary (open -> half-open) and fails
  // (half-open -> open); the quota allows the second retry, 4 ms (1 ms x 2^2: the breaker's wait
  // counts as a retry in RFC 0049's request); at 105 the breaker keeps attempt 3 back until 202,
  // when it goes as the canary and fails; the quota (0 tokens) refuses the third retry: the run
  // gives up. Call 2 at 500 succeeds as the canary: the breaker closes.
  const t = { ms: 0 }
  const changes = []
  const events = []
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 100 }, { onStateChange: (c) => changes.push([c.from, c.to, c.rule]), name: 'kv' })
  breaker.on('stateChange', (c) => events.push(c))
  const budget = new rp.RetryBudget({ kind: 'retry_quota', capacity: 10, retry_cost: 5 })
  const options = {
    operation: KV_GET, timeoutMs: 10_000, clock: () => t.ms, sleep: async (ms) => { t.ms += ms }, classify: () => 'KV_TEMPORARY_FAILURE',
    budget, breaker,
  }
  const busy = new Error('busy')
  const stats = []
  const err = await inSpan('call 1', () => rp.retry(async () => { throw busy }, { ...options, onStats: (s) => stats.push(s) }).then(
    () => assert.fail('call 1 succeeded'), (e) => e))
  assert.equal(err, busy)
  assert.equal(t.ms, 202)
  t.ms = 500
  assert.equal(await inSpan('call 2', () => rp.retry(async () => 'ok', { ...options, onStats: (s) => stats.push(s) })), 'ok')

  const signals = await collect()
  const all = [...signals, ...spanEvents()]
  heldToTheTable(all)
  const [reason, backoff, refused] = ['KV_TEMPORARY_FAILURE', 'best_effort_backoff', 'retry_quota_exhausted']
  assert.deepEqual(totals(signals), {
    [key('retrypolicy.attempts')]: 4,
    [key('retrypolicy.retries', { reason, rule: backoff })]: 2,
    [key('retrypolicy.give_ups', { end: 'gave_up', reason, rule: refused })]: 1,
    [key('retrypolicy.budget.refusals', { budget__kind: 'retry_quota', rule: refused })]: 1,
    [key('retrypolicy.breaker.rejections', { breaker__name: 'kv', rule: 'breaker_open' })]: 2,
    [key('retrypolicy.breaker.state_changes', { breaker__name: 'kv', breaker__from: 'closed', breaker__to: 'open', rule: 'breaker_tripped' })]: 1,
    [key('retrypolicy.breaker.state_changes', { breaker__name: 'kv', breaker__from: 'open', breaker__to: 'half_open', rule: 'breaker_canary' })]: 3,
    [key('retrypolicy.breaker.state_changes', { breaker__name: 'kv', breaker__from: 'half_open', breaker__to: 'open', rule: 'canary_failed' })]: 2,
    [key('retrypolicy.breaker.state_changes', { breaker__name: 'kv', breaker__from: 'half_open', breaker__to: 'closed', rule: 'canary_succeeded' })]: 1,
    [key('retrypolicy.breaker.state', { breaker__name: 'kv' })]: 0,
  })
  const retried = { 'retrypolicy.reason': reason, 'retrypolicy.rule': backoff }
  assert.deepEqual(spanEvents(), [
    { event: 'retrypolicy.retry', attributes: { 'retrypolicy.attempt': 1, ...retried, 'retrypolicy.delay_ms': 1 } },
    { event: 'retrypolicy.retry', attributes: { 'retrypolicy.attempt': 2, ...retried, 'retrypolicy.delay_ms': 4 } },
    { event: 'retrypolicy.give_up', attributes: { 'retrypolicy.attempt': 3, 'retrypolicy.end': 'gave_up', 'retrypolicy.reason': reason, 'retrypolicy.rule': refused } },
  ])
  assert.deepEqual(spanExporter.getFinishedSpans().map((s) => [s.name, s.events.length]), [['call 1', 3], ['call 2', 0]])
  // The same run as its statistics (the give-up error's, and onStats') and the breaker's callback and event saw it.
  const s = err.retryStats
  assert.deepEqual([s.attempts, s.retries, s.waitedMs, s.budgetRefusals, s.breakerRejections], [3, 2, 202, 1, 2])
  assert.deepEqual([s.end, s.lastRule, s.elapsedMs, s.lastReason], ['gave_up', refused, 202, reason])
  assert.deepEqual([s.lastBudget.permitted, s.lastBudget.rule, s.lastBreaker.rule], [false, refused, 'breaker_canary'])
  assert.deepEqual(stats[0], s)
  assert.deepEqual([stats.length, stats[1].attempts, stats[1].end, stats[1].retries], [2, 1, 'succeeded', 0])
  assert.deepEqual(changes, [
    ['closed', 'open', 'breaker_tripped'],
    ['open', 'half_open', 'breaker_canary'],
    ['half_open', 'open', 'canary_failed'],
    ['open', 'half_open', 'breaker_canary'],
    ['half_open', 'open', 'canary_failed'],
    ['open', 'half_open', 'breaker_canary'],
    ['half_open', 'closed', 'canary_succeeded'],
  ])
  assert.deepEqual(events.map((c) => [c.from, c.to, c.rule]), changes)
})

test(`[${which}] retryFetch: each retry event carries http.request.resend_count`, async () => {
  // 503, 503, 200 (backoff 100 ms x 2^n, draws 0): two retry events with resend counts 1 and 2,
  // three attempts, no give-up.
  const answers = [503, 503, 200]
  const t = { ms: 0 }
  const fetch = async () => new Response('x', { status: answers.shift() })
  let stats
  const response = await inSpan('GET', () => rp.retryFetch('http://example.test/', undefined, {
    maxAttempts: 4, fetch, clock: () => t.ms, sleep: async (ms) => { t.ms += ms }, random: () => 0, onStats: (s) => { stats = s },
  }))
  assert.equal(response.status, 200)
  assert.deepEqual(spanEvents().map((e) => [e.event, e.attributes['http.request.resend_count'], e.attributes['retrypolicy.delay_ms']]), [
    ['retrypolicy.retry', 1, 100],
    ['retrypolicy.retry', 2, 200],
  ])
  const signals = await collect()
  assert.equal(totals(signals)[key('retrypolicy.attempts')], 3)
  assert.deepEqual(signals.filter((s) => s.metric === 'retrypolicy.give_ups'), [])
  assert.deepEqual([stats.attempts, stats.retries, stats.waitedMs, stats.end], [3, 2, 300, 'succeeded'])
})

test(`[${which}] a direct breaker call records its change; nothing is recorded once uninstrumented`, async () => {
  const breaker = new rp.CircuitBreaker({ volume_threshold: 1 })
  assert.equal(breaker.name, TABLE.breaker_name_default)
  assert.equal(breaker.name, 'default')
  breaker.record(0, 'failure')
  const name = { 'retrypolicy.breaker.name': 'default' }
  assert.deepEqual(await collect(), [
    { metric: 'retrypolicy.breaker.state_changes', value: 1, attributes: { ...name, 'retrypolicy.breaker.from': 'closed', 'retrypolicy.breaker.to': 'open', 'retrypolicy.rule': 'breaker_tripped' } },
    { metric: 'retrypolicy.breaker.state', value: 1, attributes: name },
  ])
  assert.equal(rp.otel.isInstrumented(), true)
  rp.otel.uninstrument()
  assert.equal(rp.otel.isInstrumented(), false)
  const t = { ms: 0 }
  const tripped = new rp.CircuitBreaker({ volume_threshold: 1 })
  await assert.rejects(inSpan('run', () => rp.retry(async () => { throw new Error('x') }, {
    operation: KV_GET, timeoutMs: 1000, clock: () => t.ms, sleep: async (ms) => { t.ms += ms }, classify: () => 'KV_TEMPORARY_FAILURE', breaker: tripped,
  })), rp.RetryTimeoutError) // the breaker opened (5 s) past the deadline (1 s)
  rp.otel.record({ action: 'send', attempt: 1, budget: null, breaker: null })
  assert.deepEqual([await collect(), spanEvents()], [[], []])
})

test(`[${which}] two named breakers keep their own gauge points, read back from the SDK`, async () => {
  // "kv" trips (open); "query" trips, then sends its canary past its 100 ms window (half-open).
  const kv = new rp.CircuitBreaker({ volume_threshold: 1 }, { name: 'kv' })
  const query = rp.CircuitBreaker.restore({ volume_threshold: 1, sleep_window_ms: 100 }, new rp.CircuitBreaker().snapshot(), { name: 'query' })
  assert.deepEqual([kv.name, query.name], ['kv', 'query'])
  kv.record(0, 'failure')
  query.record(0, 'failure')
  assert.ok(query.permit(101).canary)
  const points = await collect()
  const gauge = Object.fromEntries(points.filter((p) => p.metric === 'retrypolicy.breaker.state').map((p) => [p.attributes['retrypolicy.breaker.name'], p.value]))
  assert.deepEqual(gauge, { kv: 1, query: 2 })
  const changes = points.filter((p) => p.metric === 'retrypolicy.breaker.state_changes')
    .map((p) => [p.attributes['retrypolicy.breaker.name'], p.attributes['retrypolicy.rule'], p.value]).sort()
  assert.deepEqual(changes, [['kv', 'breaker_tripped', 1], ['query', 'breaker_canary', 1], ['query', 'breaker_tripped', 1]])
  assert.throws(() => new rp.CircuitBreaker(null, { name: 7 }), (e) => e.code === 'invalid_type' && e.field === 'name')
})

test(`[${which}] instrument() before the SDK registers the global meter provider records on it once it does`, async () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const globalReader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: 60_000 })
  rp.otel.instrument({ api: otelApi }) // the global provider: none registered yet (the API's no-op one)
  new rp.CircuitBreaker({ volume_threshold: 1 }).record(0, 'failure') // recorded on the no-op meter: lost
  const global = new MeterProvider({ readers: [globalReader] })
  assert.ok(otelApi.metrics.setGlobalMeterProvider(global)) // what NodeSDK.start() does
  try {
    new rp.CircuitBreaker({ volume_threshold: 1 }).record(0, 'failure')
    await globalReader.forceFlush()
    const recorded = exporter.getMetrics().flatMap((r) => r.scopeMetrics).flatMap((sm) => sm.metrics)
      .map((m) => [m.descriptor.name, m.dataPoints.map((p) => p.value)])
    assert.deepEqual(recorded, [['retrypolicy.breaker.state_changes', [1]], ['retrypolicy.breaker.state', [1]]])
  } finally {
    otelApi.metrics.disable()
    await global.shutdown()
  }
})

test(`[${which}] uninstrument() stops a run in flight: its later steps record nothing`, async () => {
  const t = { ms: 0 }
  let calls = 0
  const result = await rp.retry(async () => {
    if (++calls < 4) throw new Error('busy')
    return calls
  }, {
    operation: KV_GET, timeoutMs: 10_000, classify: () => 'KV_TEMPORARY_FAILURE', clock: () => t.ms,
    sleep: async (ms) => { t.ms += ms; rp.otel.uninstrument() }, // during the first wait
  })
  assert.equal(result, 4)
  // recorded before the first wait: attempt 1 and the retry after it; nothing of attempts 2-4
  assert.deepEqual((await collect()).map((p) => [p.metric, p.value]), [['retrypolicy.attempts', 1], ['retrypolicy.retries', 1]])
})

test('instrument refuses what is not the API or a meter provider, naming the option', () => {
  assert.throws(() => rp.otel.instrument({ api: {} }), (e) => e.code === 'invalid_type' && e.field === 'api')
  assert.throws(() => rp.otel.instrument({ api: otelApi, meterProvider: {} }), (e) => e.code === 'invalid_type' && e.field === 'meterProvider')
  assert.throws(() => rp.otel.instrument(5), (e) => e.code === 'invalid_type' && e.field === 'options')
  assert.throws(() => rp.otel.record(null), (e) => e.code === 'invalid_type' && e.field === 'step')
  // a breaker's name where the breaker goes: refused (before: recorded under the name "default")
  const step = new rp.Run({ rules: { decide: { operation: KV_GET } }, timeoutMs: 10_000 }).start(10)
  assert.throws(() => rp.otel.record(step, { breaker: 'kv' }), (e) => e.code === 'invalid_type' && e.field === 'breaker')
  assert.throws(() => rp.otel.record(step, { breaker: { name: 'kv' } }), (e) => e.code === 'invalid_type' && e.field === 'breaker')
  rp.otel.record(step, { breaker: new rp.CircuitBreaker() }) // a breaker is fine
})

/** The @opentelemetry modules loaded (require's cache) in a fresh process after `code` (CommonJS, awaited; `rp` the package). */
function loadedAfter(code) {
  const entry = which === 'native' ? "require('retrypolicy')" : `require(${JSON.stringify(path.join(ROOT, 'bindings-wasm/index.mjs'))})`
  const script = `const rp = ${entry}
    ;(async () => {
      ${code}
      console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'))))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const r = spawnSync(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

test(`[${which}] loading the package and a run that is not instrumented load nothing of @opentelemetry`, () => {
  assert.deepEqual(loadedAfter(''), [])
  assert.deepEqual(loadedAfter(`
    const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 0 })
    const seen = []
    breaker.on('stateChange', (c) => seen.push(c.rule))
    let calls = 0
    await rp.retry(async () => { if (++calls === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' }); return calls },
      { operation: { service: 'kv', operation: 'get' }, timeoutMs: 1000, sleep: async () => {}, breaker })
    if (seen.join() !== 'breaker_tripped,breaker_canary,canary_succeeded') throw new Error(seen.join())
  `), [])
  if (which === 'native') {
    // the check can see them: instrument() loads the optional peer dependency itself
    assert.ok(loadedAfter('rp.otel.instrument()').some((k) => k.includes(`${path.sep}@opentelemetry${path.sep}api${path.sep}`)))
  } else {
    // the wasm package's folder has no @opentelemetry/api: instrument() says how to get it
    assert.deepEqual(loadedAfter(`let refused = false
      try { rp.otel.instrument() } catch (e) { if (e.code !== 'ERR_RETRYPOLICY_NO_OPENTELEMETRY') throw e; refused = true }
      if (!refused) throw new Error('instrument() found @opentelemetry/api')`), [])
  }
})

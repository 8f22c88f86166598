// ns per decide call (make bench): the native decide vs a raw N-API no-op of the same signature,
// vs the same public-API wrapper around that no-op, vs a pure-JS implementation of the same rules
// written for this benchmark; then 1,000 decisions in one batch call vs pure JS. Ratios printed.
//
// Each variant runs in its own process (calling several different N-API functions from one
// process made all but the first ~12 ns slower here), the processes interleaved over REPS
// repetitions, each keeping its fastest round: on a shared 2-core machine that filters out the
// rounds another process disturbed.
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import rp from 'retrypolicy'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { noop, nativeDecide, pack, readDecision } = rp._bench

const N = Number(process.env.BENCH_N ?? 200_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25)
const REPS = Number(process.env.BENCH_REPS ?? 3)

// ---- the same rules in plain JavaScript, for this benchmark only (RFC 0049, default policy) ----
const IDEMPOTENT_KV = new Set(['get', 'get_replica', 'lookup_in', 'noop', 'observe_cas', 'observe_seqno',
  'get_collection_id', 'get_collection_manifest', 'carrier_config', 'global_config'])
const ALWAYS = new Set(['KV_NOT_MY_VBUCKET', 'KV_COLLECTION_OUTDATED', 'VIEWS_NO_ACTIVE_PARTITION'])
const NOT_NON_IDEMPOTENT = new Set(['UNKNOWN', 'SOCKET_CLOSED_WHILE_IN_FLIGHT'])
const KNOWN = new Set(Object.values(rp.RetryReason))
const CONTROLLED = [1, 10, 50, 100, 500, 1000]
const BEST_EFFORT = 'RFC 0049, Best Effort'
const ALWAYS_SECTION = 'RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry'
const DEADLINE_SECTION = 'RFC 0049, Capping the Retry Duration'
const UNKNOWN_SECTION = 'RFC 0049, RetryReason (UNKNOWN: must not be retried)'

function ms(v, field) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`${field}: invalid duration`)
  return v
}

function jsDecide(r, reason, freeze) {
  const timeout = ms(r.timeoutMs, 'timeoutMs')
  const elapsed = r.elapsedMs === undefined ? 0 : ms(r.elapsedMs, 'elapsedMs')
  const attempts = r.attempts === undefined ? 0 : r.attempts
  if (!Number.isInteger(attempts) || attempts < 0 || attempts > 4294967295) throw new Error('attempts')
  if (!KNOWN.has(reason)) throw new Error('reason')
  const idempotent = r.idempotent ?? (r.service === 'kv' ? IDEMPOTENT_KV.has(r.operation) : r.service === 'search' || r.service === 'views' || r.readonly === true)
  let o
  if (elapsed >= timeout) {
    o = { action: 'no_retry', cause: 'deadline_passed', reason, rule: 'deadline_passed', section: DEADLINE_SECTION, attempts, idempotent }
  } else if (reason === 'UNKNOWN') {
    o = { action: 'no_retry', cause: 'unknown_reason', reason, rule: 'unknown_never_retried', section: UNKNOWN_SECTION, attempts, idempotent }
  } else {
    let delay, rule, section
    if (ALWAYS.has(reason)) {
      delay = CONTROLLED[attempts < 5 ? attempts : 5]
      rule = 'always_retry_controlled_backoff'
      section = ALWAYS_SECTION
    } else if (idempotent || !NOT_NON_IDEMPOTENT.has(reason)) {
      delay = attempts >= 9 ? 500 : 1 << attempts
      rule = 'best_effort_backoff'
      section = BEST_EFFORT
    }
    if (rule === undefined) {
      o = { action: 'no_retry', cause: 'not_idempotent', reason, rule: 'best_effort_not_idempotent', section: BEST_EFFORT, attempts, idempotent }
    } else {
      const left = timeout - elapsed
      o = { action: 'retry', delayMs: delay < left ? delay : left, capped: delay > left, thenCancel: delay >= left, reason, rule, section, attempts, idempotent }
    }
  }
  return freeze ? Object.freeze(o) : o
}

// ---- inputs --------------------------------------------------------------------------------------
const request = { service: 'kv', operation: 'get', attempts: 3, elapsedMs: 100, timeoutMs: 2500 }
const reason = 'KV_TEMPORARY_FAILURE'

// Adversarial: 1,024 requests whose delays are capped differently, so equal decisions are rare.
const REASONS = ['KV_LOCKED', 'KV_TEMPORARY_FAILURE', 'KV_NOT_MY_VBUCKET', 'SOCKET_CLOSED_WHILE_IN_FLIGHT', 'UNKNOWN']
const OPS = ['get', 'upsert', 'lookup_in', 'insert']
const varied = Array.from({ length: 1024 }, (_, i) => ({
  service: 'kv', operation: OPS[i % 4], attempts: i % 12, elapsedMs: 1000 + i, timeoutMs: 1400 + (i % 300) * 3,
}))
const variedReasons = varied.map((_, i) => REASONS[i % 5])

// Realistic batch: a connection drops with 1,000 requests in flight on it (RFC 0049, Network Time).
const B = 1000
const inFlight = Array.from({ length: B }, (_, i) => ({
  service: 'kv', operation: OPS[(i * 7) % 4], attempts: (i * 13) % 4, elapsedMs: (i * 37) % 2000, timeoutMs: 2500,
}))
const dropped = 'SOCKET_CLOSED_WHILE_IN_FLIGHT'
const variedBatch = varied.slice(0, B)
const variedBatchReasons = variedReasons.slice(0, B)

function checkAgreement() {
  assert.deepEqual({ ...rp.decide(request, reason) }, jsDecide(request, reason, true))
  for (let i = 0; i < varied.length; i++) {
    assert.deepEqual({ ...rp.decide(varied[i], variedReasons[i]) }, jsDecide(varied[i], variedReasons[i], true))
  }
  const many = rp.decideMany(inFlight, dropped).map((d) => ({ ...d }))
  assert.deepEqual(many, inFlight.map((r) => jsDecide(r, dropped, true)))
}

// ---- variants (each run in its own process) ------------------------------------------------------
const SINGLE = {
  noop: ['raw N-API no-op, decide\'s native signature', () => noop() === undefined],
  napiNoop: ['#[napi] no-op, same signature (reference)', () => native.napiNoop() === undefined],
  native: ['native decide (raw N-API, request pre-packed)', () => nativeDecide() === undefined],
  wrappedNoop: ['public-API wrapper around the raw no-op', () => (pack(request, reason), noop(), readDecision()).action === 'retry'],
  decide: ['decide(request, reason), public API', () => rp.decide(request, reason).action === 'retry'],
  decideVaried: ['decide, 1,024 varied requests', (i) => rp.decide(varied[i & 1023], variedReasons[i & 1023]).attempts >= 0],
  js: ['pure JS, same rules, frozen result', () => jsDecide(request, reason, true).action === 'retry'],
  jsVaried: ['pure JS, 1,024 varied requests, frozen', (i) => jsDecide(varied[i & 1023], variedReasons[i & 1023], true).attempts >= 0],
  jsPlain: ['pure JS, same rules, unfrozen result', () => jsDecide(request, reason, false).action === 'retry'],
  classify: ['classifyKv(operation, status), public API', () => rp.classifyKv('upsert', 0x86).reason !== null],
}
const BATCH = {
  manyDrop: ['decideMany, connection drop', () => rp.decideMany(inFlight, dropped)],
  loopDrop: ['decide in a loop, connection drop', () => inFlight.map((r) => rp.decide(r, dropped))],
  jsDrop: ['pure JS, connection drop', () => inFlight.map((r) => jsDecide(r, dropped, true))],
  manyVaried: ['decideMany, varied (adversarial)', () => rp.decideMany(variedBatch, variedBatchReasons)],
  jsVariedBatch: ['pure JS, varied (adversarial)', () => variedBatch.map((r, i) => jsDecide(r, variedBatchReasons[i], true))],
}

function runSingle(fn) {
  if (fn === SINGLE.native[1] || fn === SINGLE.wrappedNoop[1]) pack(request, reason)
  let best = Infinity
  let sink = 0
  for (let round = 0; round < ROUNDS; round++) {
    if (fn === SINGLE.native[1]) pack(request, reason)
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < N; i += 10) {
      sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0
      sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0; sink ^= fn(i) ? 1 : 0
    }
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / N)
  }
  return sink === 42 ? -1 : best
}

function runBatch(fn) {
  let best = Infinity
  for (let round = 0; round < ROUNDS * 4; round++) {
    const t0 = process.hrtime.bigint()
    for (let k = 0; k < 20; k++) fn()
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 20 / 1000)
  }
  return best
}

const variant = process.env.BENCH_VARIANT
if (variant !== undefined) {
  const single = SINGLE[variant]
  const value = single ? runSingle(single[1]) : runBatch(BATCH[variant][1])
  process.stdout.write(JSON.stringify({ variant, value }))
} else {
  checkAgreement()
  const best = {}
  const self = fileURLToPath(import.meta.url)
  for (let rep = 0; rep < REPS; rep++) {
    for (const name of [...Object.keys(SINGLE), ...Object.keys(BATCH)]) {
      const r = spawnSync(process.execPath, [self], { env: { ...process.env, BENCH_VARIANT: name }, encoding: 'utf8' })
      assert.equal(r.status, 0, r.stderr)
      const { value } = JSON.parse(r.stdout)
      best[name] = Math.min(best[name] ?? Infinity, value)
    }
  }
  const f = (x) => x.toFixed(1).padStart(7)
  console.log('node decide: ns per call (each variant in its own process, fastest of %d×%d rounds of %d calls)', REPS, ROUNDS, N)
  for (const [name, [label]] of Object.entries(SINGLE)) console.log(`  ${label.padEnd(46)} ${f(best[name])}`)
  const ratio = (a, b) => (best[a] / best[b]).toFixed(2)
  console.log(`ratio native decide / raw no-op             = ${ratio('native', 'noop')} (goal <= 2)`)
  console.log(`ratio decide (public API) / raw no-op       = ${ratio('decide', 'noop')}`)
  console.log(`ratio decide / same wrapper around no-op    = ${ratio('decide', 'wrappedNoop')}`)
  console.log(`ratio #[napi] no-op / raw no-op             = ${ratio('napiNoop', 'noop')}`)
  console.log(`ratio decide / pure JS (frozen)             = ${ratio('decide', 'js')}; varied requests ${ratio('decideVaried', 'jsVaried')}`)
  console.log('1,000 decisions per call, µs:')
  for (const [name, [label]] of Object.entries(BATCH)) console.log(`  ${label.padEnd(46)} ${f(best[name])}`)
  console.log(`ratio pure JS / decideMany, connection drop = ${ratio('jsDrop', 'manyDrop')} (goal > 1: the batch is faster)`)
  console.log(`ratio pure JS / decideMany, adversarial     = ${ratio('jsVariedBatch', 'manyVaried')}`)
}

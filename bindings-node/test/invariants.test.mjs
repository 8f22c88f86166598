// Properties that hold for every input, checked over seeded random requests (RETRYPOLICY_SEED
// overrides the seed; a failure prints the seed and the input).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import rp from './binding.mjs'
import { rng, randomRequest, POLICY_DOCS, decidable } from './random.mjs'

const SEED = Number(process.env.RETRYPOLICY_SEED ?? 20240601)
const N = 4000
const REASONS = Object.values(rp.RetryReason)
const POLICIES = POLICY_DOCS.map((d) => [d, d === undefined ? undefined : new rp.Policy(d)])

function* cases(seed) {
  const r = rng(seed)
  for (let i = 0; i < N; i++) {
    const [doc, policy] = r.pick(POLICIES)
    const req = randomRequest(r, REASONS)
    if (!decidable(req, doc)) req.random = r.next()
    yield { i, req, reason: r.pick(REASONS), doc, policy }
  }
}

const where = (c) => `seed ${SEED} case ${c.i}: ${JSON.stringify({ req: c.req, reason: c.reason, policy: c.doc })}`

test('a retry never waits past the deadline, and nothing is retried at or past it', () => {
  for (const c of cases(SEED)) {
    const d = rp.decide(c.req, c.reason, c.policy)
    if (d.action === 'retry') {
      assert.ok(c.req.elapsedMs < c.req.timeoutMs, where(c))
      assert.ok(d.delayMs <= c.req.timeoutMs - c.req.elapsedMs, where(c))
      if (d.capped || d.thenCancel) assert.equal(d.delayMs, c.req.timeoutMs - c.req.elapsedMs, where(c))
      if (d.capped) assert.ok(d.thenCancel, where(c))
    } else if (c.req.elapsedMs >= c.req.timeoutMs) {
      assert.equal(d.cause, 'deadline_passed', where(c))
    }
  }
})

test('a non-idempotent request is retried only for reasons that allow it', () => {
  for (const c of cases(SEED + 1)) {
    const req = { ...c.req, idempotent: false }
    const d = rp.decide(req, c.reason, c.policy)
    if (d.action === 'retry') assert.ok(rp.allowsNonIdempotentRetry(c.reason), where(c))
    assert.equal(d.idempotent, false, where(c))
  }
})

test('UNKNOWN is never retried under the RFC default policy', () => {
  for (const c of cases(SEED + 2)) {
    const d = rp.decide(c.req, 'UNKNOWN')
    assert.equal(d.action, 'no_retry', where(c))
    assert.equal(d.reason, 'UNKNOWN', where(c))
  }
})

test('always-retry reasons retry before the deadline even under fail fast', () => {
  const failFast = new rp.Policy({ strategy: 'fail_fast' })
  for (const c of cases(SEED + 3)) {
    for (const reason of ['KV_NOT_MY_VBUCKET', 'VIEWS_NO_ACTIVE_PARTITION']) {
      const d = rp.decide({ ...c.req, strategy: 'fail_fast' }, reason, failFast)
      const open = c.req.elapsedMs < c.req.timeoutMs
      assert.equal(d.action, open ? 'retry' : 'no_retry', where(c))
      if (open) assert.equal(d.rule, 'always_retry_controlled_backoff', where(c))
    }
  }
})

test('every decision is frozen and echoes the request', () => {
  for (const c of cases(SEED + 4)) {
    const d = rp.decide(c.req, c.reason, c.policy)
    assert.ok(Object.isFrozen(d), where(c))
    assert.equal(d.attempts, c.req.attempts, where(c))
    assert.equal(d.reason, c.reason, where(c))
    assert.ok(rp.formatDecision(d).startsWith(d.action === 'retry' ? 'retry ' : 'no retry '), where(c))
  }
})

test('numbers and bigints, decideMany and the wire form all decide alike', () => {
  const all = [...cases(SEED + 5)]
  for (const c of all) {
    const plain = rp.decide(c.req, c.reason, c.policy)
    const big = { ...c.req, timeoutMs: BigInt(c.req.timeoutMs), elapsedMs: BigInt(c.req.elapsedMs) }
    assert.deepEqual(rp.decide(big, c.reason, c.policy), plain, where(c))
    const wire = rp.requestFromJson(rp.requestToJson(c.req))
    assert.deepEqual(rp.decide(wire, c.reason, c.policy), plain, where(c))
  }
  for (const [doc, policy] of POLICIES) {
    const group = all.filter((c) => c.doc === doc)
    const many = rp.decideMany(group.map((c) => c.req), group.map((c) => c.reason), policy)
    group.forEach((c, k) => assert.deepEqual(many[k], rp.decide(c.req, c.reason, c.policy), where(c)))
  }
})

test('a host strategy answering like best effort decides like best effort, and is never asked for always-retry reasons', () => {
  for (const c of cases(SEED + 6)) {
    if (c.req.strategy !== undefined || c.doc?.strategy === 'fail_fast') continue
    let asked = false
    const d = rp.decide(c.req, c.reason, c.policy, (req, reason) => {
      asked = true
      return rp.bestEffortDelay(req, reason, c.policy)
    })
    const builtin = rp.decide(c.req, c.reason, c.policy)
    assert.equal(d.action, builtin.action, where(c))
    if (d.action === 'retry') assert.equal(d.delayMs, builtin.delayMs, where(c))
    if (rp.alwaysRetry(c.reason) && c.doc?.compat === undefined) assert.equal(asked, false, where(c))
  }
})

test('classification never throws for in-range input and only names known reasons', () => {
  const r = rng(SEED + 7)
  const known = new Set([...REASONS, null])
  for (let i = 0; i < N; i++) {
    const status = r.int(0, 65535)
    const c = [
      rp.classifyKv(r.pick(['get', 'upsert', 'unlock', 'get_collection_id']), status),
      rp.classifyQuery(r.int(0, 6000), r.pick(['', 'queryport.indexNotFound', 'x'])),
      rp.classifyAnalytics(r.int(0, 30000)),
      rp.classifySearch(r.int(0, 999)),
      rp.classifyViews(r.int(0, 999), r.pick(['', 'not_found', '{"error":"x","reason":"y"}'])),
    ]
    for (const x of c) {
      assert.ok(known.has(x.reason), `status ${status}: ${JSON.stringify(x)}`)
      assert.ok(Object.isFrozen(x))
    }
  }
})

test('unknown reason names and arbitrary policy text raise only typed errors', () => {
  const r = rng(SEED + 8)
  const alphabet = 'AKV_LOCEDNUSTxyz{}":[],0123456789 '
  for (let i = 0; i < 2000; i++) {
    const text = Array.from({ length: r.int(0, 24) }, () => r.pick([...alphabet])).join('')
    if (!(text in rp.RetryReason) && text !== 'KV_SYNC_RE_COMMIT_IN_PROGRESS') {
      assert.throws(() => rp.parseReason(text), (e) => rp.isRetryPolicyError(e) && e.code === 'unknown_reason')
    }
    try {
      new rp.Policy(text)
    } catch (e) {
      assert.ok(rp.isRetryPolicyError(e), `${JSON.stringify(text)}: ${e}`)
    }
  }
})

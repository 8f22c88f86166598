// Four worker threads deciding at once (each loads its own addon instance) agree with the main
// thread, decision for decision.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import rp from './binding.mjs'
import { rng, randomRequest, POLICY_DOCS, decidable } from './random.mjs'

const N = 3000
const WORKERS = 4

/** The decisions (as JSON) for a seeded batch; also run inside each worker. */
function decisions(api, seed, n) {
  const r = rng(seed)
  const reasons = Object.values(api.RetryReason)
  const policies = POLICY_DOCS.map((d) => [d, d === undefined ? undefined : new api.Policy(d)])
  const out = []
  for (let i = 0; i < n; i++) {
    const [doc, policy] = r.pick(policies)
    const req = randomRequest(r, reasons)
    if (!decidable(req, doc)) req.random = r.next()
    const reason = r.pick(reasons)
    out.push(JSON.stringify(api.decide(req, reason, policy)))
    out.push(JSON.stringify(api.classifyKv('get', r.int(0, 255))))
  }
  return out
}

const workerSource = `
  const { parentPort, workerData } = require('node:worker_threads')
  import(workerData.binding).then(async ({ default: api }) => {
    const { rng, randomRequest, POLICY_DOCS, decidable } = await import(workerData.random)
    const decisions = ${decisions.toString()}
    parentPort.postMessage(decisions(api, workerData.seed, workerData.n))
  })
`

test('4 worker threads decide exactly as the main thread does', async () => {
  const seed = 777
  const expected = decisions(rp, seed, N)
  const runs = Array.from({ length: WORKERS }, () =>
    new Promise((resolve, reject) => {
      const w = new Worker(workerSource, {
        eval: true,
        workerData: {
          binding: new URL('./binding.mjs', import.meta.url).href,
          random: new URL('./random.mjs', import.meta.url).href,
          seed,
          n: N,
        },
      })
      w.once('message', resolve)
      w.once('error', reject)
      w.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
    }),
  )
  const results = await Promise.all(runs)
  assert.equal(results.length, WORKERS)
  for (const got of results) {
    assert.equal(got.length, expected.length)
    assert.deepEqual(got, expected)
  }
})

test('a budget crosses threads as its snapshot: a worker restores it, records, and hands the state back', async () => {
  const doc = { kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }
  const budget = new rp.RetryBudget(doc)
  for (let at = 0; at < 3; at++) budget.record(at, 'failure') // 7 tokens
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    import(workerData.binding).then(({ default: api }) => {
      const budget = api.RetryBudget.restore(workerData.doc, workerData.state)
      budget.record(3, 'failure')
      budget.record(4, 'failure')
      parentPort.postMessage(budget.snapshot())
    })
  `
  const state = await new Promise((resolve, reject) => {
    const binding = new URL('./binding.mjs', import.meta.url).href
    const w = new Worker(source, { eval: true, workerData: { binding, doc, state: budget.snapshot() } })
    w.once('message', resolve)
    w.once('error', reject)
  })
  assert.deepEqual(state, { version: 1, kind: 'token_bucket', balance: 5000 })
  assert.equal(budget.snapshot().balance, 7000) // the main thread's object is its own
  assert.equal(rp.RetryBudget.restore(doc, state).permit(5).rule, 'token_bucket_at_or_below_half')
})

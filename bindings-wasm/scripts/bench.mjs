// `make bench`: the cost of one decide from JavaScript, through the facade (index.mjs) and through
// the module's typed export, beside the no-op export of the module built with the `testing` feature
// (build/pkg-bench, built like the shipped module; the shipped module has none), in one run. The timed
// functions are interleaved over rounds and each keeps its best round, so a busy machine skews
// them alike. Budget: the facade's decide at most 5 µs per call.
import { createRequire } from 'node:module'
import rp from '../index.mjs'

const require = createRequire(import.meta.url)
const wasm = require('../pkg/nodejs/retrypolicy_wasm.js')
const testing = require('../build/pkg-bench/nodejs/retrypolicy_wasm.js')
const BUDGET_US = 5
const N = 20_000
const ROUNDS = 15

const request = { service: 'kv', operation: 'get', attempts: 3, elapsedMs: 120, timeoutMs: 2500 }
const policy = wasm.Policy.parse('{}')
let sink = 0
const cases = {
  'no-op export': () => testing.noop(),
  'module decide': () => { sink += wasm.decide(request, 'KV_LOCKED', policy).attempts },
  'facade decide': () => { sink += rp.decide(request, 'KV_LOCKED').attempts },
  'facade decide, host strategy': () => { sink += rp.decide(request, 'KV_LOCKED', undefined, () => 7).attempts },
  'facade classifyKv': () => { sink += rp.classifyKv('get', 0x86).rule.length },
}

const best = Object.fromEntries(Object.keys(cases).map((k) => [k, Infinity]))
for (let round = -2; round < ROUNDS; round++) { // two rounds of warm-up
  for (const [name, fn] of Object.entries(cases)) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < N; i++) fn()
    const us = Number(process.hrtime.bigint() - t0) / 1e3 / N
    if (round >= 0) best[name] = Math.min(best[name], us)
  }
}
for (const [name, us] of Object.entries(best)) console.log(`${name.padEnd(30)} ${us.toFixed(3)} µs per call`)
const decide = best['facade decide']
console.log(`decide budget (≤ ${BUDGET_US} µs through the facade): ${decide <= BUDGET_US ? 'met' : 'NOT met'} (${decide.toFixed(2)} µs)`)
if (sink === 0) throw new Error('the timed calls returned nothing')
if (decide > BUDGET_US) process.exitCode = 1

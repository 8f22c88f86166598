// retryFetch per run of two requests (a 503, then a 200) against a node:http server on 127.0.0.1 in
// a child process (make bench), against the budget of issue 24 as a ratio within one run: at most
// 1.2× a hand-written fetch loop. Both contenders do the same work: each attempt is bounded by the
// run's 10 s deadline (the loop with AbortSignal.timeout, as the README's "wrap a call" does; the
// runner with its attempt bound), a discarded 503 body is cancelled, the decision is the core's
// (the loop: classifyHttpStatus and decide), the wait goes to the same no-op sleep, and the 200's
// body is read. The variants are interleaved over ROUNDS rounds of BATCH concurrent runs, each
// keeping its fastest round (on a shared 2-core machine that filters out the disturbed rounds).
// Two figures per run: the wall time (the server's work and the loopback included, as a user sees
// it) and this process's CPU time (process.cpuUsage: the client's own work, where a runner's cost
// shows); the budget is checked on both.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import * as rp from 'retrypolicy'

const BATCH = 50
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40)
const TIMEOUT_MS = 10_000
const GET = { service: 'management', method: 'GET' }
const noSleep = async () => {}

// Each run asks its own path: the first request of a path gets 503, the second 200.
const SERVER = `
const seen = new Set()
const server = require('node:http').createServer((req, res) => {
  if (seen.delete(req.url)) return res.end('ok')
  seen.add(req.url)
  res.statusCode = 503
  res.end('busy')
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
`
const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
const [port] = await once(child.stdout, 'data')
const base = `http://127.0.0.1:${Number(port)}`
let next = 0

/** What an adopter writes: bound each attempt by the deadline, decide with the core, cancel, sleep. */
async function handWritten(url, bounded = true) {
  const start = performance.now()
  for (let attempts = 0; ; attempts++) {
    const signal = bounded ? AbortSignal.timeout(TIMEOUT_MS - Math.ceil(performance.now() - start)) : undefined
    const res = await fetch(url, { signal })
    const reason = res.ok ? null : rp.classifyHttpStatus(res)
    if (reason === null) return res
    const d = rp.decide({ ...GET, timeoutMs: TIMEOUT_MS, elapsedMs: Math.ceil(performance.now() - start), attempts }, reason)
    if (d.action !== 'retry' || d.thenCancel) return res
    await res.body?.cancel()
    await noSleep(d.delayMs)
  }
}

const VARIANTS = {
  retryFetch: ['retrypolicy retryFetch(url, init, options)', (url) => rp.retryFetch(url, undefined, { timeoutMs: TIMEOUT_MS, sleep: noSleep })],
  hand: ['hand-written fetch loop calling decide', handWritten],
  unbounded: ['the same loop, attempts unbounded (reference)', (url) => handWritten(url, false)],
}

/** `[wall, cpu]`: µs per run of BATCH concurrent runs, wall-clock and this process's CPU. */
async function round(run) {
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const bodies = await Promise.all(Array.from({ length: BATCH }, async () => (await run(`${base}/${next++}`)).text()))
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / BATCH
  const { user, system } = process.cpuUsage(cpu0)
  assert.ok(bodies.every((b) => b === 'ok'))
  return [wall, (user + system) / BATCH]
}

try {
  for (const [, run] of Object.values(VARIANTS)) for (let i = 0; i < 5; i++) await round(run) // warm up
  const wall = {}
  const cpu = {}
  const names = Object.keys(VARIANTS)
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length]
      const [w, c] = await round(VARIANTS[name][1])
      wall[name] = Math.min(wall[name] ?? Infinity, w)
      cpu[name] = Math.min(cpu[name] ?? Infinity, c)
    }
  }
  const f = (x) => x.toFixed(1).padStart(9)
  console.log(`node retryFetch: µs per run of 2 requests (503, then 200) to 127.0.0.1, fastest of ${ROUNDS} rounds of ${BATCH} concurrent runs`)
  console.log(`  ${'variant'.padEnd(44)} ${'wall'.padStart(9)} ${'× hand'.padStart(7)} ${'CPU'.padStart(9)} ${'× hand'.padStart(7)}`)
  for (const [name, [label]] of Object.entries(VARIANTS)) {
    console.log(`  ${label.padEnd(44)} ${f(wall[name])} ${(wall[name] / wall.hand).toFixed(2).padStart(7)} ${f(cpu[name])} ${(cpu[name] / cpu.hand).toFixed(2).padStart(7)}`)
  }
  console.log('budget (issue 24):')
  for (const [what, m] of [['wall', wall], ['client CPU', cpu]]) {
    const ratio = m.retryFetch / m.hand
    console.log(`  ${`retryFetch / hand-written fetch loop, ${what} = ${ratio.toFixed(2)}`.padEnd(56)} goal <= 1.2  ${ratio <= 1.2 ? 'met' : 'MISSED'}`)
  }
} finally {
  child.kill()
}

// µs per direct call of the objects a caller holds (make bench): a retry budget, a circuit breaker
// and a gRPC retry policy, each a JSON call into the wire crate's objects.rs (lib/json.js
// `objectsOf`). No budget is set for them: the figures are in BENCHMARKS.md ("Node objects through
// the wire crate"), beside what they cost as typed exports before. Each call keeps its fastest of 5
// rounds of 100,000 calls after two warm-up passes (on a shared machine that filters out the rounds
// another process disturbed).
import * as rp from 'retrypolicy'

const N = 100_000
const budget = new rp.RetryBudget({ kind: 'retry_quota', capacity: 1e9 })
const breaker = new rp.CircuitBreaker({ volume_threshold: 1e9 })
const policy = new rp.grpc.RetryPolicy({
  maxAttempts: 3, initialBackoff: '1s', maxBackoff: '2s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'],
})
const calls = {
  'budget.tryRetry(nowMs)': (i) => budget.tryRetry(i),
  "budget.record(nowMs, 'success')": (i) => budget.record(i, 'success'),
  'breaker.permit(nowMs)': (i) => breaker.permit(i),
  'grpc.retry(policy, state, attempt)': () => rp.grpc.retry(policy, { attempts: 1 }, { status: 'UNAVAILABLE' }, { random: 0.5 }),
}

/** The fastest of 5 rounds of N calls of `f`, in µs per call. */
function fastest(f) {
  let best = Infinity
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < N; i++) f(i)
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / N / 1000)
  }
  return best
}

for (let pass = 0; pass < 2; pass++) for (const f of Object.values(calls)) fastest(f)
console.log(`node objects: µs per direct call, fastest of 5 rounds of ${N}`)
for (const [name, f] of Object.entries(calls)) console.log(`  ${name.padEnd(40)} ${fastest(f).toFixed(2)}`)

// Compiled with `tsc --noEmit --strict` by the tests: budgets, breakers, decideWithBudget, storms and
// the runners' budget and breaker options, as an application would write them, and what must not compile.
import {
  CircuitBreaker,
  CircuitOpenError,
  RetryBudget,
  decideWithBudget,
  explainWithBudget,
  retry,
  retryFetch,
  simulateStorm,
  type BudgetSnapshot,
} from 'retrypolicy'

const budget = new RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 })
const breaker = new CircuitBreaker({ volume_threshold: 20, sleep_window_ms: 5000 })
budget.record(Date.now(), 'failure')
budget.record(Date.now(), { kind: 'success', afterRetry: 'timeout' })
const verdict = budget.tryRetry(Date.now(), 'error')
const balance: number = verdict.balance
const stored: string = JSON.stringify(budget.snapshot())
const again = RetryBudget.restore({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }, JSON.parse(stored) as BudgetSnapshot)
const gate = breaker.permit(Date.now())
if (!gate.permitted) console.log(gate.reason, breaker.state(Date.now()))
breaker.record(Date.now(), 'timeout')
CircuitBreaker.restore(undefined, breaker.snapshot())

const request = { service: 'kv', operation: 'get', timeoutMs: 2500, attempts: 1, elapsedMs: 10 } as const
const d = decideWithBudget(request, 'KV_LOCKED', null, again.permit(Date.now()))
if (d.action === 'no_retry' && d.cause === 'budget_exhausted') console.log(d.budget.rule, d.refusedDelayMs, balance)
console.log(explainWithBudget(request, 'KV_LOCKED').sentence)
const report = simulateStorm({ request, reason: 'KV_TEMPORARY_FAILURE', requestsPerSecond: 100, durationMs: 10_000, latencyMs: 10, budget })
console.log(report.amplification.toFixed(2), report.budgetKind)

void retry(async () => 'ok', { operation: { service: 'kv', operation: 'get' }, timeoutMs: 2500, budget, breaker, clock: Date.now })
  .catch((e: unknown) => console.log(e instanceof CircuitOpenError ? e.verdict.rule : e))
void retryFetch('http://127.0.0.1:1/', undefined, { maxAttempts: 3, budget, breaker })

// @ts-expect-error: a budget names its kind
new RetryBudget({ max_tokens: 10 })
// @ts-expect-error: documents are the shared JSON form (max_tokens), not camelCase
new RetryBudget({ kind: 'token_bucket', maxTokens: 10 })
// @ts-expect-error: a breaker records an outcome, not a request
breaker.record(0, 'request')
// @ts-expect-error: a retry's cause is error or timeout
budget.tryRetry(0, 'throttle')

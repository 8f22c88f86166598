// The browser entry's declarations (browser.d.ts, the `browser` condition's types): the whole facade,
// as in Node, with no init() to call (the entry instantiates its module before its exports are ready).
import rp, { Policy, decide, retry, retryFetch, Run, RetryBudget, RetryTimeoutError } from 'retrypolicy-wasm/browser'

const d = decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', new Policy({ jitter: 'none' }))
const n: number = await retry(async ({ attempt }) => attempt, { operation: { service: 'search' }, timeoutMs: 1000 })
const r: Response = await retryFetch('http://127.0.0.1:1/', undefined, { maxAttempts: 3 })
const budget = new RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 })
const run = new Run({ rules: { http: { method: 'GET' } }, maxAttempts: 3 }, { budget })
const step = run.start(performance.now(), Math.random())
if (step.action === 'send') console.log(step.attempt, step.timeoutMs, n, r.status, RetryTimeoutError.name, rp.version)
if (d.action === 'retry') console.log(d.delayMs)

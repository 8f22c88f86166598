// The browser entry's declarations (browser.d.ts, the `browser` condition's types): the module as wasm-bindgen types it, plus the
// Node package's runners and run machine.
import init, { Policy, decide, retry, retryFetch, Run, RetryBudget, RetryTimeoutError } from 'retrypolicy-wasm/browser'

await init()
const d: unknown = decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', Policy.parse('{}'))
const n: number = await retry(async ({ attempt }) => attempt, { operation: { service: 'search' }, timeoutMs: 1000 })
const r: Response = await retryFetch('http://127.0.0.1:1/', undefined, { maxAttempts: 3 })
const budget = new RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 })
const run = new Run({ rules: { http: { method: 'GET' } }, maxAttempts: 3 }, { budget })
const step = run.start(performance.now(), Math.random())
if (step.action === 'send') console.log(step.attempt, step.timeoutMs, d, n, r.status, RetryTimeoutError.name)

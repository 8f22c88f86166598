// Compiled with `tsc --noEmit --strict` by the tests: retry, retryFetch and mongodb.runTransaction in
// use as an application would write them, and what must not compile.
import diagnostics from 'node:diagnostics_channel'
import {
  DECISION_CHANNEL,
  DecisionMessage,
  Policy,
  RetryTimeoutError,
  BodyNotReplayableError,
  TransactionSession,
  classifyNetworkError,
  mongodb,
  retry,
  retryFetch,
  Run,
  RunOutcome,
  RunStep,
} from 'retrypolicy'

diagnostics.subscribe(DECISION_CHANNEL, (message) => {
  const m = message as DecisionMessage
  console.log(m.runner, m.attempt, m.step?.action, m.decision?.action)
})

/** Wrap a call: an idempotent GET, retried on network errors for at most 2 s. */
async function loadProfile(id: string, signal: AbortSignal): Promise<{ name: string }> {
  return retry(
    async ({ attempt, remainingMs, signal }) => {
      const res = await fetch(`https://example.invalid/users/${id}?try=${attempt}`, { signal: AbortSignal.timeout(remainingMs) })
      if (signal?.aborted) throw signal.reason
      return (await res.json()) as { name: string }
    },
    {
      operation: { service: 'management', method: 'GET' },
      timeoutMs: 2000,
      policy: new Policy({ jitter: 'full' }),
      classify: classifyNetworkError,
      signal,
      onRetry: (step, err) => console.log(`attempt ${step.attempt} after ${step.action === 'wait' ? step.delayMs : 0} ms`, err),
      onGiveUp: (d) => console.log(d.rule, d.section),
    },
  )
}

/** The fetch wrapper: Retry-After and backoff by the core's HTTP rules. */
async function postOrder(body: string): Promise<number> {
  try {
    const res = await retryFetch('https://example.invalid/orders', { method: 'POST', body }, {
      maxAttempts: 4,
      timeoutMs: 10_000,
      attemptTimeoutMs: 2_000,
      idempotent: true, // the server dedupes on an idempotency key
      onRetry: (step) => console.log(step.delayMs, step.retryAfterMs),
    })
    return res.status
  } catch (e) {
    if (e instanceof RetryTimeoutError) console.log(e.decision?.action, e.cause)
    throw e
  }
}

/** A session as the MongoDB driver has it (only what the runner uses). */
interface DriverSession extends TransactionSession {
  id: string
  insert(doc: { _id: number }): Promise<void>
}

async function transfer(session: DriverSession): Promise<string> {
  const id: string = await mongodb.runTransaction(session, async (s) => {
    await s.insert({ _id: 1 })
    return s.id
  }, { timeoutMs: 30_000, onRetry: (a) => console.log(a.action, a.action === 'retry_transaction' ? a.backoffMs : 0) })
  return id
}

// fetch's own Request object is an input too (not the package's retry `Request`).
void retryFetch(new Request('https://example.invalid/health'), undefined, { maxAttempts: 2 })

// What must not compile.
// @ts-expect-error: retry needs the operation it runs
void retry(async () => 1, { timeoutMs: 100 })
// @ts-expect-error: a classifier names a reason, not a delay
void retry(async () => 1, { operation: { service: 'search' }, timeoutMs: 100, classify: () => 5 })
// @ts-expect-error: the HTTP loop's decision is camelCase (delayMs), not the wire's delay_ms
void retryFetch('https://example.invalid/', undefined, { maxAttempts: 2, onRetry: (d) => d.delay_ms })
// @ts-expect-error: a session needs commitTransaction and abortTransaction
void mongodb.runTransaction({ startTransaction() {} }, async () => 1)

export { loadProfile, postOrder, transfer }

/** The run machine driven by hand: every step is typed by its action, every outcome by its kind. */
function driveByHand(): string {
  const run = new Run({ rules: { http: { method: 'GET' } }, maxAttempts: 3 }, { budget: null })
  let step: RunStep = run.start(0)
  let now = 0
  const outcomes: RunOutcome[] = [{ kind: 'http', status: 503, retryAfter: '1' }, { kind: 'network', sent: false }, { kind: 'success' }]
  for (const outcome of outcomes) {
    if (step.action === 'send') step = run.attemptEnded(outcome, (now += 5), Math.random())
    if (step.action === 'wait') step = run.waitEnded((now += step.delayMs))
    if (step.action === 'done') return step.end
  }
  // @ts-expect-error an outcome's kind is one of eight
  run.attemptEnded({ kind: 'teapot' }, now)
  return run.cancel(now).end
}
driveByHand()

/** A streamed upload: buffered up to maxBodyBytes and resent whole, or sent once and refused a retry. */
async function upload(body: ReadableStream<Uint8Array>): Promise<number> {
  try {
    const res = await retryFetch('https://example.invalid/blob', { method: 'PUT', body }, { maxAttempts: 3, maxBodyBytes: 4 << 20 })
    return res.status
  } catch (e) {
    if (e instanceof BodyNotReplayableError) return e.response?.status ?? 0
    throw e
  }
}
void upload

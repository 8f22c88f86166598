// Compiled with `tsc --noEmit --strict` by the tests: retry, retryFetch and mongodb.runTransaction in
// use as an application would write them, and what must not compile.
import diagnostics from 'node:diagnostics_channel'
import {
  DECISION_CHANNEL,
  DecisionMessage,
  Policy,
  RetryTimeoutError,
  RetryGaveUp,
  BodyNotReplayableError,
  TransactionSession,
  classifyNetworkError,
  mongodb,
  retry,
  retryFetch,
  Run,
  RunOutcome,
  RunStep,
  RunDoneStep,
  RunWaitStep,
  TransactionActionOf,
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
      // onRetry gets the wait step (its delay a number), onGiveUp the done step (its end).
      onRetry: (step, err) => console.log(`attempt ${step.attempt} after ${step.delayMs.toFixed()} ms`, err),
      onGiveUp: (d) => console.log(d.rule, d.section, d.end.toUpperCase()),
      // onBreakerWait gets the wait step and the breaker's refusal (its verdict typed).
      onBreakerWait: (step, err) => console.log(step.delayMs.toFixed(), err.verdict.rule),
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
    if (e instanceof RetryTimeoutError) console.log(e.retryStep.action, e.cause)
    throw e
  }
}

/** How a run ended, from the error it rejects with: the decision under one name, `retryStep`. */
function why(e: unknown): string {
  if (e instanceof RetryTimeoutError) {
    const step: RunDoneStep | TransactionActionOf<'raise_timeout'> = e.retryStep
    return step.action === 'done' ? `${step.end} by ${step.rule}` : `transaction: ${step.labels.join(',')}`
  }
  if (e instanceof BodyNotReplayableError) return `refused a wait of ${e.retryStep.delayMs} ms`
  const { retryStep } = e as RetryGaveUp
  const end: 'succeeded' | 'final' | 'gave_up' | 'timed_out' | 'cancelled' = retryStep.end
  // The deprecated names still type as they did.
  const old: RunDoneStep['decision'] = (e as RetryGaveUp).retryDecision
  const stepAlias = (t: RetryTimeoutError): RunDoneStep | TransactionActionOf<'raise_timeout'> => t.step
  void [old, stepAlias]
  return `${end}: ${retryStep.decision?.action ?? 'no decision'} (${retryStep.rule})`
}
void why

/** A session as the MongoDB driver has it (only what the runner uses). */
interface DriverSession extends TransactionSession {
  id: string
  insert(doc: { _id: number }): Promise<void>
}

async function transfer(session: DriverSession): Promise<string> {
  const id: string = await mongodb.runTransaction(session, async (s) => {
    await s.insert({ _id: 1 })
    return s.id
  }, {
    timeoutMs: 30_000,
    onRetry: (a) => console.log(a.action, a.action === 'retry_transaction' ? a.backoffMs : 0, a.rule),
    onGiveUp: (a) => console.log(a.labels, a.csot),
  }).catch((e: unknown) => {
    const raised = (e as RetryGaveUp<TransactionActionOf<'raise'>>).retryStep
    throw new Error(`${raised.rule}: ${raised.error.labels.join(',')}`)
  })
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
// @ts-expect-error: onRetry gets a wait step, which has no end
void retry(async () => 1, { operation: { service: 'search' }, timeoutMs: 100, onRetry: (step) => step.end.length })
// @ts-expect-error: onGiveUp gets a done step, which has no delay
void retryFetch('https://example.invalid/', undefined, { maxAttempts: 2, onGiveUp: (step) => step.delayMs.toFixed() })
// @ts-expect-error: a wait step is never done
void retry(async () => 1, { operation: { service: 'search' }, timeoutMs: 100, onRetry: (step) => step.action === 'done' })
const session: TransactionSession = { startTransaction() {}, async commitTransaction() {}, async abortTransaction() {} }
// @ts-expect-error: onBreakerWait's error is a CircuitOpenError, which has no status
void retry(async () => 1, { operation: { service: 'search' }, timeoutMs: 100, onBreakerWait: (_step, err) => err.status })
// @ts-expect-error: a transaction's onRetry never gets its raise action
void mongodb.runTransaction(session, async () => 1, { onRetry: (a) => a.action === 'raise' })
// @ts-expect-error: runTransaction makes no RunStats, so it takes no onStats
void mongodb.runTransaction(session, async () => 1, { onStats: () => {} })
// @ts-expect-error: a give-up's step is done, never a wait
void ((e: RetryGaveUp) => e.retryStep.action === 'wait')
// @ts-expect-error: a timeout's step has no delay
void ((e: RetryTimeoutError) => e.retryStep.delayMs.toFixed())
const waitStep = (s: RunWaitStep): number => s.delayMs
void waitStep

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

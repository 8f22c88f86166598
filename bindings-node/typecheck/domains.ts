// Compiled with `tsc --noEmit --strict` by the tests: the MongoDB and HTTP rules in use with their
// camelCase types, as an application would write them, and what must not compile.
import {
  HttpStepDecision,
  MongoDecision,
  MongoError,
  MongoRequest,
  TransactionAction,
  TransactionEvent,
  http,
  mongodb,
} from 'retrypolicy'

/** A write retried once after a retryable error, then surfaced: the decisions narrow by `action`. */
function writeDecisions(error: MongoError): number {
  let request: MongoRequest = { operation: { name: 'insertOne' }, retryWrites: true, timeoutMs: 30_000 }
  let waited = 0
  for (;;) {
    const d: MongoDecision = mongodb.decide(request, error)
    if (d.action === 'surface') return waited
    waited += d.delayMs // a number once narrowed to a retry
    console.log(d.retryableAs, d.labels.includes('RetryableWriteError'))
    request = { ...request, attempts: d.attempts, overloaded: d.overloaded }
  }
}
writeDecisions({ kind: 'server', code: 91, labels: ['RetryableWriteError'], writeConcernCode: 91 })

// An `$inc` is not idempotent: the two-step rewrite; the caller's documents keep their keys.
const filter = { _id: 'order-7', line_items: { $exists: true } }
const update = { $inc: { item_count: 1 } }
const report = mongodb.idempotency({ op: 'updateOne', filter, update, uniqueFields: ['_id'] })
if (!report.idempotent) {
  const { step1, step2, cleanupPipeline } = mongodb.pendingTokenRewrite(filter, update, 'token-1', false, 'pending')
  console.log(step1.filter, step2.update, step2.upsert, cleanupPipeline?.length ?? 0)
}
for (const h of report.hazards) console.log(`${h.path} → ${h.suggestedPath} (${h.section})`)
const dup = mongodb.duplicateKey('order-7', { code: 11000, keyPattern: { _id: 1 }, keyValue: { _id: 'order-7' } })
console.log(dup.firstAttemptSucceeded, mongodb.classifyError({ kind: 'network' }).class === 'network')

// withTransaction, step by step: the state goes back in as it came out.
const begin = mongodb.withTransaction([{ event: 'begin' }], 60_000)
const returned: TransactionEvent = { event: 'callback_returned', session: 'in_progress' }
const step = mongodb.transactionStep(begin.state, returned)
const action: TransactionAction = step.action
if (action.action === 'retry_transaction') console.log(action.backoffMs, action.abortFirst, action.rule)
if (action.action === 'raise_timeout') console.log(action.cause.labels, action.csot)
console.log(step.state.transactionAttempt, step.state.phase, mongodb.transactionBackoff(1, 0.5).backoffMs)

// HTTP: classify, Retry-After, and the bounded loop's decision narrowed by `action`.
const c = http.classify(503)
if (c.outcome === 'transient') console.log(c.class, c.retryReason, c.retryAfter)
const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT')
console.log(http.retryAfter('120').delayMs, http.parseDate('Sun, 06 Nov 1994 08:49:37 GMT').unixMs)
const next: HttpStepDecision = http.nextStep(
  { maxAttempts: 3, deadlineMs: 2_500, backoff: { kind: 'fixed', delay_ms: 100 }, method: 'POST', idempotent: true },
  { attempts: 1, elapsedMs: 0 },
  { kind: 'response', status: 429, retryAfter: '3' },
  now,
)
if (next.action === 'retry') console.log(`retry in ${next.delayMs / 1000} s`, next.fromRetryAfter)
else console.log(next.outcome, next.rule, next.retryAfterMs ?? 'no Retry-After')

// What must not compile.
// @ts-expect-error: keys are camelCase (retryWrites), not the wire's snake_case
mongodb.decide({ operation: { name: 'find' }, retry_writes: false }, { kind: 'network' })
// @ts-expect-error: an error's kind is a closed set
mongodb.classifyError({ kind: 'timeout' })
// @ts-expect-error: the transaction command is a closed set
mongodb.transactionLabels('commitTransaction', { kind: 'network' })
// @ts-expect-error: operation names are the driver's camelCase names
mongodb.eligibility({ name: 'insert_one' })
// @ts-expect-error: the loop state is camelCase (elapsedMs)
http.nextStep({ maxAttempts: 2 }, { attempts: 1, elapsed_ms: 0 }, { kind: 'network_error' })
// @ts-expect-error: an attempt is a response or a network error
http.nextStep({ maxAttempts: 2 }, { attempts: 1, elapsedMs: 0 }, { kind: 'timeout' })
// @ts-expect-error: a stop has no delay to wait
void ((d: HttpStepDecision) => d.action === 'stop' && d.delayMs / 1000)
// @ts-expect-error: the outputs are camelCase (delayMs)
void http.retryAfter('120').delay_ms
// @ts-expect-error: a surfaced error has no retryableAs
void ((d: MongoDecision) => d.action === 'surface' && d.retryableAs.length)

export { writeDecisions }

// Compiled with `tsc --noEmit --strict` by the tests: the public types in use, including what must not compile.
import {
  BestEffort,
  Decision,
  Orchestrator,
  Policy,
  Request,
  RetryReason,
  RetryReasonName,
  classifyKv,
  decide,
  decideAfterStrategy,
  decideBeforeStrategy,
  decideMany,
  isRetryPolicyError,
  simulate,
} from 'retrypolicy'

const request: Request = { service: 'kv', operation: 'upsert', attempts: 7, elapsedMs: 2000, timeoutMs: 2500 }
const reason: RetryReasonName | null = classifyKv('upsert', 0x07).reason
const hex = classifyKv('get', '0xa2')
const decision: Decision = decide(request, reason ?? RetryReason.UNKNOWN)

// The discriminated union: `delayMs` exists only once narrowed to a retry.
function wait(d: Decision): number {
  if (d.action === 'retry') {
    const ms: number = d.delayMs
    return d.thenCancel ? -1 : ms
  }
  const cause: 'not_idempotent' | 'strategy_declined' | 'deadline_passed' | 'unknown_reason' = d.cause
  void cause
  // @ts-expect-error no delay on a no_retry decision
  return d.delayMs
}
wait(decision)

// Strategies: a function or an object; defer to best effort for the rest.
class NoLockRetries extends BestEffort {
  override retryAfter(r: Request, why: RetryReasonName): number | null {
    return why === 'KV_LOCKED' ? null : super.retryAfter(r, why)
  }
}
decide(request, 'KV_LOCKED', undefined, new NoLockRetries())
decide(request, 'KV_LOCKED', new Policy({ jitter: 'none' }), (_r, why) => (why === 'KV_LOCKED' ? 25 : null))

// @ts-expect-error reasons are a closed set
decide(request, 'KV_WHATEVER')
// @ts-expect-error a KV request needs its operation
const bad: Request = { service: 'kv', timeoutMs: 1 }
void bad
// @ts-expect-error query operations take readonly, not a KV operation name
const bad2: Request = { service: 'query', operation: 'get', timeoutMs: 1 }
void bad2

// The two halves of decide with a host strategy, for hosts that ask their own strategy in between.
const before: Decision | null = decideBeforeStrategy(request, 'KV_LOCKED')
const after: Decision = decideAfterStrategy(request, 'KV_LOCKED', before === null ? 40 : null)
void after
// @ts-expect-error the answer is milliseconds or null
decideAfterStrategy(request, 'KV_LOCKED', '40')

const many: Decision[] = decideMany([request, { service: 'search', timeoutMs: 75_000 }], 'SEARCH_TOO_MANY_REQUESTS')
void many

const orchestrator = new Orchestrator({ onDecision: (rec) => console.log(rec.message, rec.delayMs ?? 'no retry') })
orchestrator.on('decision', (rec) => {
  const rule: string = rec.rule
  void rule
})
orchestrator.decide(request, 'KV_TEMPORARY_FAILURE')

const timeline = simulate({ request, outcomes: ['KV_LOCKED', null], latencyMs: 5 })
const ending: 'succeeded' | 'failed' | 'timed_out' | 'attempt_limit' = timeline.ending
void ending
void hex

try {
  new Policy({ backoff: { kind: 'exponential', factor: 0.5 } })
} catch (e) {
  if (isRetryPolicyError(e)) {
    const where: string = e.field
    console.log(e.code === 'out_of_range', where)
  }
}

// MongoDB and HTTP: see domains.ts.

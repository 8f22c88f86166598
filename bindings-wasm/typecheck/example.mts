// Compiled with `tsc --noEmit --strict` by `make test-node-api`: index.d.ts types the facade as the
// Node package is typed, including what must not compile.
import rp, { BestEffort, Policy, decide, simulate, type Decision, type Request, type RetryReasonName } from 'retrypolicy-wasm'

const request: Request = { service: 'kv', operation: 'upsert', attempts: 7, elapsedMs: 2000, timeoutMs: 2500n }
const reason: RetryReasonName | null = rp.classifyKv('upsert', 0x07).reason
const decision: Decision = decide(request, reason ?? rp.RetryReason.UNKNOWN, new Policy({ jitter: 'none' }), new BestEffort())
const line: string = rp.formatDecision(decision)
const total: number | bigint = simulate({ request, outcomes: ['KV_LOCKED', null], latencyMs: 5 }).totalMs
void [line, total, rp.mongodb.classifyError({ kind: 'network' }), rp.http.classify(503)]

// @ts-expect-error reasons are a closed set
decide(request, 'KV_WHATEVER')
// @ts-expect-error no delay on a decision before it is narrowed to a retry
void decision.delayMs

// Compiled with `tsc --noEmit --strict` by the tests: what runs and breakers report (issue 27) as an
// application would use it: breaker events, the channels' messages, statistics, the testing switch
// and OpenTelemetry, and what must not compile.
import diagnostics from 'node:diagnostics_channel'
import { EventEmitter, once as onceOf, on as onOf } from 'node:events'
import * as api from '@opentelemetry/api'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import {
  BREAKER_CHANNEL,
  CircuitBreaker,
  DECISION_CHANNEL,
  Run,
  isTesting,
  otel,
  retry,
  retryFetch,
  setTesting,
  type BreakerChange,
  type BreakerChangeMessage,
  type DecisionMessage,
  type RetryGaveUp,
  type RunStats,
} from 'retrypolicy'

const breaker = new CircuitBreaker({ volume_threshold: 20 }, {
  onStateChange(change) {
    const from: 'closed' | 'open' | 'half_open' = change.from
    console.log(from, change.to, change.rule, this === breaker)
  },
})
breaker.on('stateChange', (c: BreakerChange) => console.log(c.rule === 'canary_timed_out'))
const restored = CircuitBreaker.restore(null, breaker.snapshot(), { onStateChange: null })
const last: readonly BreakerChange[] = restored.lastChanges
if (last.length > 0 && last[0].rule === 'breaker_tripped') console.log(last[0].to)

diagnostics.subscribe(BREAKER_CHANNEL, (m) => {
  const { breaker: which, from, to } = m as BreakerChangeMessage
  console.log(which.state(0), from, to)
})
diagnostics.subscribe(DECISION_CHANNEL, (m) => console.log((m as DecisionMessage).runner))

const run = new Run({ rules: { decide: { operation: { service: 'kv', operation: 'get' } } }, timeoutMs: 2500 }, { breaker })
const step = run.start(0)
for (const c of step.breakerChanges) console.log(c.from)
const signal: 'retry' | 'breaker_wait' | 'give_up' | 'none' = step.signal
console.log(signal)
const stats: RunStats = run.stats
const waited: number = stats.waitedMs
console.log(waited, stats.end === 'gave_up', stats.lastBudget?.balance, stats.lastBreaker?.state)

void retry(async () => 1, { operation: { service: 'kv', operation: 'get' }, timeoutMs: 2500, onStats: (s) => console.log(s.attempts) })
  .catch((e: RetryGaveUp) => console.log(e.retryStats?.budgetRefusals, e.retryStep.end))
void retryFetch('http://127.0.0.1:1/', undefined, { maxAttempts: 3, onStats: (s) => console.log(s.retries) })

setTesting(true)
setTesting({ seed: 42 })
setTesting({ instant: false, seed: null })
const testing: boolean = isTesting()

otel.instrument()
otel.instrument({ meterProvider: new MeterProvider(), api })
otel.instrument({ meterProvider: api.metrics.getMeterProvider() })
otel.record(step, { http: false })
console.log(otel.isInstrumented(), otel.SCOPE, testing)
otel.uninstrument()

// @ts-expect-error: the event is 'stateChange'
breaker.on('change', () => {})
// @ts-expect-error: a change's states are the three names
const bad: BreakerChange = { from: 'closed', to: 'tripped', rule: 'breaker_tripped' }
// @ts-expect-error: statistics are read-only
stats.attempts = 3
// @ts-expect-error: the testing switch takes a boolean or {instant?, seed?}
setTesting('instant')
// @ts-expect-error: onStateChange is a function of the change
new CircuitBreaker({}, { onStateChange: 'log' })
// @ts-expect-error: record takes a step of a Run
otel.record({ action: 'send' })
void bad

// A breaker is an EventEmitter: node:events' helpers and the emitter's methods take it.
const emitting = new CircuitBreaker({ volume_threshold: 1 })
const asEmitter: EventEmitter = emitting
const heard = (c: BreakerChange) => console.log(c.to)
emitting.addListener('stateChange', heard).prependListener('stateChange', heard).prependOnceListener('stateChange', heard)
emitting.removeListener('stateChange', heard).removeAllListeners('stateChange').removeAllListeners().setMaxListeners(20)
const counts: [number, number, number, number] = [emitting.getMaxListeners(), emitting.listeners('stateChange').length,
  emitting.rawListeners('stateChange').length, emitting.eventNames().length]
async function nextChanges(): Promise<void> {
  const [first] = await onceOf(emitting, 'stateChange')
  for await (const [c] of onOf(emitting, 'stateChange')) console.log(first, c)
}
void [asEmitter, counts, nextChanges]
// @ts-expect-error: the event is 'stateChange'
emitting.removeAllListeners('decision')

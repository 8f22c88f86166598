// Seed 000's counter increment against a simulated flaky store: naive, then with retrypolicy.
//
// The store drops replies after applying a write, has a short outage, and answers with command
// errors now and then. The naive client "retries network errors once" with a plain $inc and
// over-counts whenever a reply was lost after the write applied. The policy client asks
// retrypolicy whether each operation is idempotent, rewrites the non-idempotent $inc into the
// seed's two idempotent steps (pending token), and lets `mongodb.decide` rule on every failure:
// the count comes out exact. Mirrors examples/python/flaky_counter.py.
// Run: node examples/node/flaky-counter.mjs   (after `make -C bindings-node build`)
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { mongodb } = require(process.env.RETRYPOLICY_PACKAGE ?? '../../bindings-node')

class NetworkError extends Error {
  constructor (applied) { super('network error'); this.applied = applied }
}
class CommandError extends Error {
  constructor (code, labels) { super(`command error ${code}`); this.code = code; this.labels = labels }
}

// What happens to the n-th call the store receives, whoever sends it (the same plan as Python's).
const PLAN = { 2: 'reply_lost', 5: 'reply_lost', 8: 'down', 9: 'down', 10: 'down', 13: 'shutdown', 17: 'bad_value', 21: 'reply_lost' }

/** A one-document store that speaks just enough of updateOne: $inc, $addToSet, $pull, equality filters. */
class FlakyStore {
  constructor () { this.doc = { _id: 'counter', count: 0, pending: [] }; this.calls = 0; this.clockMs = 0 }

  matches (filter) {
    return Object.entries(filter).every(([k, want]) => {
      const have = this.doc[k]
      return Array.isArray(have) && !Array.isArray(want) ? have.includes(want) : have === want
    })
  }

  apply (update) {
    for (const [op, fields] of Object.entries(update)) {
      for (const [key, value] of Object.entries(fields)) {
        if (op === '$inc') this.doc[key] = (this.doc[key] ?? 0) + value
        else if (op === '$addToSet') { this.doc[key] ??= []; if (!this.doc[key].includes(value)) this.doc[key].push(value) }
        else if (op === '$pull') this.doc[key] = (this.doc[key] ?? []).filter((v) => v !== value)
        else throw new Error(`unsupported operator ${op}`)
      }
    }
  }

  updateOne (filter, update) {
    this.calls += 1
    this.clockMs += 5
    const fate = PLAN[this.calls] ?? 'ok'
    if (fate === 'down') throw new NetworkError(false)
    if (fate === 'shutdown') throw new CommandError(91, ['RetryableWriteError'])
    if (fate === 'bad_value') throw new CommandError(2, [])
    const matched = this.matches(filter) ? 1 : 0
    if (matched) this.apply(update)
    if (fate === 'reply_lost') throw new NetworkError(true)
    return matched
  }
}

const asMongoError = (e) => (e instanceof NetworkError ? { kind: 'network' } : { kind: 'server', code: e.code, labels: e.labels })
const log = (store, text) => console.log(`  t=${String(store.clockMs).padStart(4)} ms  call ${String(store.calls).padStart(2)}  ${text}`)

function naive (store, increments) {
  let done = 0
  for (let i = 0; i < increments; i++) {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        store.updateOne({ _id: 'counter' }, { $inc: { count: 1 } })
        log(store, `inc #${i}: ok`)
        done++
        break
      } catch (e) {
        if (e instanceof CommandError) { log(store, `inc #${i}: command error ${e.code} -> give up`); break }
        log(store, `inc #${i}: network error -> ${attempt === 0 ? 'retry once' : 'give up'}`)
      }
    }
  }
  return done
}

/** Sends one idempotent step; retrypolicy decides each retry; later rounds resend it (safe: idempotent). */
function runStep (store, name, filter, update, rounds = 4) {
  const verdict = mongodb.idempotency({ op: 'updateOne', filter, update })
  if (!verdict.idempotent) throw new Error(`${name} is not idempotent: ${JSON.stringify(verdict)}`)
  for (let round = 0; round < rounds; round++) {
    let request = { operation: { name: 'updateOne' }, attempts: 0 }
    let last = null
    for (;;) {
      try {
        store.updateOne(filter, update)
        log(store, `${name}: ok`)
        return true
      } catch (e) {
        last = e
        const d = mongodb.decide(request, asMongoError(e))
        log(store, `${name}: ${e.message} -> ${d.action} (${d.rule})`)
        if (d.action !== 'retry') break
        request = { ...request, attempts: d.attempts, overloaded: d.overloaded }
      }
    }
    if (last instanceof CommandError && !last.labels.includes('RetryableWriteError')) {
      log(store, `${name}: not a transient error: the increment fails`)
      return false
    }
    store.clockMs += 100 * (round + 1) // the application's own pause before the next round
  }
  return false
}

function withPolicy (store, increments) {
  const update = { $inc: { count: 1 } }
  const report = mongodb.idempotency({ op: 'updateOne', filter: { _id: 'counter' }, update })
  console.log(`  retrypolicy: $inc is idempotent? ${report.idempotent ? 'True' : 'False'} -> rewrite into two steps`)
  let done = 0
  for (let i = 0; i < increments; i++) {
    const { step1, step2 } = mongodb.pendingTokenRewrite({ _id: 'counter' }, update, `inc-${i}`)
    if (!runStep(store, `inc #${i} step 1`, step1.filter, step1.update)) continue
    if (runStep(store, `inc #${i} step 2`, step2.filter, step2.update)) done++
  }
  return done
}

let ok = true
for (const [title, client] of [['naive: $inc, retry network errors once', naive], ['retrypolicy: two-step rewrite + mongodb.decide', withPolicy]]) {
  const store = new FlakyStore()
  console.log(`\n== ${title}`)
  const done = client(store, 8)
  const { count, pending } = store.doc
  const exact = count === done && pending.length === 0
  const verdict = exact ? 'exact' : count > done ? 'over-counted' : 'under-counted'
  console.log(`  => ${done} increments reported done, counter = ${count}, pending = ${JSON.stringify(pending)}: ${verdict}`)
  ok = ok && (client === withPolicy ? exact : !exact)
}
process.exitCode = ok ? 0 : 1

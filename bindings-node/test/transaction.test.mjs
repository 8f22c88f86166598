// mongodb.runTransaction against a scripted session that replays MongoDB's convenient-API tests
// (../shared/peer-specs/mongodb/transactions-convenient-api/tests/unified): the session plays the
// server's failpoints and records the commands it sends; each case's expected commands, error and
// collection contents are checked. Plus the spec's prose tests (timeout, callback value and error).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import rp from './binding.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const UNIFIED = path.join(here, '../../../shared/peer-specs/mongodb/transactions-convenient-api/tests/unified')
const noSleep = async () => {}

// What the server attaches on its own to these failpoint codes inside a transaction (its
// TransientTransactionError list): LockTimeout, WriteConflict, SnapshotUnavailable,
// NoSuchTransaction, PreparedTransactionInProgress. The failpoint's errorLabels replace them.
const SERVER_TRANSIENT = new Set([24, 112, 246, 251, 267])
// The codeName the server replies with, for the codes these tests check by name.
const CODE_NAMES = { 50: 'MaxTimeMSExpired' }

/** The error a failpoint makes a command fail with, shaped as the Node driver's. */
function failpointError(data) {
  if (data.closeConnection) return Object.assign(new Error('connection closed'), { name: 'MongoNetworkError', errorLabels: [] })
  if (data.writeConcernError) {
    const wc = data.writeConcernError
    return Object.assign(new Error(wc.errmsg), { name: 'MongoWriteConcernError', code: wc.code, codeName: wc.codeName, errorLabels: wc.errorLabels ?? [] })
  }
  const labels = data.errorLabels ?? (SERVER_TRANSIENT.has(data.errorCode) ? ['TransientTransactionError'] : [])
  const codeName = CODE_NAMES[data.errorCode]
  return Object.assign(new Error(`failpoint ${data.errorCode}`), { name: 'MongoServerError', code: data.errorCode, codeName, errorLabels: labels })
}

/** A client: the commands sent, a failCommand failpoint, the collection's committed documents. */
function scriptedClient() {
  return { commands: [], calls: [], failPoint: null, committed: [] }
}

/** A driver-shaped session over `client`: transaction state, startTransaction/commit/abort, insertOne. */
function scriptedSession(client) {
  let buffered = []
  const s = {
    transaction: { state: 'NO_TRANSACTION' },
    inTransaction: () => ['STARTING_TRANSACTION', 'TRANSACTION_IN_PROGRESS'].includes(s.transaction.state),
    /** Sends a command: a failpoint fails it before it runs, or after for a writeConcernError. */
    async send(name, run = () => {}) {
      client.commands.push(name)
      const fp = client.failPoint
      const fail = fp && fp.times > 0 && fp.data.failCommands.includes(name)
      if (fail) fp.times -= 1
      if (fail && !fp.data.writeConcernError) throw failpointError(fp.data)
      run()
      if (fail) throw failpointError(fp.data)
    },
    startTransaction() {
      client.calls.push('startTransaction')
      if (s.inTransaction()) throw Object.assign(new Error('Transaction already in progress'), { name: 'MongoTransactionError' })
      s.transaction.state = 'STARTING_TRANSACTION'
      buffered = []
    },
    async insertOne(doc) {
      const inTransaction = s.inTransaction()
      if (inTransaction) s.transaction.state = 'TRANSACTION_IN_PROGRESS' // once its first command is sent
      await s.send('insert')
      if ([...client.committed, ...buffered].some((d) => d._id === doc._id)) {
        throw Object.assign(new Error(`E11000 duplicate key error, _id: ${doc._id}`), { name: 'MongoServerError', code: 11000, errorLabels: [] })
      }
      ;(inTransaction ? buffered : client.committed).push(doc)
      return { insertedId: doc._id }
    },
    async commitTransaction() {
      client.calls.push('commitTransaction')
      const empty = s.transaction.state === 'STARTING_TRANSACTION'
      s.transaction.state = 'TRANSACTION_COMMITTED'
      if (empty) return
      await s.send('commitTransaction', () => {
        client.committed.push(...buffered)
        buffered = []
      })
    },
    async abortTransaction() {
      client.calls.push('abortTransaction')
      const sent = s.transaction.state === 'TRANSACTION_IN_PROGRESS'
      s.transaction.state = 'TRANSACTION_ABORTED'
      buffered = []
      if (sent) await s.send('abortTransaction').catch(() => {})
    },
  }
  return s
}

/** The callback of a withTransaction operation: its operations in turn (an error propagates). */
const callbackOf = (ops) => async (session) => {
  for (const op of ops) {
    if (op.name === 'insertOne') await session.insertOne(op.arguments.document)
    else await session[op.name]()
  }
}

/** Whether the raised error matches the case's expectError (labels: the core's, on the decision). */
function checkError(e, expect, where) {
  const decided = e.retryStep // a raise's action, or the timeout's
  assert.ok(decided === undefined || ['raise', 'raise_timeout'].includes(decided.action), where)
  assert.equal(e.retryDecision ?? e.decision, decided, `${where}: the deprecated names`)
  const labels = decided?.error?.labels ?? decided?.labels ?? []
  if (expect.errorContains) assert.match(e.message, new RegExp(expect.errorContains), where)
  if (expect.errorCodeName) assert.equal(e.codeName, expect.errorCodeName, where)
  for (const l of expect.errorLabelsContain ?? []) assert.ok(labels.includes(l), `${where}: labels ${labels}`)
  for (const l of expect.errorLabelsOmit ?? []) assert.ok(!labels.includes(l), `${where}: labels ${labels}`)
}

const files = fs.readdirSync(UNIFIED).filter((f) => f.endsWith('.json')).sort()

for (const file of files) {
  const spec = JSON.parse(fs.readFileSync(path.join(UNIFIED, file), 'utf8'))
  for (const t of spec.tests) {
    test(`${file}: ${t.description}`, async () => {
      const client = scriptedClient()
      const sessions = {}
      for (const op of t.operations) {
        if (op.name === 'failPoint') {
          const { mode, data } = op.arguments.failPoint
          client.failPoint = { times: mode.times, data }
        } else if (op.name === 'withTransaction') {
          const session = (sessions[op.object] ??= scriptedSession(client))
          const run = rp.mongodb.runTransaction(session, callbackOf(op.arguments.callback), { sleep: noSleep })
          if (op.expectError) await assert.rejects(run, (e) => (checkError(e, op.expectError, t.description), true))
          else await run
        }
      }
      const expected = t.expectEvents?.[0]?.events.map((e) => e.commandStartedEvent.commandName) ?? []
      assert.deepEqual(client.commands, expected)
      const outcome = t.outcome?.[0]?.documents
      if (outcome) assert.deepEqual(client.committed, outcome)
    })
  }
}

test('the session calls of a commit retried after network errors, and of a transaction retried after a transient commit error', async () => {
  const client = scriptedClient()
  client.failPoint = { times: 2, data: { failCommands: ['commitTransaction'], closeConnection: true } }
  const retried = []
  await rp.mongodb.runTransaction(scriptedSession(client), (s) => s.insertOne({ _id: 1 }), { sleep: noSleep, onRetry: (a) => retried.push(a.action) })
  assert.deepEqual(client.calls, ['startTransaction', 'commitTransaction', 'commitTransaction', 'commitTransaction'])
  assert.deepEqual(retried, ['retry_commit', 'retry_commit'])
  const again = scriptedClient()
  again.failPoint = { times: 1, data: { failCommands: ['commitTransaction'], errorCode: 251 } }
  const slept = []
  await rp.mongodb.runTransaction(scriptedSession(again), (s) => s.insertOne({ _id: 1 }), { sleep: async (ms) => slept.push(ms), random: () => 0.5 })
  assert.deepEqual(again.calls, ['startTransaction', 'commitTransaction', 'startTransaction', 'commitTransaction'])
  assert.deepEqual(slept, [3]) // floor(0.5 × min(5 × 1.5^1, 500)) = floor(3.75): the spec's backoff after attempt 1
})

test('prose: the callback value is returned; a custom error propagates untouched by retries', async () => {
  const client = scriptedClient()
  assert.equal(await rp.mongodb.runTransaction(scriptedSession(client), async () => 'value'), 'value')
  const custom = new Error('custom')
  let calls = 0
  await assert.rejects(rp.mongodb.runTransaction(scriptedSession(client), async () => { calls++; throw custom }), (e) => e === custom)
  assert.equal(calls, 1)
})

test('prose: the retry timeout ends with a timeout error carrying the last error and its labels', async () => {
  let now = 0
  const clock = () => now
  const transient = Object.assign(new Error('write conflict'), { name: 'MongoServerError', code: 112, errorLabels: ['TransientTransactionError'] })
  const client = scriptedClient()
  const run = rp.mongodb.runTransaction(scriptedSession(client), async (s) => { await s.insertOne({ _id: 1 }); now += 70_000; throw transient }, { clock, sleep: noSleep })
  await assert.rejects(run, (e) => e instanceof rp.RetryTimeoutError && e.cause === transient && e.errorLabels.includes('TransientTransactionError') &&
    e.retryStep.action === 'raise_timeout' && e.step === e.retryStep && e.decision === e.retryStep)
  assert.deepEqual(client.calls, ['startTransaction', 'abortTransaction', 'startTransaction', 'abortTransaction'])
  const commitClient = scriptedClient()
  commitClient.failPoint = { times: 99, data: { failCommands: ['commitTransaction'], closeConnection: true } }
  let ticks = 0 // each reading of this clock is 20 s later: failed commits at 20, 40, 60, 80 and 100 s
  const ticking = () => (ticks += 20_000)
  const commitRun = rp.mongodb.runTransaction(scriptedSession(commitClient), (s) => s.insertOne({ _id: 1 }), { clock: ticking, sleep: noSleep, timeoutMs: 100_000 })
  await assert.rejects(commitRun, (e) => e instanceof rp.RetryTimeoutError && e.errorLabels.includes('UnknownTransactionCommitResult') && e.retryStep.csot === true)
  assert.deepEqual(commitClient.calls, ['startTransaction', ...Array(5).fill('commitTransaction')])
})

'use strict'
// `mongodb.runTransaction(session, callback, options)`: the driver's `withTransaction` over a
// driver-shaped session (`startTransaction`, `commitTransaction`, `abortTransaction`), driven by the
// core's state machine (`mongodb.transactionStep`): the runner reports each event and does each
// action; every retry, backoff and timeout is the core's.

const { invalidType, RetryTimeoutError, withDecision } = require('./errors.js')
const { publishMessage, runnerOptions } = require('./drive.js')
const { pause } = require('./timers.js')

// The Node driver's `session.transaction.state` names → the core's session states.
const SESSION_STATES = {
  NO_TRANSACTION: 'no_transaction',
  STARTING_TRANSACTION: 'starting',
  TRANSACTION_IN_PROGRESS: 'in_progress',
  TRANSACTION_COMMITTED: 'committed',
  TRANSACTION_COMMITTED_EMPTY: 'committed',
  TRANSACTION_ABORTED: 'aborted',
}
// The Node driver's error class names → the core's failure kinds (any other error: a server reply).
const KINDS = {
  MongoNetworkError: 'network',
  MongoNetworkTimeoutError: 'network',
  MongoServerSelectionError: 'server_selection',
  MongoPoolClearedError: 'pool_cleared',
}

/** The session's transaction state: `transaction.state` when the session has it, else `inTransaction()`. */
function sessionState(session) {
  const known = SESSION_STATES[session.transaction?.state]
  if (known !== undefined) return known
  return session.inTransaction?.() ? 'in_progress' : 'no_transaction'
}

/** A driver error in the core's form: kind, code, labels, writeConcernError code. */
function mongoError(err) {
  const e = err !== null && typeof err === 'object' ? err : {}
  const wc = e.name === 'MongoWriteConcernError' ? e.code : e.writeConcernError?.code
  return {
    kind: KINDS[e.name] ?? 'server',
    code: e.name !== 'MongoWriteConcernError' && Number.isInteger(e.code) ? e.code : undefined,
    labels: Array.isArray(e.errorLabels) ? e.errorLabels : [],
    writeConcernCode: Number.isInteger(wc) ? wc : undefined,
  }
}

/** `runTransaction` over the core's `mongodb` namespace. */
function makeRunTransaction(mongodb) {
  /** Runs `callback(session)` in a transaction and commits, retrying as `withTransaction` does; resolves with its result. */
  async function runTransaction(session, callback, options) {
    if (session === null || typeof session !== 'object') throw invalidType('session', 'a driver session', session)
    if (typeof callback !== 'function') throw invalidType('callback', 'a function', callback)
    const o = runnerOptions(options ?? {})
    const start = o.clock()
    let { state } = mongodb.withTransaction([], options?.timeoutMs)
    let event = { event: 'begin' }
    let result, lastError
    /** The failure event for `err` thrown by `command`, with the labels the core says it carries. */
    const failed = (name, command, err) => {
      lastError = err
      const error = mongoError(err)
      error.labels = mongodb.transactionLabels(command, error).labels
      return { event: name, error, elapsedMs: Math.ceil(o.clock() - start), random: o.random() }
    }
    const attempt = async () => {
      try {
        session.startTransaction(options?.transactionOptions)
      } catch (e) {
        lastError = e
        return { event: 'start_failed', error: mongoError(e) }
      }
      try {
        result = await callback(session)
        return { event: 'callback_returned', session: sessionState(session) }
      } catch (e) {
        return { ...failed('callback_raised', 'other', e), session: sessionState(session) }
      }
    }
    const commit = async () => {
      try {
        await session.commitTransaction()
        return { event: 'commit_succeeded' }
      } catch (e) {
        return failed('commit_failed', 'commit', e)
      }
    }
    for (;;) {
      const step = mongodb.transactionStep(state, event)
      const a = step.action
      state = step.state
      publishMessage({ runner: 'transaction', decision: a, error: lastError, attempt: state.transactionAttempt })
      if (a.abortFirst) await Promise.resolve().then(() => session.abortTransaction()).catch(() => {})
      if (a.action === 'return') return result
      if (a.action === 'raise') throw withDecision(lastError, a)
      if (a.action === 'raise_timeout') {
        o.onGiveUp?.(a, lastError)
        const e = new RetryTimeoutError('runTransaction: no time left for another attempt', a, lastError)
        throw Object.assign(e, { errorLabels: a.labels })
      }
      if (a.action === 'retry_transaction' || a.action === 'retry_commit') o.onRetry?.(a, lastError)
      if (a.action === 'retry_transaction') await pause(o.sleep, a.backoffMs, o.signal)
      o.signal?.throwIfAborted()
      event = a.action === 'commit' || a.action === 'retry_commit' ? await commit() : await attempt()
    }
  }
  return runTransaction
}

module.exports = { makeRunTransaction }

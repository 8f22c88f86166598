'use strict'
// The runners over a binding's core functions, so one copy serves both packages: the native
// package's lib/retrypolicy.js passes the addon's, and the wasm package (which copies these files
// into pkg/runners/ at build) passes the module's. Everything they need comes in `core` or from
// these files.

const { RetryTimeoutError, CircuitOpenError } = require('./errors.js')
const { errorOutcome, makeClassifiers } = require('./outcome.js')
const { DECISION_CHANNEL, runStarts, setTesting, isTesting } = require('./drive.js')
const { makeRetry } = require('./retry.js')
const { makeRetryFetch, BodyNotReplayableError } = require('./fetch.js')
const { makeRunTransaction } = require('./transaction.js')

/**
 * `retry`, the classifiers, `retryFetch` and `runTransaction` over the binding's `{Run,
 * classifyDispatch, http, mongodb, prepared}` (`Run`: the core's run machine; `http` and `mongodb`:
 * the namespaces of the JSON API; `prepared`, when the backend has `RunConfigHandle`: that and the
 * facade's conversions, `{RunConfigHandle, runConfigText, budgetHandle, breakerHandle,
 * hostStrategy, camelError, isPolicy, breakerStepChanged}`, see ./drive.js's `runStarts`).
 */
function runners({ Run, classifyDispatch, http, mongodb, prepared }) {
  const prepare = runStarts(Run, prepared)
  return {
    retry: makeRetry(prepare, errorOutcome, prepared?.isPolicy ?? (() => false)),
    ...makeClassifiers(classifyDispatch, http),
    retryFetch: makeRetryFetch(prepare),
    runTransaction: makeRunTransaction(mongodb),
  }
}

module.exports = { runners, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, BodyNotReplayableError, setTesting, isTesting }

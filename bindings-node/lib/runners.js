'use strict'
// The runners over a binding's core functions, so one copy serves both packages: the native
// package's lib/retrypolicy.js passes the addon's, and the wasm package (which copies these files
// into pkg/runners/ at build) passes the module's. Everything they need comes in `core` or from
// these files.

const { makeRetry, makeClassifiers, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError } = require('./retry.js')
const { makeRetryFetch } = require('./fetch.js')
const { makeRunTransaction } = require('./transaction.js')

/**
 * `retry`, the classifiers, `retryFetch` and `runTransaction` over the core's functions
 * `{decide, decideWithBudget, classifyDispatch, http, mongodb}` (the `http` and `mongodb`
 * namespaces of the JSON API).
 */
function runners({ decide, decideWithBudget, classifyDispatch, http, mongodb }) {
  const classifiers = makeClassifiers(classifyDispatch, http)
  return {
    retry: makeRetry(decide, classifiers.classifyError, decideWithBudget),
    ...classifiers,
    retryFetch: makeRetryFetch(http),
    runTransaction: makeRunTransaction(mongodb),
  }
}

module.exports = { runners, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError }

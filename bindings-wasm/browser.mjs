// The page's entry (the package's `browser` and default export): the wasm-bindgen module as it is
// (`import init, { decide, Policy } from 'retrypolicy-wasm'`, then `await init()`), plus the Node
// package's runners over it: `retry`, `retryFetch`, `Run`, `RetryBudget`, `CircuitBreaker` and their
// errors, the same files as in Node (bundled into pkg/web/runners.mjs at build). Call them after
// `init()`. Conversion only, as in index.mjs: every rule is the core's, in the module.
import * as wasm from './pkg/web/retrypolicy_wasm.js'
import { load } from './pkg/web/runners.mjs'
import { makeRun } from './run.mjs'

export * from './pkg/web/retrypolicy_wasm.js'
export { default } from './pkg/web/retrypolicy_wasm.js'

const errors = load('./errors.js')
const json = load('./json.js')
const { invalidType } = errors

/** The RFC 0049 default policy's handle, parsed once the module is initialised. */
let defaultPolicy
const policyDefault = () => (defaultPolicy ??= wasm.Policy.parse('{}'))

/** A host strategy as the module takes it: a function, an object with `retryAfter`, or a built-in strategy's name. */
function strategyOf(s) {
  if (s === undefined || s === null || typeof s === 'function' || typeof s === 'string') return [s ?? undefined, policyDefault()]
  if (typeof s === 'object' && typeof s.retryAfter === 'function') return [(r, why) => s.retryAfter(r, why), policyDefault()]
  throw invalidType('strategy', 'a function, an object with retryAfter(request, reason), or a built-in strategy name', s)
}

/** `RetryBudget` and `CircuitBreaker` over the module's handles (the Node package's budget.js). */
const { RetryBudget, CircuitBreaker, budgetHandle, breakerHandle } = load('./budget.js').budgets({
  BudgetHandle: wasm.BudgetHandle,
  BreakerHandle: wasm.BreakerHandle,
})

/** One retry run over the core's machine (run.mjs): `new Run(config, {budget?, breaker?, strategy?})`. */
const Run = makeRun({ wasm, errors, json, budgetHandle, breakerHandle, strategyOf })

/** A dispatch failure's classification, camelCased as the Node package returns it. */
function classifyDispatch(failure) {
  const c = wasm.classifyDispatch(failure)
  return Object.freeze({ reason: c.reason, rule: c.rule, section: c.section, surfaceAs: c.surface_as ?? null })
}

const { runners, DECISION_CHANNEL, RetryTimeoutError, CircuitOpenError, BodyNotReplayableError } = load('./runners.js')
const { mongodb, http } = json.jsonApi((fn, text) => wasm.call(fn, text))

/** The Node package's runners over this module, made at first use (they read the core's tables: after `init()`). */
let made
const runnersMade = () => (made ??= runners({ Run, classifyDispatch, http, mongodb }))

/** `retry(fn, options)`: calls `fn` until it succeeds, as the run machine says (the Node package's runner). */
const retry = (fn, options) => runnersMade().retry(fn, options)
/** `retryFetch(input, init, options)`: `fetch` until a final response, as the run machine says. */
const retryFetch = (input, init, options) => runnersMade().retryFetch(input, init, options)
/** The reason for a network error thrown by a client, or null. */
const classifyNetworkError = (error) => runnersMade().classifyNetworkError(error)
/** The reason for an HTTP status failure thrown by a client, or null. */
const classifyHttpStatus = (error) => runnersMade().classifyHttpStatus(error)
/** The default classifier of `retry`: a network error's or an HTTP status failure's reason, or null. */
const classifyError = (error) => runnersMade().classifyError(error)

export {
  retry, retryFetch, classifyNetworkError, classifyHttpStatus, classifyError, Run, RetryBudget, CircuitBreaker,
  RetryTimeoutError, CircuitOpenError, BodyNotReplayableError, DECISION_CHANNEL,
}

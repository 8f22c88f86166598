// The page's entry (browser.mjs): the wasm-bindgen module's declarations, and the Node package's
// runners, run machine, budgets and breakers (their declarations, copied into pkg/ at build).
export * from './pkg/web/retrypolicy_wasm.js'
export { default } from './pkg/web/retrypolicy_wasm.js'
export {
  retry, retryFetch, classifyNetworkError, classifyHttpStatus, classifyError, Run, RetryBudget, CircuitBreaker,
  RetryTimeoutError, CircuitOpenError, BodyNotReplayableError, DECISION_CHANNEL,
} from './pkg/retrypolicy.js'

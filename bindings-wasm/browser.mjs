// The page's entry (the package's `browser` and default export): the same public API as the Node
// package and index.mjs, the one facade (bindings-node/lib/api.js, bundled with the runners it uses
// into pkg/web/runners.mjs at build) over this crate's module through ./backend.mjs. An ES module a
// page loads without a bundler (an import map naming this file): it fetches and instantiates the
// module beside it (pkg/web/retrypolicy_wasm_bg.wasm) before its exports are ready, so nothing needs
// an `init()`. The module itself stays available as the package's `./web` export.
import init, * as wasm from './pkg/web/retrypolicy_wasm.js'
import { load } from './pkg/web/runners.mjs'
import { backendOf } from './backend.mjs'

await init()
const api = load('./api.js').makeApi(backendOf(wasm))

export const {
  version, RetryReason, ERROR_CODES, isRetryPolicyError, parseReason, reasonFlags, allowsNonIdempotentRetry,
  alwaysRetry, isIdempotent, Policy, ErrorMap, decide, decideMany, decideBeforeStrategy, decideAfterStrategy,
  bestEffortDelay, BestEffort, FailFast, formatDecision, explain, classifyKv, classifyQuery, classifyAnalytics,
  classifySearch, classifyViews, classifyDispatch, controlledBackoffMs, backoffDelayMs, requestFromJson,
  requestToJson, simulate, simulateStorm, mongodb, http, Orchestrator, retry, retryFetch, RetryTimeoutError, DECISION_CHANNEL,
  classifyNetworkError, classifyHttpStatus, classifyError, RetryBudget, CircuitBreaker, decideWithBudget,
  explainWithBudget, CircuitOpenError, BodyNotReplayableError, Run, grpc, aws, otel, BREAKER_CHANNEL, setTesting, isTesting,
} = api

/** The whole API as one object, as index.mjs's default export. */
export default api

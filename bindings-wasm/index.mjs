// retrypolicy for Node over WebAssembly: the Node package's public API, its one facade
// (bindings-node/lib/api.js, copied into ./pkg/runners at build with the runners it uses) over this
// crate's module (./pkg/web, instantiated here from its file, so the package ships one .wasm)
// through ./backend.mjs. Its types are the Node package's declarations (pkg/index.d.ts).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import * as wasm from './pkg/web/retrypolicy_wasm.js'
import { backendOf } from './backend.mjs'

wasm.initSync({ module: readFileSync(new URL('./pkg/web/retrypolicy_wasm_bg.wasm', import.meta.url)) })
const api = createRequire(import.meta.url)('./pkg/runners/api.js').makeApi(backendOf(wasm))

export const {
  version, RetryReason, ERROR_CODES, isRetryPolicyError, parseReason, reasonFlags, allowsNonIdempotentRetry,
  alwaysRetry, isIdempotent, Policy, ErrorMap, decide, decideMany, decideBeforeStrategy, decideAfterStrategy,
  bestEffortDelay, BestEffort, FailFast, formatDecision, explain, classifyKv, classifyQuery, classifyAnalytics,
  classifySearch, classifyViews, classifyDispatch, controlledBackoffMs, backoffDelayMs, requestFromJson,
  requestToJson, simulate, simulateStorm, mongodb, http, Orchestrator, retry, retryFetch, RetryTimeoutError, DECISION_CHANNEL,
  classifyNetworkError, classifyHttpStatus, classifyError, RetryBudget, CircuitBreaker, decideWithBudget,
  explainWithBudget, CircuitOpenError, BodyNotReplayableError, Run, grpc, aws, otel, BREAKER_CHANNEL, setTesting, isTesting,
} = api

/** The whole API as one object (what `require('retrypolicy')` gives in the Node package). */
export default api

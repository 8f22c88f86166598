// ESM entry: the same objects as the CommonJS entry (one native addon instance per thread).
import rp from './retrypolicy.js'

export const {
  version,
  RetryReason,
  ERROR_CODES,
  isRetryPolicyError,
  parseReason,
  reasonFlags,
  allowsNonIdempotentRetry,
  alwaysRetry,
  isIdempotent,
  Policy,
  ErrorMap,
  decide,
  decideMany,
  bestEffortDelay,
  BestEffort,
  FailFast,
  formatDecision,
  explain,
  classifyKv,
  classifyQuery,
  classifyAnalytics,
  classifySearch,
  classifyViews,
  classifyDispatch,
  controlledBackoffMs,
  backoffDelayMs,
  requestFromJson,
  requestToJson,
  simulate,
  mongodb,
  http,
  Orchestrator,
} = rp

export default rp

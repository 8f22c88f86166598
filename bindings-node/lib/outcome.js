'use strict'
// What an attempt's end was, in the run machine's words (an outcome): conversion only, read off
// what only JavaScript sees (Node's and undici's error codes, the status and Retry-After an HTTP
// client's error carries). Which outcome is retried, and after how long, is the machine's; the
// classifiers ask the core for their reasons.

const { TIMEOUT_CODE } = require('./errors.js')

const SUCCESS = Object.freeze({ kind: 'success' })
const FINAL = Object.freeze({ kind: 'final' })
const TIMEOUT = Object.freeze({ kind: 'timeout' })

/** A classifier's answer as an outcome: a reason the host named, or final (null/undefined). */
const reasonOutcome = (reason) => (reason === null || reason === undefined ? FINAL : { kind: 'reason', reason })

// Whether a failed request may have left, by the error codes of Node and undici. false: it surely
// did not (refused, no DNS answer, no route, a connect timeout); true: it may have reached the
// server. Other codes are not network failures.
const MAY_HAVE_BEEN_SENT = new Map([
  ['ECONNREFUSED', false], ['ENOTFOUND', false], ['EAI_AGAIN', false], ['ENETUNREACH', false],
  ['EHOSTUNREACH', false], ['EADDRNOTAVAIL', false], ['UND_ERR_CONNECT_TIMEOUT', false],
  ['ECONNRESET', true], ['EPIPE', true], ['ETIMEDOUT', true], ['ECONNABORTED', true], ['UND_ERR_SOCKET', true],
  ['UND_ERR_CLOSED', true], ['UND_ERR_HEADERS_TIMEOUT', true], ['UND_ERR_BODY_TIMEOUT', true],
])

/**
 * Whether the network failure behind `err` (its own code, or its causes', e.g. fetch's `TypeError:
 * fetch failed`) may have sent the request: true or false; null when it is no network failure.
 */
function mayHaveBeenSent(err) {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = e.cause, depth++) {
    const { code, syscall } = e.code === undefined && Array.isArray(e.errors) ? e.errors[0] ?? {} : e
    if (code === 'ETIMEDOUT' && syscall === 'connect') return false
    const sent = MAY_HAVE_BEEN_SENT.get(code)
    if (sent !== undefined) return sent
  }
  return null
}

/** The HTTP status an error carries (`status`, `statusCode` or `response.status`, as fetch's Response, got, ky and axios have it), or undefined. */
function errorStatus(err) {
  if (err === null || typeof err !== 'object') return undefined
  const s = err.status ?? err.statusCode ?? err.response?.status
  return Number.isInteger(s) && s >= 100 && s <= 599 ? s : undefined
}

/** The `Retry-After` header of the response behind `err` (a Headers object or a plain object), or undefined. */
function errorRetryAfter(err) {
  const h = err.response?.headers ?? err.headers
  if (h === null || typeof h !== 'object') return undefined
  const v = typeof h.get === 'function' ? h.get('retry-after') : h['retry-after'] ?? h['Retry-After']
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined
}

/**
 * A thrown error as an outcome: a network failure (with whether the request may have left), an
 * HTTP status failure with its Retry-After, or final (a run's own RetryTimeoutError included: an
 * outer run never retries it).
 */
function errorOutcome(err) {
  if (err?.code === TIMEOUT_CODE) return FINAL
  const sent = mayHaveBeenSent(err)
  if (sent !== null) return { kind: 'network', sent }
  const status = errorStatus(err)
  if (status !== undefined) return { kind: 'http', status, retryAfter: errorRetryAfter(err) }
  return FINAL
}

/**
 * A fetch Response as an outcome: its status and Retry-After; a status outside 200..=599 (no HTTP
 * answer the rules know: the core refuses it) is the server's final answer, returned as it is.
 */
function responseOutcome(response) {
  const { status } = response
  if (!(status >= 200 && status <= 599)) return FINAL
  return { kind: 'http', status, retryAfter: response.headers.get('retry-after') ?? undefined }
}

/** The classifiers over the core's `classifyDispatch` and `http.classify`. */
function makeClassifiers(classifyDispatch, http) {
  // The core's two reasons, asked once (a call per error cost ~1 µs): a request that may have been
  // in flight (the HTTP network error's `retry_reason`) and one whose socket was never available.
  const inFlight = http.classify(undefined, true).retryReason
  const notSent = classifyDispatch('socket_not_available').reason
  /** A Node/undici network error → SOCKET_NOT_AVAILABLE (not sent) or SOCKET_CLOSED_WHILE_IN_FLIGHT; else null. */
  const classifyNetworkError = (err) => {
    const sent = err?.code === TIMEOUT_CODE ? null : mayHaveBeenSent(err) // a run's timeout, not its cause
    return sent === null ? null : sent ? inFlight : notSent
  }
  /** An error with an HTTP status → the core's `retry_reason` for it (null when final); no status → null. */
  const classifyHttpStatus = (err) => {
    const status = errorStatus(err)
    if (status === undefined) return null
    try {
      return http.classify(status).retryReason
    } catch (e) {
      if (e?.code === 'out_of_range') return null // 1xx
      throw e
    }
  }
  /** A network error, else an HTTP status error, else null (a RetryTimeoutError included). */
  const classifyError = (err) => classifyNetworkError(err) ?? classifyHttpStatus(err)
  return { classifyNetworkError, classifyHttpStatus, classifyError }
}

module.exports = {
  SUCCESS, FINAL, TIMEOUT, reasonOutcome, mayHaveBeenSent, errorOutcome, responseOutcome, makeClassifiers,
}

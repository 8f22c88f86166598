'use strict'
// `retryFetch(input, init, options)`: `fetch` as a thin loop over the core's run machine with the
// HTTP rules (`{http: {method, idempotent, backoff, jitter}}`: status classes, Retry-After seconds
// and dates, attempts and deadline, RFC 9110's rule for non-idempotent requests, the budget and the
// breaker). Host work only: it calls fetch with each step's time bound, tells the machine what it
// saw (a response's status and Retry-After, a network failure and whether it may have been sent,
// a timeout), sleeps, cancels discarded bodies, and returns the final response. A body fetch reads
// once (a stream, an async iterable, a Request's) is made replayable before the first attempt.

const { RetryTimeoutError, drive, runnerOptions, mayHaveBeenSent, withDecision, timeoutSignal, anySignal, checkRunNumbers } = require('./retry.js')
const { typedError, invalidType } = require('./errors.js')

/** The most bytes of a streamed body buffered to resend it (1 MiB; the `maxBodyBytes` option). */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** The code of the error a retry of a body that cannot be resent fails with. */
const BODY_CODE = 'ERR_RETRYPOLICY_BODY_NOT_REPLAYABLE'

/** The machine would retry, but the streamed body (past `maxBodyBytes`) was sent once and cannot be resent. */
class BodyNotReplayableError extends Error {
  /** `step`: the machine's wait step that was refused; `cause`: the failure (a Response or an error). */
  constructor(step, cause, maxBodyBytes) {
    super(`retryFetch: the streamed body was longer than maxBodyBytes (${maxBodyBytes}) and was sent once; it cannot be resent for attempt ${step.attempt}`, { cause })
    this.name = 'BodyNotReplayableError'
    this.code = BODY_CODE
    this.step = step
    this.decision = step.decision
    if (cause instanceof Response) this.response = cause
  }
}

/** Whether fetch reads `body` once: a ReadableStream or an async iterable (a Node stream, a generator). */
const isStream = (body) =>
  body !== null && typeof body === 'object' && (typeof body.getReader === 'function' || typeof body[Symbol.asyncIterator] === 'function')

const encoder = new TextEncoder()

/** A chunk of a streamed body as bytes. */
function bytesOf(chunk) {
  if (typeof chunk === 'string') return encoder.encode(chunk)
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk)
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  throw invalidType('init.body', 'chunks of bytes or strings', chunk)
}

/**
 * Reads a streamed body up to `max` bytes: `{bytes}` (all of it, resent as is by every attempt), or
 * `{stream}` when it is longer (the chunks read, then the rest: sent once).
 */
async function bufferBody(body, max) {
  const it = body[Symbol.asyncIterator]?.() ?? readerIterator(body.getReader())
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await it.next()
    if (done) break
    const b = bytesOf(value)
    chunks.push(b)
    size += b.byteLength
    if (size > max) return { stream: rest(chunks, it) }
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const c of chunks) bytes.set(c, at), (at += c.byteLength)
  return { bytes }
}

/** An async iterator over a ReadableStream reader. */
const readerIterator = (reader) => ({ next: () => reader.read(), return: (r) => reader.cancel(r).then(() => ({ done: true })) })

/** A ReadableStream of `head` (chunks already read), then the rest of `it`. */
function rest(head, it) {
  return new ReadableStream({
    async pull(c) {
      if (head.length > 0) return c.enqueue(head.shift())
      const { done, value } = await it.next()
      if (done) c.close()
      else c.enqueue(bytesOf(value))
    },
    cancel: (reason) => it.return?.(reason),
  })
}

/** `retryFetch` over the binding's `Run`. */
function makeRetryFetch(Run) {
  /** `fetch(input, init)` until a final response, the attempts run out or the deadline comes. */
  async function retryFetch(input, init, options) {
    const o = runnerOptions(options ?? {})
    checkRunNumbers(options ?? {})
    const { timeoutMs, maxAttempts, attemptTimeoutMs, backoff, jitter, idempotent, budget, breaker } = options ?? {}
    const maxBodyBytes = options?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
      throw typedError('out_of_range', 'maxBodyBytes', `${String(maxBodyBytes)} is out of range: expected a whole number of bytes >= 0`)
    }
    const fetchFn = options?.fetch ?? globalThis.fetch
    const method = init?.method ?? input?.method ?? 'GET' // fetch's default
    const config = { rules: { http: { method, idempotent, backoff, jitter } }, timeoutMs, maxAttempts, attemptTimeoutMs }
    const run = new Run(config, { budget, breaker })
    // What each attempt sends: a Request is cloned per attempt (its body is read once); a streamed
    // body is buffered before the first attempt, or, past maxBodyBytes, sent once.
    const request = typeof Request === 'function' && input instanceof Request ? input : undefined
    if (request?.bodyUsed) throw invalidType('input', 'a Request whose body was not read yet', request)
    let body = init?.body
    let once = false
    if (isStream(body)) {
      const read = await bufferBody(body, maxBodyBytes)
      once = read.stream !== undefined
      body = read.bytes ?? read.stream
    }
    const sent = once ? { ...init, body, duplex: 'half' } : init?.body !== undefined ? { ...init, body } : { ...init }
    let response
    const attempt = async (step) => {
      response = undefined
      // a chained timer, unref'd as AbortSignal.timeout's: a bound past 2^31 − 1 ms never fires early
      const bound = step.timeoutMs === null ? undefined : timeoutSignal(Number(step.timeoutMs), `attempt ${step.attempt}`, true)
      const signal = anySignal([o.signal, bound?.signal, init?.signal])
      try {
        const target = request !== undefined && init?.body === undefined ? request.clone() : input
        response = await fetchFn(target, { ...sent, signal })
        const { status } = response
        // a status outside 200..=599 is no HTTP answer the rules know: the server's answer, returned as is
        if (!(status >= 200 && status <= 599)) return [{ kind: 'final' }, response]
        return [{ kind: 'http', status, retryAfter: response.headers.get('retry-after') ?? undefined }, response]
      } catch (e) {
        o.signal?.throwIfAborted()
        if (bound?.signal.aborted) return [{ kind: 'timeout' }, e]
        const sentAway = mayHaveBeenSent(e)
        if (sentAway === null) throw e // not a network failure: a misuse of fetch, surfaced as it is
        return [{ kind: 'network', sent: sentAway }, e]
      }
    }
    const cancelBody = (r) => (r !== undefined && r === response ? response.body?.cancel().catch(() => {}) : undefined)
    /** Before a wait: the discarded response's body is cancelled; a body sent once refuses the retry. */
    const discard = async (r, step) => {
      await cancelBody(r)
      if (once) throw new BodyNotReplayableError(step, r, maxBodyBytes)
    }
    let step
    let result
    try {
      ;({ step, result } = await drive('fetch', run, o, attempt, discard))
    } catch (e) {
      await cancelBody(response) // no response is left unread behind an error
      throw e
    }
    if (result === response && response !== undefined) return response // final, succeeded, or the last transient one
    if (step.end === 'timed_out') {
      throw new RetryTimeoutError(`retryFetch: gave up at the deadline after ${step.attempt} attempts`, step, result)
    }
    throw withDecision(result, step)
  }
  return retryFetch
}

module.exports = { makeRetryFetch, BodyNotReplayableError, DEFAULT_MAX_BODY_BYTES }

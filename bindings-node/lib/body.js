'use strict'
// What each attempt of `retryFetch` sends: a body fetch reads once (a ReadableStream, an async
// iterable, a Request's) made replayable before the first attempt. A streamed body is buffered up
// to `maxBodyBytes` and resent whole; past it, it is sent once and a retry is refused.

const { typedError, invalidType } = require('./errors.js')

/** The most bytes of a streamed body buffered to resend it (1 MiB; the `maxBodyBytes` option). */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** The `maxBodyBytes` option, checked (a whole number of bytes), DEFAULT_MAX_BODY_BYTES when not given. */
function maxBodyBytesOf(options) {
  const max = options?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isSafeInteger(max) || max < 0) {
    throw typedError('out_of_range', 'maxBodyBytes', `${String(max)} is out of range: expected a whole number of bytes >= 0`)
  }
  return max
}

/** The code of the error a retry of a body that cannot be resent fails with. */
const BODY_CODE = 'ERR_RETRYPOLICY_BODY_NOT_REPLAYABLE'

/** The machine would retry, but the streamed body (past `maxBodyBytes`) was sent once and cannot be resent. */
class BodyNotReplayableError extends Error {
  /** `step`: the machine's wait step that was refused (`retryStep`); `cause`: the failure (a Response or an error). */
  constructor(step, cause, maxBodyBytes) {
    super(`retryFetch: the streamed body was longer than maxBodyBytes (${maxBodyBytes}) and was sent once; it cannot be resent for attempt ${step.attempt}`, { cause })
    this.name = 'BodyNotReplayableError'
    this.code = BODY_CODE
    this.retryStep = step
    if (cause instanceof Response) this.response = cause
  }

  /** Deprecated alias of `retryStep`. */
  get step() {
    return this.retryStep
  }

  /** Deprecated: `retryStep.decision`. */
  get decision() {
    return this.retryStep.decision
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

/**
 * What every attempt of `fetch(input, init)` sends: `{input(), init, once}`. A Request is cloned per
 * attempt (its body is read once; a used one is refused); a streamed body is buffered before the
 * first attempt, or, past `maxBodyBytes`, sent once (`once`: a retry must be refused).
 */
async function replayable(input, init, maxBodyBytes) {
  const request = typeof Request === 'function' && input instanceof Request ? input : undefined
  if (request?.bodyUsed) throw invalidType('input', 'a Request whose body was not read yet', request)
  const clone = request !== undefined && init?.body === undefined
  let body = init?.body
  let once = false
  if (isStream(body)) {
    const read = await bufferBody(body, maxBodyBytes)
    once = read.stream !== undefined
    body = read.bytes ?? read.stream
  }
  const sent = once ? { ...init, body, duplex: 'half' } : init?.body !== undefined ? { ...init, body } : { ...init }
  return { input: () => (clone ? request.clone() : input), init: sent, once }
}

module.exports = { maxBodyBytesOf, replayable, BodyNotReplayableError }

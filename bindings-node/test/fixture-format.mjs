// The spec fixtures' JSON conventions read into the JS API's terms, shared by this package's fixture
// runner (fixtures.test.mjs) and the wasm package's module test (bindings-wasm/test/module.test.mjs),
// so both read a fixture alike: camelCase keys, big milliseconds as BigInt, the host strategy given
// as data. It holds no test of its own.

/** A snake_case key in camelCase. */
export const camel = (s) => s.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())

/** Wire milliseconds (a number, or a decimal string past 2^53 − 1) → what the JS API takes. */
export function millisIn(v) {
  return typeof v === 'string' && /^[0-9]+$/.test(v) ? BigInt(v) : v
}

// The keys whose values the MongoDB and HTTP API passes as they are (the caller's documents, and the
// policy's `backoff`), listed here apart from the library's own list so that a slip in either shows.
export const AS_IS = new Set(['filter', 'update', 'documents', 'document_id', 'key_pattern', 'key_value', 'token',
  'cleanup_pipeline', 'backoff'])

/** A fixture's input in the API's camelCase, AS_IS values as they are. */
export function camelInput(v) {
  if (Array.isArray(v)) return v.map(camelInput)
  if (v === null || typeof v !== 'object') return v
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), AS_IS.has(k) ? x : camelInput(x)]))
}

/** An error like the API's, for what only the fixture format holds. */
export const fixtureError = (code, field) => Object.assign(new Error(`${field}: ${code}`), { code, field })

/**
 * The fixture's host strategy (`{"retry_after_ms": N or null}`) as a real strategy function, its
 * shape read as the wire reads it (an object with `retry_after_ms` only); a bad answer is left to
 * the binding, which names it `retryAfter`.
 */
export function hostStrategy(i) {
  const host = i.host
  if (host === undefined || host === null) return undefined
  if (typeof host !== 'object' || Array.isArray(host)) throw fixtureError('invalid_type', 'host')
  const extra = Object.keys(host).find((k) => k !== 'retry_after_ms')
  if (extra !== undefined) throw fixtureError('unknown_field', `host.${extra}`)
  if (!('retry_after_ms' in host)) throw fixtureError('missing_field', 'host.retry_after_ms')
  const ms = host.retry_after_ms
  if (ms !== null && !['number', 'string'].includes(typeof ms)) throw fixtureError('invalid_type', 'host.retry_after_ms')
  return () => millisIn(ms)
}

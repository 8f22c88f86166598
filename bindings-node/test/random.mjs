// A small seeded generator (mulberry32) and the random inputs the invariant and thread tests share.
export function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1))
  const pick = (xs) => xs[int(0, xs.length - 1)]
  return { next, int, pick }
}

export const KV_OPS = ['get', 'upsert', 'insert', 'lookup_in', 'mutate_in', 'increment', 'get_and_lock', 'unlock', 'exists']

/** A random request of any service; about one in five carries a draw, an override or history. */
export function randomRequest(r, reasons) {
  const service = r.pick(['kv', 'kv', 'kv', 'query', 'analytics', 'search', 'views', 'management'])
  const op =
    service === 'kv'
      ? { service, operation: r.pick(KV_OPS) }
      : service === 'query' || service === 'analytics'
        ? { service, readonly: r.pick([true, false, undefined]) }
        : service === 'management'
          ? { service, method: r.pick(['GET', 'POST', 'DELETE']) }
          : { service }
  const timeoutMs = r.pick([0, 1, 2500, 75_000, r.int(0, 1e9), Number.MAX_SAFE_INTEGER])
  const elapsedMs = r.pick([0, timeoutMs, Math.max(0, timeoutMs - r.int(0, 600)), r.int(0, 1e9)])
  const req = {
    ...op,
    attempts: r.pick([0, 1, 2, 3, 7, 30, r.int(0, 4294967295)]),
    elapsedMs,
    timeoutMs,
  }
  if (r.next() < 0.2) req.idempotent = r.pick([true, false])
  if (r.next() < 0.2) req.strategy = r.pick(['best_effort', 'fail_fast'])
  if (r.next() < 0.2) req.random = r.next()
  if (r.next() < 0.2) req.previousDelayMs = r.int(0, 10_000)
  if (r.next() < 0.2) req.previousReasons = [r.pick(reasons), r.pick(reasons)]
  return req
}

/** The policy documents the random tests draw from. */
export const POLICY_DOCS = [
  undefined,
  { strategy: 'fail_fast' },
  { backoff: { kind: 'fixed', delay_ms: 100_000_000 } },
  { jitter: 'full' },
  { jitter: 'decorrelated', backoff: { kind: 'exponential', min_ms: 5, max_ms: 2000, factor: 3 } },
  { compat: { retry_unknown_if_idempotent: true, collection_outdated_not_always_retry: true } },
]

/** Whether the request can be decided under the policy (jitter needs a draw). */
export const decidable = (req, doc) => !(doc && doc.jitter && doc.jitter !== 'none' && req.random === undefined)

// A fake monotonic clock for the runners' tests (no test bounds real elapsed time). It holds no test of its own.

/** A fake monotonic clock whose sleep advances it, recording every sleep's ms. */
export function fakeTime() {
  const t = { now: 1000, sleeps: [] }
  t.clock = () => t.now
  t.sleep = async (ms) => {
    t.sleeps.push(ms)
    t.now += ms
  }
  return t
}

// A retry run replayed through the core's `run` (the JSON API): the page plays the host of the
// run machine. Each step the core answers says what comes next (send: the attempt ends after the
// latency with the outcome the user picked for it; wait: the wait ends after the step's delay;
// done: the run is over), and the page only keeps the clock. The answer carries every step (with
// the budget's and the breaker's verdicts and the breaker's state change), the run's statistics
// and its end.
//
// `run` replays a whole run from its events, so asking it once per event replays the run again
// each time: 256 calls and 550 ms for the 128 attempts of a KV get under a 60 s timeout (Node 22,
// this build). Each call here also sends guessed events past the known steps (each wait as long as
// the last one seen), and keeps those the answer's own steps confirm: a step depends only on the
// events before it, so a step the answer gives for a confirmed event is the step of the real run.
// A wrong guess costs one more call; the answer shown is a replay of confirmed events only. The
// same run: 18 calls, 25 ms. A jittered wait is never guessed: one call per attempt (246 attempts,
// 1.05 s), hence the bound below.

/** The attempts one schedule replays at most (the page says when it stopped there). */
export const MAX_ATTEMPTS = 100

/**
 * The event that follows `step` (answered for the event at `at`), or null when none does: the run
 * is over, the attempt cap is reached, or the picked outcomes ran out (`outcome(n)` is null).
 * `host`: { latency, outcome(attempt), random(attempt) }.
 */
export function nextEvent (step, at, host) {
  if (step.action === 'wait') return { event: 'wait_ended', at_ms: at + step.delay_ms }
  if (step.action !== 'send' || step.attempt > MAX_ATTEMPTS) return null
  const outcome = host.outcome(step.attempt)
  if (outcome === null) return null
  const random = host.random?.(step.attempt)
  return { event: 'attempt_ended', at_ms: at + host.latency, outcome, ...(random === undefined ? {} : { random }) }
}

// What the host guesses the core will answer to `event` (to guess the events after it): an attempt
// that ended is followed by a wait as long as `delay`, a wait by the next attempt.
function guessedStep (event, last, delay) {
  if (event.event === 'attempt_ended') return { action: 'wait', attempt: last.attempt + 1, delay_ms: delay }
  return { action: 'send', attempt: last.action === 'wait' ? last.attempt : last.attempt + 1 }
}

// The index of the event an error of `run` names (`events[3].outcome.status`: 3), or -1.
const eventIndex = (e) => Number((/^events\[(\d+)\]/.exec(e?.field ?? '') ?? [])[1] ?? -1)

/**
 * Replays `input` (`run`'s input without `events`) driven by `host`, calling `run` through `call`.
 * Returns { answer, events }: `run`'s answer for the events the host sent, all confirmed.
 */
export function replay (call, input, host) {
  const events = [{ event: 'start', at_ms: 0 }]
  const steps = []
  let delay = 0
  let ahead = 2 // guessed events per call: doubled while the guesses hold, back to 2 when one fails
  for (;;) {
    // The guesses past the confirmed events (the first one is certain: the last step asks for it).
    const guessed = []
    let step = steps[steps.length - 1]
    let at = events[events.length - 1].at_ms
    for (let e = step && nextEvent(step, at, host); e && guessed.length < ahead; e = nextEvent(step, at, host)) {
      guessed.push(e)
      step = guessedStep(e, step, delay)
      at = e.at_ms
    }
    let sent = [...events, ...guessed]
    let answer
    for (;;) {
      try {
        answer = call({ ...input, events: sent })
        break
      } catch (e) {
        // A guessed event the machine refuses (it was waiting for the breaker, or was done): drop
        // it and those after it. An error in an event the run asked for, or in the configuration,
        // is the user's (a bad outcome, a bad budget field).
        const i = eventIndex(e)
        if (i <= events.length) throw e
        sent = sent.slice(0, i)
      }
    }
    // The steps of the confirmed events, then each guess that is the event its step asks for.
    for (let i = steps.length; i < answer.steps.length; i++) {
      if (i >= events.length) {
        if (JSON.stringify(nextEvent(answer.steps[i - 1], sent[i - 1].at_ms, host)) !== JSON.stringify(sent[i])) break
        events.push(sent[i])
      }
      steps.push(answer.steps[i])
      if (answer.steps[i].action === 'wait') delay = answer.steps[i].delay_ms
    }
    if (nextEvent(steps[steps.length - 1], events[events.length - 1].at_ms, host) === null) {
      return { answer: sent.length === events.length ? answer : call({ ...input, events }), events }
    }
    ahead = events.length === sent.length ? Math.min(ahead * 2, 256) : 2
  }
}

/**
 * The schedule of a replayed run for the timeline and its tables: `bars` (attempts and waits),
 * `rows` (one per attempt sent, and one per wait for the breaker or end without an attempt:
 * #, sent ms, result, decision, wait ms), `signals` (each step's signals: [attempt, signal]) and
 * the last step. `result(n)` is the text of attempt n's outcome; `signalsOf(step)` a step's signals.
 */
export function runSchedule ({ answer, events }, result, signalsOf) {
  const { steps } = answer
  const bars = []; const rows = []; const signals = []
  steps.forEach((s, i) => {
    const e = events[i]
    const at = e.at_ms
    const keptBack = s.action === 'wait' && Boolean(s.breaker && !s.breaker.permitted)
    // The attempt a step is about: the one whose end it answers, else the one it sends, keeps
    // back, or (done) leaves unsent.
    const attempt = e.event === 'attempt_ended' ? steps[i - 1].attempt : s.action === 'done' ? s.attempt + 1 : s.attempt
    for (const signal of signalsOf(s)) signals.push([attempt, signal])
    if (e.event === 'attempt_ended') {
      const sentAt = events[i - 1].at_ms
      bars.push({ kind: 'attempt', start: sentAt, end: at, ok: s.end === 'succeeded', label: attempt })
      const asked = s.action === 'done' && s.retry_after_ms != null ? `; the server asked for ${s.retry_after_ms} ms` : ''
      const decision = s.action === 'wait' ? `retry after ${s.delay_ms} ms (${s.rule})` : `${s.end} (${s.rule})${asked}`
      rows.push([attempt, sentAt, result(attempt), decision, s.action === 'wait' ? s.delay_ms : ''])
    } else if (keptBack) {
      rows.push(['', at, `#${attempt} kept back: the breaker is ${s.breaker.state.replace('_', '-')}`, `wait ${s.delay_ms} ms (${s.rule})`, s.delay_ms])
    } else if (s.action === 'done') {
      rows.push(['', at, `#${attempt} not sent`, `${s.end} (${s.rule})`, ''])
    }
    if (s.action === 'wait') {
      bars.push({ kind: 'wait', start: at, end: at + s.delay_ms, note: keptBack ? `the breaker keeps attempt ${attempt} back` : `before attempt ${s.attempt}` })
    }
  })
  return { bars, rows, signals, last: steps[steps.length - 1] }
}

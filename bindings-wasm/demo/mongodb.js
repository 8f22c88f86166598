// MongoDB: one retryable read/write decision, and a withTransaction run. The run is driven the way
// a driver drives the core's state machine: the core's `mongodb_with_transaction` answers `begin`,
// then each outcome the user picked goes to `mongodb_transaction_step` as the event the action
// asked for (the callback's result after start/retry_transaction, the commit's after commit/
// retry_commit); the errors' labels come from the core's `mongodb_transaction_labels`. The page
// only keeps the clock: each callback and commit takes the latency, each backoff the core's ms.
import { api, draws, inputError, items, num, optionalNum, show, value } from './engine.js'
import { drawTimeline, fillTable, setEnding } from './timeline.js'

// The core's wire fields, as its errors name them, and the form controls that hold them.
const CONTROLS = { 'error.code': 'mongo_code', code: 'mongo_code', 'error.labels': 'mongo_labels', labels: 'mongo_labels', 'request.attempts': 'attempts', timeout_ms: 'txn_timeout' }

/** The decision panel for MongoDB: the core's `mongodb_decide` for one error. */
export function decideMongo () {
  const kind = value('mongo_kind')
  const error = { kind, labels: items('mongo_labels') }
  if (kind === 'server') error.code = num('mongo_code')
  const request = { operation: { name: value('mongo_op') }, attempts: num('attempts'), server: value('mongo_server'), random: Number(value('random')) }
  const d = api('mongodb_decide', { request, error }, CONTROLS)
  show({
    action: d.action,
    label: d.action,
    delay: d.action === 'retry' ? `after ${d.delay_ms ?? 0} ms` : '',
    sentence: d.action === 'retry'
      ? `Retry the ${value('mongo_op')} (retry ${d.attempts}); the error carries ${d.labels.length ? d.labels.join(', ') : 'no labels'}.`
      : `Surface the error from ${value('mongo_op')}; labels: ${d.labels.length ? d.labels.join(', ') : 'none'}.`,
    rule: d.rule,
    section: d.section,
    classified: d.retryable_as ? `retryable as ${d.retryable_as}` : '',
    json: d
  })
}

/** The outcomes a user can pick, each the error (or success) of a callback run or a commit. */
export const TXN_OUTCOMES = {
  transient: { on: 'callback', text: 'callback: network error', error: { kind: 'network' } },
  error: { on: 'callback', text: 'callback: duplicate key (11000)', error: { kind: 'server', code: 11000 } },
  unknown_commit: { on: 'commit', text: 'commit: network error', error: { kind: 'network' } },
  commit_transient: { on: 'commit', text: 'commit: NoSuchTransaction (251)', error: { kind: 'server', code: 251, labels: ['TransientTransactionError'] } },
  commit_error: { on: 'commit', text: 'commit: write concern error 100', error: { kind: 'server', write_concern_code: 100 } },
  success: { on: 'commit', text: 'commit: ok' }
}

// A runner's bound on a repeated outcome, so a long timeout cannot hang the page.
const MAX_EVENTS = 400

function outcomes () {
  const names = items('txn_events')
  for (const n of names) {
    if (!TXN_OUTCOMES[n]) throw inputError('txn_events', `unknown outcome "${n}", expected one of ${Object.keys(TXN_OUTCOMES).join(', ')}`)
  }
  if (names.length === 0) throw inputError('txn_events', 'pick at least one outcome')
  return names
}

function labelled (outcome, command) {
  const { labels } = api('mongodb_transaction_labels', { command, error: outcome.error })
  return { ...outcome.error, labels }
}

function actionText (a) {
  if (!a.rule) return a.action
  return `${a.action} (${a.rule})${a.abort_first ? ', abort first' : ''}`
}

const ASKS_CALLBACK = ['start_transaction', 'retry_transaction']
const ASKS_COMMIT = ['commit', 'retry_commit']

/** Runs the picked outcomes through the core; returns the rows, bars, last action and clock. */
function runTransaction () {
  const picked = outcomes()
  const repeat = value('txn_repeat')
  const latency = num('latency')
  const random = draws(MAX_EVENTS)
  let clock = 0; let k = 0; let used = 0; let txn = 0
  let { state, last: action } = api('mongodb_with_transaction', { timeout_ms: optionalNum('txn_timeout'), events: [{ event: 'begin' }] }, CONTROLS)
  const rows = [[1, 0, 'begin', actionText(action), '']]
  const bars = []
  const send = (event, text) => {
    // The core refusing an event means the picked outcomes do not fit the run: the list is at fault.
    try {
      ({ state, action } = api('mongodb_transaction_step', { state, event }))
    } catch (e) {
      throw Object.assign(e, { control: 'txn_events' })
    }
    rows.push([rows.length + 1, clock, text, actionText(action), action.backoff_ms ?? ''])
  }
  const take = () => {
    if (used < picked.length) return picked[used++]
    return repeat ? picked[picked.length - 1] : null
  }
  let pending = null
  while (rows.length < MAX_EVENTS && (ASKS_CALLBACK.includes(action.action) || ASKS_COMMIT.includes(action.action))) {
    const name = pending ?? take()
    pending = null
    if (name === null) break
    const outcome = TXN_OUTCOMES[name]
    const start = clock
    clock += latency
    if (ASKS_CALLBACK.includes(action.action)) {
      txn++
      if (outcome.on === 'callback') {
        bars.push({ kind: 'attempt', start, end: clock, ok: false, label: txn })
        send({ event: 'callback_raised', session: 'in_progress', error: labelled(outcome, 'other'), elapsed_ms: clock, random: random[k++] }, outcome.text)
      } else {
        bars.push({ kind: 'attempt', start, end: clock, ok: true, label: txn })
        send({ event: 'callback_returned', session: 'in_progress' }, 'callback returned')
        pending = name
      }
    } else {
      bars.push({ kind: 'attempt', start, end: clock, ok: name === 'success', label: 'c' })
      send(name === 'success'
        ? { event: 'commit_succeeded' }
        : outcome.on === 'commit'
          ? { event: 'commit_failed', error: labelled(outcome, 'commit'), elapsed_ms: clock, random: random[k++] }
          : { event: 'callback_raised', session: 'in_progress', error: labelled(outcome, 'other'), elapsed_ms: clock, random: random[k++] }, outcome.text)
    }
    if (action.action === 'retry_transaction') {
      bars.push({ kind: 'wait', start: clock, end: clock + action.backoff_ms })
      clock += action.backoff_ms
    }
  }
  return { rows, bars, action, state, clock, txn, unused: picked.length - used }
}

function ending ({ action, clock, txn, unused }) {
  const tries = `${txn} transaction attempt${txn === 1 ? '' : 's'}, ${clock} ms`
  const left = unused > 0 ? ` (${unused} picked outcome${unused === 1 ? '' : 's'} not reached)` : ''
  switch (action.action) {
    case 'return': return `returned after ${tries}${left}`
    case 'raise': return `raised the error after ${tries}: rule ${action.rule}${action.abort_first ? ', after abortTransaction' : ''}${left}`
    case 'raise_timeout': return `raised a timeout error after ${tries}: rule ${action.rule}, labels ${action.labels.join(', ') || 'none'}${left}`
    default: return `the picked outcomes ran out after ${tries}: the core asks for ${action.action} next`
  }
}

/** The schedule panel for MongoDB: a withTransaction run over the picked outcomes. */
export function scheduleMongo () {
  const run = runTransaction()
  // The 120 s default would squeeze a run of a few ms into a sliver: the limit is drawn only
  // when it is near the run, and always named in the sentence.
  const near = run.state.timeout_ms <= Math.max(run.clock, 1) * 4
  drawTimeline({ bars: run.bars, start: 0, limit: near ? { at: run.state.timeout_ms, label: `timeout ${run.state.timeout_ms} ms` } : undefined })
  setEnding(`${ending(run)} (limit ${run.state.timeout_ms} ms${near ? '' : ', off the chart'})`)
  fillTable(['#', 'at ms', 'event', 'action', 'backoff ms'], run.rows)
  return run.action.action
}

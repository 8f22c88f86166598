'use strict'
// Logging: RFC 0049 asks for every retry and every non-retry to be logged; the Orchestrator
// hands one structured record per decision to a callback and to `'decision'` listeners.

const { EventEmitter } = require('node:events')
const { invalidType } = require('./errors.js')

/** The `Orchestrator` class over the package's `decide` and `formatDecision`. */
function orchestratorClass(decide, formatDecision) {
  /** One frozen record per decision, for logs and metrics. */
  function decisionRecord(d, request) {
    return Object.freeze({
      action: d.action,
      reason: d.reason,
      attempts: d.attempts,
      delayMs: d.action === 'retry' ? d.delayMs : null,
      rule: d.rule,
      section: d.section,
      cause: d.action === 'retry' ? null : d.cause,
      service: typeof request === 'object' && request !== null ? request.service : undefined,
      message: formatDecision(d),
      decision: d,
    })
  }

  /** `decide` with a fixed policy and strategy that reports every decision (callback and `'decision'` event). */
  class Orchestrator extends EventEmitter {
    /** `{policy?, strategy?, onDecision?}`. */
    constructor(options) {
      super()
      if (options !== undefined && options !== null && typeof options !== 'object') {
        throw invalidType('options', 'an options object', options)
      }
      const { policy, strategy, onDecision } = options ?? {}
      if (onDecision !== undefined && typeof onDecision !== 'function') {
        throw invalidType('onDecision', 'a function', onDecision)
      }
      this.policy = policy
      this.strategy = strategy
      this.onDecision = onDecision
    }

    /** Decides, reports the record, and returns the decision. */
    decide(request, reason) {
      const d = decide(request, reason, this.policy, this.strategy)
      if (this.onDecision !== undefined || this.listenerCount('decision') > 0) {
        const record = decisionRecord(d, request)
        if (this.onDecision !== undefined) this.onDecision(record)
        this.emit('decision', record)
      }
      return d
    }
  }
  return Orchestrator
}

module.exports = { orchestratorClass }

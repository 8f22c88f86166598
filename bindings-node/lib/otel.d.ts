// Type definitions of `otel` (re-exported by ./retrypolicy.d.ts): OpenTelemetry for every run and
// breaker, optional. No type of `@opentelemetry/api` is named here (it is an optional peer
// dependency): what `instrument` takes is declared by the members it calls, which the API's own
// module and MeterProvider have.

import type { RunStep } from './retry-runners.js'
import type { CircuitBreaker } from './budget.js'

/** The part of the `@opentelemetry/api` module `otel.instrument` uses. */
export interface OtelApiModule {
  readonly metrics: { getMeter(name: string, version?: string): unknown }
  readonly trace: { getActiveSpan(): unknown }
}

/** A MeterProvider (`@opentelemetry/api`'s, or the SDK's): what `otel.instrument` asks for the meter `retrypolicy`. */
export interface OtelMeterProvider {
  getMeter(name: string, version?: string): unknown
}

/** Options of `otel.instrument`. */
export interface OtelOptions {
  /** Where the meter `retrypolicy` comes from (default: the global one, `api.metrics`, whichever is registered at each record). */
  meterProvider?: OtelMeterProvider | null
  /** The `@opentelemetry/api` module (default: loaded by `instrument`; pass it where `require` cannot find it, e.g. a page). */
  api?: OtelApiModule
}

/**
 * OpenTelemetry for every run and breaker (README, "Observability": the metric table of
 * spec-fixtures/observability.json, shared with Python). Nothing of `@opentelemetry/api` is loaded
 * until `instrument` is called.
 */
export declare const otel: {
  /**
   * From now on every run of `retry` and `retryFetch` records the table's metrics on the meter
   * `retrypolicy` and a span event for each retry and give-up on the active span; every breaker's
   * change records `retrypolicy.breaker.state_changes` and the `retrypolicy.breaker.state` gauge.
   * Throws (code `ERR_RETRYPOLICY_NO_OPENTELEMETRY`) when `@opentelemetry/api` is neither given
   * nor installed. Calling it again replaces the meter.
   */
  instrument(options?: OtelOptions | null): void
  /** Stops recording: runs (those in flight too) and breakers record nothing from now on. */
  uninstrument(): void
  /** Whether `instrument` was called (and `uninstrument` not since). */
  isInstrumented(): boolean
  /** Records one step of a `Run` the host drives itself (`http`: HTTP rules, for `http.request.resend_count`; `breaker`: the run's, named on a rejection); nothing when not instrumented. */
  record(step: RunStep, options?: { http?: boolean; breaker?: CircuitBreaker | null } | null): void
  /** The instrumentation scope (the meter's name). */
  readonly SCOPE: 'retrypolicy'
}

/* A complete retry loop around a KV get with retrypolicy's C API, over the run machine (rp_run):
 * the loop calls the function, turns its result into an rp_outcome, and does what each rp_run_step
 * says (send, wait, done); the machine decides every retry, wait and stop. The loop keeps only the
 * host's work: the clock, sleeping (nanosleep), calling the function, logging each decision
 * (RFC 0049 asks for it). Built and run by `make test`.
 *
 *   cc -std=c11 retry_loop.c -I bindings-c/include -L bindings-c/build/lib -lretrypolicy
 *
 * The clock is injected: this example runs on a simulated clock that each sleep and each simulated
 * attempt (3 ms) advances, so its output never depends on the machine's speed; a real program
 * passes CLOCK_MONOTONIC's milliseconds. The "server" is simulated too: the first run answers
 * TEMPORARY_FAILURE (0x86) twice, then succeeds; the second always answers LOCKED (0x09) and meets
 * its 40 ms timeout. */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <retrypolicy.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The host's clock: `now` reads it in ms, `sleep` waits (here both move the simulated time). */
typedef struct {
    double now_ms;
} sim_clock;

/* Sleeps `ms` milliseconds with nanosleep (resuming after a signal), and advances the clock. */
static void sleep_ms(sim_clock *clock, uint64_t ms) {
    struct timespec left = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&left, &left) == -1 && errno == EINTR) {
    }
    clock->now_ms += (double)ms;
}

/* The simulated KV get: the KV status of attempt `n` (0 = success); each takes 3 ms. */
typedef uint16_t (*kv_get_fn)(uint32_t n);
static uint16_t fails_twice(uint32_t n) { return n < 3 ? 0x86 : 0x00; }
static uint16_t always_locked(uint32_t n) { (void)n; return 0x09; }
#define ATTEMPT_MS 3.0

/* Logs a step that follows a failure: its decision's line (or its rule), then how the run ended. */
static void log_step(const char *name, uint32_t failed, const rp_run_step *s) {
    char *line = NULL;
    if (s->has_decision && rp_decision_format(&s->decision, &line) == RP_RESULT_OK)
        printf("%s: attempt %u: %s\n", name, failed, line);
    else if (s->action != RP_RUN_DONE || s->end != RP_RUN_END_SUCCEEDED)
        printf("%s: attempt %u: rule %s; %s\n", name, failed, s->rule, s->section);
    rp_string_free(line);
    if (s->end == RP_RUN_END_SUCCEEDED) printf("%s: succeeded after %u retries\n", name, s->attempt - 1);
    if (s->end == RP_RUN_END_TIMED_OUT) printf("%s: timed out after %u attempts\n", name, s->attempt);
    if (s->end == RP_RUN_END_GAVE_UP || s->end == RP_RUN_END_FINAL) printf("%s: failed\n", name);
}

/* Runs `get` under `config` (the core's run configuration) until the machine says done; 0 on success. */
static int get_with_retries(const char *name, kv_get_fn get, const char *config, sim_clock *clock) {
    rp_run *run = NULL;
    rp_run_step step;
    if (rp_run_new(config, strlen(config), NULL, NULL, &run) != RP_RESULT_OK ||
        rp_run_start(run, clock->now_ms, -1, &step) != RP_RESULT_OK) {
        fprintf(stderr, "%s: %s\n", name, rp_last_error_message());
        rp_run_free(run);
        return 2;
    }
    while (step.action != RP_RUN_DONE) {
        rp_result rc;
        if (step.action == RP_RUN_SEND) {
            uint16_t status = get(step.attempt);
            clock->now_ms += ATTEMPT_MS;
            rp_outcome outcome = {0};
            outcome.kind = status == 0 ? RP_OUTCOME_SUCCESS : RP_OUTCOME_KV;
            outcome.status = status;
            uint32_t failed = step.attempt;
            rc = rp_run_attempt_ended(run, &outcome, clock->now_ms, -1, -1, &step);
            if (rc == RP_RESULT_OK) log_step(name, failed, &step);
        } else {
            sleep_ms(clock, step.delay_ms);
            rc = rp_run_wait_ended(run, clock->now_ms, -1, &step);
        }
        if (rc != RP_RESULT_OK) {
            fprintf(stderr, "%s: %s\n", name, rp_last_error_message());
            rp_run_free(run);
            return 2;
        }
    }
    rp_run_free(run);
    return step.end == RP_RUN_END_SUCCEEDED ? 0 : 1;
}

int main(void) {
    sim_clock clock = {0};
    /* No policy: RFC 0049's defaults (best effort, 1..500 ms exponential). */
    int first = get_with_retries(
        "flaky get", fails_twice,
        "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 2500}",
        &clock);
    int second = get_with_retries(
        "locked get", always_locked,
        "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 40}",
        &clock);
    /* The first succeeds; the second must stop at its timeout (the machine never waits past it). */
    return first == 0 && second == 1 ? 0 : 1;
}

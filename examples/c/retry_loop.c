/* A complete retry loop around a KV get over retrypolicy's run machine (rp_run): the loop calls the
 * function, turns its result into an rp_outcome and does what each step says (send, wait, done);
 * the machine decides every retry, wait and stop. The loop keeps the host's work only: the clock,
 * sleeping (nanosleep), the call, the log of each decision (RFC 0049 asks for it), and the run's
 * statistics at the end (rp_run_statistics).
 *
 *   cc -std=c11 retry_loop.c -I bindings-c/include -L bindings-c/build/lib -lretrypolicy
 *
 * The clock is injected: a simulated one that each sleep and each attempt (3 ms) advance, so the
 * output is exact (a real program reads CLOCK_MONOTONIC). The simulated server answers the first
 * run TEMPORARY_FAILURE (0x86) twice, then success; the second always LOCKED (0x09), until its
 * 40 ms timeout. Built and run by `make test`. */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <inttypes.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double clock_ms; /* the simulated monotonic clock */

/* Sleeps `ms` milliseconds with nanosleep (resuming after a signal); the clock moves as far. */
static void sleep_ms(uint64_t ms) {
    struct timespec left = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&left, &left) == -1 && errno == EINTR) {
    }
    clock_ms += (double)ms;
}

/* The simulated KV get: the status attempt `n` gets (0 = success). */
typedef uint16_t (*kv_get_fn)(uint32_t n);
static uint16_t fails_twice(uint32_t n) { return n < 3 ? 0x86 : 0x00; }
static uint16_t always_locked(uint32_t n) { (void)n; return 0x09; }

/* Runs `get` under the run configuration `config` until the machine says done: 0 on success. */
static int get_with_retries(const char *name, kv_get_fn get, const char *config) {
    rp_run *run = NULL;
    rp_run_step step;
    rp_result rc = rp_run_new(config, strlen(config), NULL, NULL, &run);
    if (rc == RP_RESULT_OK) rc = rp_run_start(run, clock_ms, -1, &step);
    while (rc == RP_RESULT_OK && step.action != RP_RUN_DONE) {
        if (step.action == RP_RUN_WAIT) {
            sleep_ms(step.delay_ms);
            rc = rp_run_wait_ended(run, clock_ms, -1, &step);
            continue;
        }
        uint32_t attempt = step.attempt;
        rp_outcome outcome = {0};
        outcome.status = get(attempt);
        outcome.kind = outcome.status == 0 ? RP_OUTCOME_SUCCESS : RP_OUTCOME_KV;
        clock_ms += 3.0;
        rc = rp_run_attempt_ended(run, &outcome, clock_ms, -1, -1, &step);
        char *line = NULL;
        if (rc == RP_RESULT_OK && step.has_decision && rp_decision_format(&step.decision, &line) == RP_RESULT_OK)
            printf("%s: attempt %u: %s\n", name, attempt, line);
        else if (rc == RP_RESULT_OK && step.end != RP_RUN_END_SUCCEEDED)
            printf("%s: attempt %u: rule %s; %s\n", name, attempt, step.rule, step.section);
        rp_string_free(line);
    }
    rp_run_stats stats; /* what the run did: for the host's metrics, or its error */
    if (rc == RP_RESULT_OK) rc = rp_run_statistics(run, &stats);
    rp_run_free(run);
    if (rc != RP_RESULT_OK) {
        fprintf(stderr, "%s: %s\n", name, rp_last_error_message());
        return 2;
    }
    if (step.end == RP_RUN_END_SUCCEEDED) printf("%s: succeeded after %u retries", name, stats.retries);
    else if (step.end == RP_RUN_END_TIMED_OUT) printf("%s: timed out after %u attempts", name, stats.attempts);
    else printf("%s: failed", name);
    printf(" (%" PRIu64 " ms waited, %" PRIu64 " ms in all; last rule %s)\n", stats.waited_ms, stats.elapsed_ms,
           stats.last_rule);
    return step.end == RP_RUN_END_SUCCEEDED ? 0 : 1;
}

#define KV_GET(timeout) \
    "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": " timeout "}"

int main(void) {
    /* No policy: RFC 0049's defaults (best effort, 1..500 ms exponential). */
    int first = get_with_retries("flaky get", fails_twice, KV_GET("2500"));
    int second = get_with_retries("locked get", always_locked, KV_GET("40"));
    /* The first succeeds; the second must stop at its timeout (the machine never waits past it). */
    return first == 0 && second == 1 ? 0 : 1;
}

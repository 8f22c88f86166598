/* A complete retry loop around a KV get with retrypolicy's C API: the caller measures time with
 * clock_gettime(CLOCK_MONOTONIC), classifies each failure, asks rp_decide what to do, logs the
 * decision (RFC 0049 asks for it), and sleeps with nanosleep. Built and run by `make test`.
 *
 *   cc -std=c11 retry_loop.c -I bindings-c/include -L bindings-c/build/lib -lretrypolicy
 *
 * The "server" is simulated: the first run answers TEMPORARY_FAILURE (0x86) twice, then succeeds;
 * the second always answers LOCKED (0x09) and meets its 40 ms timeout. */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <retrypolicy.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define MAX_ATTEMPTS 64

/* Milliseconds on the monotonic clock (never the wall clock: it can jump). */
static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Sleeps `ms` milliseconds, resuming after a signal interrupts the sleep. */
static void sleep_ms(uint64_t ms) {
    struct timespec left = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&left, &left) == -1 && errno == EINTR) {
    }
}

/* The simulated KV get: the KV status of attempt `n` (0 = success). */
typedef uint16_t (*kv_get_fn)(uint32_t n);
static uint16_t fails_twice(uint32_t n) { return n < 2 ? 0x86 : 0x00; }
static uint16_t always_locked(uint32_t n) { (void)n; return 0x09; }

/* Runs `get` until it succeeds, the policy says stop, or the timeout passes; 0 on success. */
static int get_with_retries(const char *name, kv_get_fn get, uint64_t timeout_ms, const rp_policy *policy) {
    rp_reason reasons[MAX_ATTEMPTS];
    rp_request request = {0};
    request.operation.service = RP_SERVICE_KV;
    request.operation.kv_operation = RP_KV_OPERATION_GET;
    request.timeout_ms = timeout_ms;
    request.previous_reasons = reasons;
    const uint64_t start = now_ms();
    for (uint32_t attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        uint16_t status = get(attempt);
        if (status == 0) {
            printf("%s: succeeded after %u retries\n", name, attempt);
            return 0;
        }
        rp_classification c;
        if (rp_classify_kv(RP_KV_OPERATION_GET, status, NULL, policy, &c) != RP_RESULT_OK || !c.has_reason) {
            printf("%s: status 0x%02x is not retried: fail\n", name, status);
            return 1;
        }
        request.attempts = attempt;
        request.elapsed_ms = now_ms() - start;
        request.previous_reasons_len = attempt;
        rp_decision d;
        if (rp_decide(&request, c.reason, policy, NULL, NULL, &d) != RP_RESULT_OK) {
            fprintf(stderr, "%s: %s\n", name, rp_last_error_message());
            return 2;
        }
        char *line = NULL;
        if (rp_decision_format(&d, &line) == RP_RESULT_OK) printf("%s: attempt %u: %s\n", name, attempt + 1, line);
        rp_string_free(line);
        if (!d.retry) return 1;
        sleep_ms(d.delay_ms);
        if (d.then_cancel) {
            printf("%s: timed out after %u attempts\n", name, attempt + 1);
            return 1;
        }
        reasons[attempt] = c.reason;
    }
    return 1;
}

int main(void) {
    rp_policy *policy = NULL; /* NULL: RFC 0049's defaults (best effort, 1..500 ms exponential) */
    int first = get_with_retries("flaky get", fails_twice, 2500, policy);
    int second = get_with_retries("locked get", always_locked, 40, policy);
    /* The first succeeds; the second must stop at its timeout (never sleep past it). */
    return first == 0 && second == 1 ? 0 : 1;
}

/*
 * Thread safety, as the header states it: several pthreads decide at once with one shared policy
 * handle, host strategies with per-thread user_data, and per-thread last-error details. Each
 * thread compares every answer with the one computed on the main thread before they started.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8
#define ROUNDS 2000
#define CASES 6

static const rp_reason REASONS[CASES] = {
    RP_REASON_KV_LOCKED,     RP_REASON_KV_NOT_MY_VBUCKET, RP_REASON_KV_TEMPORARY_FAILURE,
    RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT /* on an upsert: not retried */,
    RP_REASON_UNKNOWN,       RP_REASON_QUERY_INDEX_NOT_FOUND,
};

static rp_request request_for(int i) {
    rp_request r;
    memset(&r, 0, sizeof r);
    r.operation.service = RP_SERVICE_KV;
    r.operation.kv_operation = (i % 2) ? RP_KV_OPERATION_UPSERT : RP_KV_OPERATION_GET;
    r.attempts = (uint32_t)i;
    r.elapsed_ms = 100u * (uint64_t)i;
    r.timeout_ms = 2500;
    r.has_random = true;
    r.random = 0.25 * (i % 4);
    return r;
}

typedef struct {
    const rp_policy *policy;
    const rp_decision *expected; /* CASES entries */
    int index;
    long mismatches;
    long strategy_calls;
    long expected_strategy_calls;
    char error_detail[256];
} worker;

static pthread_barrier_t start;

/* Field by field: the struct has padding, which nobody promises to write. */
static bool same_decision(const rp_decision *a, const rp_decision *b) {
    return a->retry == b->retry && a->delay_ms == b->delay_ms && a->capped == b->capped &&
           a->then_cancel == b->then_cancel && a->cause == b->cause && a->rule == b->rule &&
           a->reason == b->reason && a->attempts == b->attempts && a->idempotent == b->idempotent;
}

static bool counting_strategy(void *user_data, const rp_request *request, rp_reason reason, uint64_t *delay_ms) {
    worker *w = user_data;
    (void)reason;
    w->strategy_calls++;
    *delay_ms = 7 + request->attempts;
    return true;
}

static void *run(void *arg) {
    worker *w = arg;
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CASES; i++) {
            rp_request r = request_for(i);
            rp_decision d;
            if (rp_decide(&r, REASONS[i], w->policy, NULL, NULL, &d) != RP_RESULT_OK ||
                !same_decision(&d, &w->expected[i]))
                w->mismatches++;
            bool decided = false;
            if (rp_decide_before_strategy(&r, REASONS[i], w->policy, &decided, &d) != RP_RESULT_OK)
                w->mismatches++;
            if (!decided) w->expected_strategy_calls++;
            if (rp_decide(&r, REASONS[i], w->policy, counting_strategy, w, &d) != RP_RESULT_OK)
                w->mismatches++;
        }
        /* Each thread fails in its own way; its detail must stay its own. */
        if (rp_enum_from_name(RP_ENUM_REASON, w->index % 2 ? "ODD_THREAD" : "EVEN_THREAD", &(rp_reason){0}) !=
            RP_RESULT_UNKNOWN_REASON)
            w->mismatches++;
    }
    snprintf(w->error_detail, sizeof w->error_detail, "%s", rp_last_error_message());
    return NULL;
}

static void threads_decide_at_once_with_a_shared_policy(void **state) {
    (void)state;
    rp_policy *policy = NULL;
    const char *json = "{\"jitter\": \"full\", \"backoff\": {\"kind\": \"exponential\", \"max_ms\": 300}}";
    assert_int_equal(rp_policy_from_json(json, strlen(json), &policy), RP_RESULT_OK);
    rp_decision expected[CASES];
    for (int i = 0; i < CASES; i++) {
        rp_request r = request_for(i);
        assert_int_equal(rp_decide(&r, REASONS[i], policy, NULL, NULL, &expected[i]), RP_RESULT_OK);
    }
    /* The cases cover retries and non-retries. */
    assert_true(expected[0].retry);
    assert_false(expected[3].retry);
    assert_false(expected[4].retry);

    pthread_t threads[THREADS];
    worker workers[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){policy, expected, t, 0, 0, 0, {0}};
        assert_int_equal(pthread_create(&threads[t], NULL, run, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(threads[t], NULL), 0);
    pthread_barrier_destroy(&start);
    rp_policy_free(policy);

    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(workers[t].mismatches, 0);
        assert_true(workers[t].strategy_calls > 0);
        assert_int_equal(workers[t].strategy_calls, workers[t].expected_strategy_calls);
        const char *mine = t % 2 ? "ODD_THREAD" : "EVEN_THREAD";
        if (!strstr(workers[t].error_detail, mine))
            fail_msg("thread %d sees another thread's error: %s", t, workers[t].error_detail);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_decide_at_once_with_a_shared_policy),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, threads", tests, NULL, NULL);
}

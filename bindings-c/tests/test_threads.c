/*
 * Thread safety, as the header states it: several pthreads decide at once with one shared policy
 * handle, host strategies with per-thread user_data, and per-thread last-error details. Each
 * thread compares every answer with the one computed on the main thread before they started.
 * Shared rp_budget and rp_breaker handles (locked inside) give out exactly their quota of retries
 * and exactly one canary between all threads.
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

/* ---- shared budgets and breakers --------------------------------------------------------- */

#define ASKS 200 /* per thread: together far more than any quota below */

typedef struct {
    rp_budget *budget;
    rp_breaker *breaker;
    long permitted, canaries, errors;
} asker;

static void *ask_budget(void *arg) {
    asker *a = arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < ASKS; i++) {
        rp_budget_verdict v;
        if (rp_budget_try_retry(a->budget, 0, RP_RETRY_CAUSE_ERROR, &v) != RP_RESULT_OK) a->errors++;
        else a->permitted += v.permitted;
        /* Reading alongside: a snapshot taken while others withdraw is still whole. */
        char *snapshot = NULL;
        if (i % 50 == 0 && rp_budget_snapshot(a->budget, &snapshot) != RP_RESULT_OK) a->errors++;
        rp_string_free(snapshot);
    }
    return NULL;
}

static void *ask_breaker(void *arg) {
    asker *a = arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < ASKS; i++) {
        rp_breaker_verdict v;
        if (rp_breaker_permit(a->breaker, 6000 + (uint64_t)i, &v) != RP_RESULT_OK) {
            a->errors++;
            continue;
        }
        a->permitted += v.permitted;
        a->canaries += v.canary;
    }
    return NULL;
}

/* THREADS threads running `body` on one shared budget and breaker; the totals over all of them. */
static asker ask_together(void *(*body)(void *), rp_budget *budget, rp_breaker *breaker) {
    pthread_t threads[THREADS];
    asker askers[THREADS], total = {budget, breaker, 0, 0, 0};
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int t = 0; t < THREADS; t++) {
        askers[t] = (asker){budget, breaker, 0, 0, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, body, &askers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        total.permitted += askers[t].permitted;
        total.canaries += askers[t].canaries;
        total.errors += askers[t].errors;
    }
    pthread_barrier_destroy(&start);
    return total;
}

/* The AWS quota of 500 tokens at 5 per retry gives 100 retries in all, however the threads race. */
static void threads_sharing_a_budget_get_exactly_its_quota(void **state) {
    (void)state;
    const char *json = "{\"kind\": \"retry_quota\", \"capacity\": 500, \"retry_cost\": 5}";
    rp_budget *budget = NULL;
    assert_int_equal(rp_budget_from_json(json, strlen(json), &budget), RP_RESULT_OK);
    asker total = ask_together(ask_budget, budget, NULL);
    assert_int_equal(total.errors, 0);
    assert_int_equal(total.permitted, 500 / 5);
    rp_budget_free(budget);
}

/* Couchbase's defaults (20 outcomes, 5 s sleep): after a trip, threads asking at once past the
 * sleep window let exactly one canary through between them. */
static void threads_sharing_a_breaker_let_one_canary_through(void **state) {
    (void)state;
    rp_breaker *breaker = NULL;
    assert_int_equal(rp_breaker_from_json("{}", 2, &breaker), RP_RESULT_OK);
    for (int i = 0; i < 20; i++) assert_int_equal(rp_breaker_record(breaker, 0, RP_BREAKER_OUTCOME_FAILURE), RP_RESULT_OK);
    asker total = ask_together(ask_breaker, NULL, breaker);
    assert_int_equal(total.errors, 0);
    assert_int_equal(total.canaries, 1);
    assert_int_equal(total.permitted, 1);
    rp_breaker_free(breaker);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_decide_at_once_with_a_shared_policy),
        cmocka_unit_test(threads_sharing_a_budget_get_exactly_its_quota),
        cmocka_unit_test(threads_sharing_a_breaker_let_one_canary_through),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, threads", tests, NULL, NULL);
}

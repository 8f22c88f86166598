/*
 * Thread safety, as the header states it: several pthreads decide at once with one shared policy
 * handle, host strategies with per-thread user_data, and per-thread last-error details. Each
 * thread compares every answer with the one computed on the main thread before they started.
 * Shared rp_budget and rp_breaker handles (locked inside) give out exactly their quota of retries
 * and exactly one canary between all threads; a shared breaker's state-change callback hears every
 * change exactly once, on the thread that made it, and may call the breaker.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <retrypolicy.h>
#include <stdatomic.h>
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

/* ---- a shared breaker's state-change callback -------------------------------------------- */

#define CHANGE_ROUNDS 500
#define CHANGE_RULES 6

/* What the callback heard from every thread: counts by rule, and anything that was wrong. */
typedef struct {
    rp_breaker *breaker;
    atomic_ullong clock; /* a shared virtual clock: each call takes the next ms */
    atomic_long by_rule[CHANGE_RULES];
    atomic_long illegal;   /* a change whose states do not match its rule */
    atomic_long elsewhere; /* heard outside a call of the hearing thread */
    atomic_long errors;    /* a call failed, in a worker or in the callback */
} changes_heard;

/* Whether this thread is inside a breaker call of its own (the callback must run only then). */
static _Thread_local int in_call;

static void count_change(void *user_data, rp_breaker *breaker, rp_breaker_change c) {
    changes_heard *h = user_data;
    static const rp_breaker_state FROM[CHANGE_RULES] = {
        RP_BREAKER_STATE_CLOSED, RP_BREAKER_STATE_OPEN, RP_BREAKER_STATE_HALF_OPEN,
        RP_BREAKER_STATE_HALF_OPEN, RP_BREAKER_STATE_HALF_OPEN, RP_BREAKER_STATE_HALF_OPEN};
    static const rp_breaker_state TO[CHANGE_RULES] = {
        RP_BREAKER_STATE_OPEN, RP_BREAKER_STATE_HALF_OPEN, RP_BREAKER_STATE_CLOSED,
        RP_BREAKER_STATE_OPEN, RP_BREAKER_STATE_OPEN, RP_BREAKER_STATE_OPEN};
    if (!in_call) atomic_fetch_add(&h->elsewhere, 1);
    if (c.rule >= CHANGE_RULES || c.from != FROM[c.rule] || c.to != TO[c.rule] || breaker != h->breaker) {
        atomic_fetch_add(&h->illegal, 1);
        return;
    }
    atomic_fetch_add(&h->by_rule[c.rule], 1);
    /* The lock is not held: the callback may read the breaker (it would deadlock otherwise). */
    rp_breaker_state now;
    if (rp_breaker_state_at(breaker, atomic_load(&h->clock), &now) != RP_RESULT_OK) atomic_fetch_add(&h->errors, 1);
}

/* One thread of the test: the shared record and the thread's number. */
typedef struct {
    changes_heard *heard;
    int id;
} changer;

/* Asks, and records each permitted request: one in three of a thread's requests sent succeeds
 * (counted by request, not by round: a thread's rounds between two canaries are as many each time,
 * and would give every canary the same outcome). */
static void *change_states(void *arg) {
    const changer *c = arg;
    changes_heard *h = c->heard;
    int sent = c->id;
    pthread_barrier_wait(&start);
    for (int i = 0; i < CHANGE_ROUNDS; i++) {
        rp_breaker_verdict v;
        rp_breaker_outcome outcome = sent % 3 == 0 ? RP_BREAKER_OUTCOME_SUCCESS : RP_BREAKER_OUTCOME_FAILURE;
        in_call = 1;
        if (rp_breaker_permit(h->breaker, atomic_fetch_add(&h->clock, 1), &v) != RP_RESULT_OK ||
            (v.permitted && rp_breaker_record(h->breaker, atomic_fetch_add(&h->clock, 1), outcome) != RP_RESULT_OK))
            atomic_fetch_add(&h->errors, 1);
        in_call = 0;
        sent += v.permitted;
    }
    return NULL;
}

/* THREADS threads ask a breaker (volume 2, 50 %, a 5 ms window, canaries never time out) and record
 * what they send. Every change reaches the callback once, on its own thread, with states that fit
 * its rule; counted over all threads, each state is entered as often as it is left, but for the
 * final one: trips = closes + (final state not closed), canaries = canaries answered + (final
 * state half-open). A change lost or heard twice breaks these counts. */
static void threads_sharing_a_breaker_hear_every_change_once(void **state) {
    (void)state;
    const char *json = "{\"volume_threshold\": 2, \"error_threshold_percentage\": 50, \"sleep_window_ms\": 5, "
                       "\"rolling_window_ms\": 1000, \"canary_timeout_ms\": 1000000000}";
    changes_heard h;
    memset(&h, 0, sizeof h);
    assert_int_equal(rp_breaker_from_json(json, strlen(json), &h.breaker), RP_RESULT_OK);
    assert_int_equal(rp_breaker_on_change(h.breaker, count_change, &h), RP_RESULT_OK);
    pthread_t threads[THREADS];
    changer changers[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int t = 0; t < THREADS; t++) {
        changers[t] = (changer){&h, t};
        assert_int_equal(pthread_create(&threads[t], NULL, change_states, &changers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(threads[t], NULL), 0);
    pthread_barrier_destroy(&start);
    rp_breaker_state final;
    assert_int_equal(rp_breaker_state_at(h.breaker, atomic_load(&h.clock), &final), RP_RESULT_OK);
    long tripped = h.by_rule[RP_BREAKER_CHANGE_TRIPPED], canaries = h.by_rule[RP_BREAKER_CHANGE_CANARY];
    long succeeded = h.by_rule[RP_BREAKER_CHANGE_CANARY_SUCCEEDED], failed = h.by_rule[RP_BREAKER_CHANGE_CANARY_FAILED];
    printf("breaker changes heard from %d threads: %ld trips, %ld canaries, %ld closes, %ld canaries failed\n", THREADS,
           tripped, canaries, succeeded, failed);
    assert_int_equal(h.errors, 0);
    assert_int_equal(h.illegal, 0);
    assert_int_equal(h.elsewhere, 0);
    assert_int_equal(h.by_rule[RP_BREAKER_CHANGE_CANARY_TIMED_OUT], 0);
    assert_int_equal(h.by_rule[RP_BREAKER_CHANGE_CANARY_RELEASED], 0);
    assert_true(tripped > 1 && succeeded > 0); /* round the circuit, more than once */
    assert_int_equal(tripped, succeeded + (final != RP_BREAKER_STATE_CLOSED));
    assert_int_equal(canaries, succeeded + failed + (final == RP_BREAKER_STATE_HALF_OPEN));
    rp_breaker_free(h.breaker);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_decide_at_once_with_a_shared_policy),
        cmocka_unit_test(threads_sharing_a_budget_get_exactly_its_quota),
        cmocka_unit_test(threads_sharing_a_breaker_let_one_canary_through),
        cmocka_unit_test(threads_sharing_a_breaker_hear_every_change_once),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, threads", tests, NULL, NULL);
}

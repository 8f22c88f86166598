/*
 * cmocka tests of handle misuse (issue 31 item 12): every handle (rp_budget, rp_breaker, rp_run,
 * rp_policy, rp_error_map) is checked against the library's registry of live handles, so a use
 * after free, a double free, a handle of another type or a pointer the library never returned is
 * RP_RESULT_INVALID_HANDLE naming the argument (NULL stays RP_RESULT_NULL_POINTER), never a hang,
 * an abort or a silent success. Run under valgrind and ASan as the other tests.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <retrypolicy.h>
#include <sched.h>
#include <string.h>

#define OK(call) assert_int_equal((call), RP_RESULT_OK)
#define INVALID(call, field)                                        \
    do {                                                            \
        assert_int_equal((call), RP_RESULT_INVALID_HANDLE);         \
        assert_string_equal(rp_last_error_field(), (field));        \
    } while (0)

static const char KV_GET[] =
    "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 2500}";
static const char BUCKET[] = "{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}";

static rp_budget *new_budget(void) {
    rp_budget *b = NULL;
    OK(rp_budget_from_json(BUCKET, strlen(BUCKET), &b));
    return b;
}

static rp_breaker *new_breaker(void) {
    rp_breaker *b = NULL;
    OK(rp_breaker_from_json("{}", 2, &b));
    return b;
}

static rp_run *new_run(rp_budget *budget, rp_breaker *breaker) {
    rp_run *run = NULL;
    OK(rp_run_new(KV_GET, strlen(KV_GET), budget, breaker, &run));
    return run;
}

/* Every budget call on a freed budget is an error; the out-parameter is left alone. */
static void budget_used_after_free(void **state) {
    (void)state;
    rp_budget *b = new_budget();
    rp_budget_free(b);
    rp_budget_verdict v;
    memset(&v, 0xab, sizeof v);
    INVALID(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &v), "budget");
    assert_int_equal(v.balance, 0xababababababababull);
    assert_non_null(strstr(rp_last_error_message(), "budget: not a live rp_budget"));
    INVALID(rp_budget_permit(b, 0, RP_RETRY_CAUSE_ERROR, &v), "budget");
    INVALID(rp_budget_record(b, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE), "budget");
    char *json = NULL;
    INVALID(rp_budget_snapshot(b, &json), "budget");
    INVALID(rp_budget_document(b, &json), "budget");
    assert_null(json);
    rp_run *run = NULL;
    INVALID(rp_run_new(KV_GET, strlen(KV_GET), b, NULL, &run), "budget");
    assert_null(run);
}

/* The reported hang: a breaker used after rp_breaker_free blocked forever on its freed lock. */
static void breaker_used_after_free(void **state) {
    (void)state;
    rp_breaker *b = new_breaker();
    rp_breaker_free(b);
    rp_breaker_verdict v;
    INVALID(rp_breaker_permit(b, 0, &v), "breaker");
    assert_non_null(strstr(rp_last_error_message(), "breaker: not a live rp_breaker"));
    INVALID(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE), "breaker");
    rp_breaker_state s;
    INVALID(rp_breaker_state_at(b, 0, &s), "breaker");
    char *json = NULL;
    INVALID(rp_breaker_snapshot(b, &json), "breaker");
    INVALID(rp_breaker_document(b, &json), "breaker");
    assert_null(json);
    rp_run *run = NULL;
    INVALID(rp_run_new(KV_GET, strlen(KV_GET), NULL, b, &run), "breaker");
    assert_null(run);
}

static void run_used_after_free(void **state) {
    (void)state;
    rp_run *run = new_run(NULL, NULL);
    rp_run_free(run);
    rp_run_step step;
    INVALID(rp_run_start(run, 0, NAN, &step), "run");
    rp_outcome o;
    memset(&o, 0, sizeof o);
    o.kind = RP_OUTCOME_SUCCESS;
    INVALID(rp_run_attempt_ended(run, &o, 1, NAN, -1, &step), "run");
    INVALID(rp_run_wait_ended(run, 1, NAN, &step), "run");
    INVALID(rp_run_cancel(run, 1, &step), "run");
    uint32_t sent = 77;
    INVALID(rp_run_attempts_sent(run, &sent), "run");
    assert_int_equal(sent, 77);
}

static void policy_and_error_map_used_after_free(void **state) {
    (void)state;
    rp_policy *p = NULL;
    OK(rp_policy_from_json("{}", 2, &p));
    rp_policy_free(p);
    rp_request req;
    memset(&req, 0, sizeof req);
    rp_decision d;
    INVALID(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d), "policy");
    assert_non_null(strstr(rp_last_error_message(), "policy: not a live rp_policy"));
    rp_error_map *map = NULL;
    const char doc[] = "{\"version\": 1, \"revision\": 1, \"errors\": {}}";
    OK(rp_error_map_from_json(doc, strlen(doc), &map));
    rp_error_map_free(map);
    rp_classification c;
    INVALID(rp_classify_kv(RP_KV_OPERATION_GET, 0x7ff, map, NULL, &c), "error_map");
}

/* A double free frees nothing (glibc aborted on it) and says so in the thread's last error. */
static void double_free_is_reported_not_an_abort(void **state) {
    (void)state;
    rp_budget *b = new_budget();
    rp_breaker *k = new_breaker();
    rp_run *run = new_run(NULL, NULL);
    rp_policy *p = NULL;
    OK(rp_policy_from_json("{}", 2, &p));
    rp_budget_free(b);
    rp_budget_free(b);
    assert_string_equal(rp_last_error_field(), "budget");
    assert_non_null(strstr(rp_last_error_message(), "not a live rp_budget"));
    rp_breaker_free(k);
    rp_breaker_free(k);
    assert_string_equal(rp_last_error_field(), "breaker");
    rp_run_free(run);
    rp_run_free(run);
    assert_string_equal(rp_last_error_field(), "run");
    rp_policy_free(p);
    rp_policy_free(p);
    assert_string_equal(rp_last_error_field(), "policy");
    /* NULL stays a silent no-op. */
    rp_budget_free(NULL);
    rp_breaker_free(NULL);
    rp_run_free(NULL);
}

/* The reported silent success: a budget handle passed as a breaker. Each wrong type is refused,
 * and the handle stays intact and usable as what it is. */
static void a_handle_of_another_type_is_refused(void **state) {
    (void)state;
    rp_budget *b = new_budget();
    rp_breaker *k = new_breaker();
    rp_run *run = new_run(NULL, NULL);
    rp_breaker_verdict kv;
    INVALID(rp_breaker_permit((rp_breaker *)b, 0, &kv), "breaker");
    assert_string_equal(rp_last_error_message(), "breaker: an rp_budget, not an rp_breaker");
    INVALID(rp_breaker_record((rp_breaker *)run, 0, RP_BREAKER_OUTCOME_SUCCESS), "breaker");
    assert_string_equal(rp_last_error_message(), "breaker: an rp_run, not an rp_breaker");
    rp_budget_verdict bv;
    INVALID(rp_budget_try_retry((rp_budget *)k, 0, RP_RETRY_CAUSE_ERROR, &bv), "budget");
    assert_string_equal(rp_last_error_message(), "budget: an rp_breaker, not an rp_budget");
    rp_run_step step;
    INVALID(rp_run_start((rp_run *)b, 0, NAN, &step), "run");
    assert_string_equal(rp_last_error_message(), "run: an rp_budget, not an rp_run");
    rp_run *swapped = NULL;
    INVALID(rp_run_new(KV_GET, strlen(KV_GET), (rp_budget *)k, (rp_breaker *)b, &swapped), "budget");
    assert_null(swapped);
    rp_request req;
    memset(&req, 0, sizeof req);
    rp_decision d;
    INVALID(rp_decide(&req, RP_REASON_KV_LOCKED, (rp_policy *)b, NULL, NULL, &d), "policy");
    /* Freeing through the wrong type frees nothing: each handle still works. */
    rp_breaker_free((rp_breaker *)b);
    assert_string_equal(rp_last_error_message(), "breaker: an rp_budget, not an rp_breaker");
    rp_budget_free((rp_budget *)run);
    rp_run_free((rp_run *)k);
    OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &bv));
    assert_true(bv.permitted);
    OK(rp_breaker_permit(k, 0, &kv));
    assert_true(kv.permitted);
    OK(rp_run_start(run, 0, NAN, &step));
    assert_int_equal(step.action, RP_RUN_SEND);
    rp_run_free(run);
    rp_breaker_free(k);
    rp_budget_free(b);
}

/* A pointer the library never returned is refused without being read (ASan and valgrind would
 * report a read of `bogus` past its 1 byte, or of the unmapped address). */
static void a_pointer_the_library_never_returned_is_not_read(void **state) {
    (void)state;
    char bogus = 0;
    rp_budget_verdict v;
    INVALID(rp_budget_permit((const rp_budget *)(void *)&bogus, 0, RP_RETRY_CAUSE_ERROR, &v), "budget");
    rp_breaker_verdict kv;
    INVALID(rp_breaker_permit((rp_breaker *)(uintptr_t)0x10, 0, &kv), "breaker");
    rp_budget_free((rp_budget *)(void *)&bogus);
    assert_string_equal(rp_last_error_field(), "budget");
}

static void null_handles_stay_null_pointer(void **state) {
    (void)state;
    rp_budget_verdict v;
    assert_int_equal(rp_budget_permit(NULL, 0, RP_RETRY_CAUSE_ERROR, &v), RP_RESULT_NULL_POINTER);
    assert_string_equal(rp_last_error_field(), "budget");
    rp_breaker_verdict kv;
    assert_int_equal(rp_breaker_permit(NULL, 0, &kv), RP_RESULT_NULL_POINTER);
    assert_string_equal(rp_last_error_field(), "breaker");
    rp_run_step step;
    assert_int_equal(rp_run_start(NULL, 0, NAN, &step), RP_RESULT_NULL_POINTER);
    assert_string_equal(rp_last_error_field(), "run");
}

/* A run keeps its budget and breaker alive: freeing them first is no longer a use after free. */
static void a_run_keeps_its_budget_and_breaker(void **state) {
    (void)state;
    rp_budget *b = new_budget();
    rp_breaker *k = new_breaker();
    rp_run *run = new_run(b, k);
    rp_budget_free(b);
    rp_breaker_free(k);
    rp_run_step step;
    OK(rp_run_start(run, 0, NAN, &step));
    assert_int_equal(step.action, RP_RUN_SEND);
    assert_true(step.has_breaker);
    rp_outcome o;
    memset(&o, 0, sizeof o);
    o.kind = RP_OUTCOME_KV;
    o.status = 0x09; /* locked: retried */
    OK(rp_run_attempt_ended(run, &o, 10, 0.5, -1, &step));
    assert_int_equal(step.action, RP_RUN_WAIT);
    assert_true(step.has_budget);
    /* The handles themselves are gone for the caller. */
    rp_budget_verdict v;
    INVALID(rp_budget_permit(b, 0, RP_RETRY_CAUSE_ERROR, &v), "budget");
    rp_run_free(run);
}

/* A KV get, 1 attempt in, 100 ms into a 2.5 s timeout. */
static rp_request kv_get(void) {
    rp_request req;
    memset(&req, 0, sizeof req);
    req.operation.service = RP_SERVICE_KV;
    req.operation.kv_operation = RP_KV_OPERATION_GET;
    req.attempts = 1;
    req.elapsed_ms = 100;
    req.timeout_ms = 2500;
    return req;
}

/* Each thread keeps the handle of each type it used last (src/handle.rs): a handle used, then
 * freed on the same thread, is refused all the same (this is the cached one, not a cold lookup). */
static void a_handle_used_then_freed_is_refused(void **state) {
    (void)state;
    rp_request req = kv_get();
    rp_decision d;
    rp_policy *p = NULL;
    OK(rp_policy_from_json("{}", 2, &p));
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d));
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d));
    rp_policy_free(p);
    INVALID(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d), "policy");

    rp_error_map *map = NULL;
    const char doc[] = "{\"version\": 1, \"revision\": 1, \"errors\": {}}";
    OK(rp_error_map_from_json(doc, strlen(doc), &map));
    rp_classification c;
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0x09, map, NULL, &c));
    rp_error_map_free(map);
    INVALID(rp_classify_kv(RP_KV_OPERATION_GET, 0x09, map, NULL, &c), "error_map");

    rp_budget *b = new_budget();
    rp_breaker *k = new_breaker();
    rp_budget_verdict bv;
    rp_breaker_verdict kv;
    OK(rp_budget_permit(b, 0, RP_RETRY_CAUSE_ERROR, &bv));
    OK(rp_breaker_permit(k, 0, &kv));
    rp_run *run = new_run(b, k);
    uint32_t sent = 0;
    OK(rp_run_attempts_sent(run, &sent));
    rp_budget_free(b);
    rp_breaker_free(k);
    rp_run_free(run);
    INVALID(rp_budget_permit(b, 0, RP_RETRY_CAUSE_ERROR, &bv), "budget");
    INVALID(rp_breaker_permit(k, 0, &kv), "breaker");
    INVALID(rp_run_attempts_sent(run, &sent), "run");
}

typedef struct {
    rp_policy *policy;
} freeing_thread;

static void *free_policy(void *arg) {
    rp_policy_free(((freeing_thread *)arg)->policy);
    return NULL;
}

/* A handle this thread used (so cached here) and another thread freed is refused here. */
static void a_handle_freed_by_another_thread_is_refused(void **state) {
    (void)state;
    rp_request req = kv_get();
    rp_decision d;
    rp_policy *p = NULL;
    OK(rp_policy_from_json("{}", 2, &p));
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d));
    freeing_thread t = {p};
    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, free_policy, &t), 0);
    assert_int_equal(pthread_join(other, NULL), 0);
    INVALID(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d), "policy");
    assert_non_null(strstr(rp_last_error_message(), "policy: not a live rp_policy"));
}

typedef struct {
    rp_policy *outer;
    rp_policy *other;
    int calls;
} reentrant_state;

/* A host strategy that frees the policy its rp_decide is using, then decides with another one. */
static bool free_during_decide(void *user_data, const rp_request *request, rp_reason reason, uint64_t *delay_ms) {
    reentrant_state *s = user_data;
    s->calls++;
    rp_policy_free(s->outer);
    rp_decision inner;
    if (rp_decide(request, reason, s->other, NULL, NULL, &inner) != RP_RESULT_OK) return false;
    if (rp_decide(request, reason, s->outer, NULL, NULL, &inner) != RP_RESULT_INVALID_HANDLE) return false;
    *delay_ms = 42;
    return true;
}

/* A policy freed during the call using it (from its own host strategy) stays readable until that
 * call returns (ASan and valgrind would report a read of freed memory), and is refused after. */
static void a_handle_freed_during_its_call_lives_until_the_call_returns(void **state) {
    (void)state;
    rp_request req = kv_get();
    req.operation.kv_operation = RP_KV_OPERATION_UPSERT;
    rp_decision d;
    reentrant_state s = {NULL, NULL, 0};
    OK(rp_policy_from_json("{}", 2, &s.outer));
    OK(rp_policy_from_json("{}", 2, &s.other));
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, s.outer, NULL, NULL, &d)); /* cached on this thread */
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, s.outer, free_during_decide, &s, &d));
    assert_int_equal(s.calls, 1);
    assert_true(d.retry);
    assert_int_equal(d.delay_ms, 42);
    assert_int_equal(d.rule, RP_RULE_CUSTOM_STRATEGY);
    INVALID(rp_decide(&req, RP_REASON_KV_LOCKED, s.outer, NULL, NULL, &d), "policy");
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, s.other, NULL, NULL, &d));
    rp_policy_free(s.other);
}

#define RACERS 4

typedef struct {
    rp_policy *policy;
    pthread_barrier_t *start;
    long ok_calls;
    rp_result last;
} racer;

/* Decides with the shared policy until a call is refused; any other result ends the loop too. */
static void *decide_until_refused(void *arg) {
    racer *r = arg;
    rp_request req = kv_get();
    rp_decision d;
    pthread_barrier_wait(r->start);
    for (long i = 0; i < 100000000L; i++) {
        r->last = rp_decide(&req, RP_REASON_KV_LOCKED, r->policy, NULL, NULL, &d);
        if (r->last != RP_RESULT_OK) break;
        r->ok_calls++;
        sched_yield(); /* lets the freeing thread run soon under valgrind, which runs one thread at a time */
    }
    for (int i = 0; i < 100 && r->last == RP_RESULT_INVALID_HANDLE; i++) /* and stays refused */
        r->last = rp_decide(&req, RP_REASON_KV_LOCKED, r->policy, NULL, NULL, &d);
    return NULL;
}

/* A policy freed while other threads decide with it: each of their calls is either a decision or
 * RP_RESULT_INVALID_HANDLE, and once one is refused, every later one is (no thread keeps deciding
 * with a freed handle; ASan and valgrind check that nothing reads freed memory). */
static void a_handle_freed_while_other_threads_use_it(void **state) {
    (void)state;
    rp_policy *p = NULL;
    OK(rp_policy_from_json("{}", 2, &p));
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, RACERS + 1);
    racer racers[RACERS];
    pthread_t threads[RACERS];
    for (int i = 0; i < RACERS; i++) {
        racers[i] = (racer){p, &start, 0, RP_RESULT_OK};
        assert_int_equal(pthread_create(&threads[i], NULL, decide_until_refused, &racers[i]), 0);
    }
    pthread_barrier_wait(&start);
    rp_policy_free(p);
    for (int i = 0; i < RACERS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(racers[i].last, RP_RESULT_INVALID_HANDLE);
    }
    pthread_barrier_destroy(&start);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_used_after_free),
        cmocka_unit_test(breaker_used_after_free),
        cmocka_unit_test(run_used_after_free),
        cmocka_unit_test(policy_and_error_map_used_after_free),
        cmocka_unit_test(double_free_is_reported_not_an_abort),
        cmocka_unit_test(a_handle_of_another_type_is_refused),
        cmocka_unit_test(a_pointer_the_library_never_returned_is_not_read),
        cmocka_unit_test(null_handles_stay_null_pointer),
        cmocka_unit_test(a_run_keeps_its_budget_and_breaker),
        cmocka_unit_test(a_handle_used_then_freed_is_refused),
        cmocka_unit_test(a_handle_freed_by_another_thread_is_refused),
        cmocka_unit_test(a_handle_freed_during_its_call_lives_until_the_call_returns),
        cmocka_unit_test(a_handle_freed_while_other_threads_use_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

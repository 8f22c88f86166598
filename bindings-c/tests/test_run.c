/*
 * cmocka tests of the run handle (rp_run): the typed steps of a run driven by a simulated host
 * (clock passed in, no real time), a run sharing a budget and a breaker, and misuse (NULL handle,
 * NULL out-parameters, events out of order, bad outcomes), each a typed result naming the field
 * with the step output left untouched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <retrypolicy.h>
#include <string.h>

#define OK(call) assert_int_equal((call), RP_RESULT_OK)
#define FAILS(call, code, field)                             \
    do {                                                     \
        assert_int_equal((call), (code));                    \
        assert_string_equal(rp_last_error_field(), (field)); \
    } while (0)

static const char KV_GET[] =
    "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 2500}";

static rp_run *new_run(const char *config, rp_budget *budget, rp_breaker *breaker) {
    rp_run *run = NULL;
    OK(rp_run_new(config, strlen(config), budget, breaker, &run));
    assert_non_null(run);
    return run;
}

static rp_outcome kv(uint32_t status) {
    rp_outcome o;
    memset(&o, 0, sizeof o);
    o.kind = RP_OUTCOME_KV;
    o.status = status;
    return o;
}

static rp_outcome of_kind(rp_outcome_kind kind) {
    rp_outcome o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.sent = -1;
    return o;
}

/* A KV get: 0x86 at 10 ms, a wait of 1 ms (best effort's first), then success; every field typed. */
static void a_kv_run_is_send_wait_send_done(void **state) {
    (void)state;
    rp_run *run = new_run(KV_GET, NULL, NULL);
    rp_run_step s;
    OK(rp_run_start(run, 1000.0, NAN, &s));
    assert_int_equal(s.action, RP_RUN_SEND);
    assert_int_equal(s.attempt, 1);
    assert_int_equal(s.timeout_ms, 2500);
    assert_int_equal(s.end, RP_RUN_END_NONE);
    assert_string_equal(s.rule, "first_attempt");
    assert_false(s.has_reason);
    assert_false(s.has_decision);
    assert_int_equal(s.retry_after_ms, -1);
    const char *first_rule = s.rule;

    rp_outcome o = kv(0x86);
    OK(rp_run_attempt_ended(run, &o, 1010.0, 0.5, -1, &s));
    assert_int_equal(s.action, RP_RUN_WAIT);
    assert_int_equal(s.attempt, 2);
    assert_int_equal(s.delay_ms, 1);
    assert_int_equal(s.elapsed_ms, 10);
    assert_true(s.has_reason);
    assert_int_equal(s.reason, RP_REASON_KV_TEMPORARY_FAILURE);
    assert_string_equal(s.rule, "best_effort_backoff");
    assert_string_equal(s.section, "RFC 0049, Best Effort");
    assert_true(s.has_decision);
    assert_true(s.decision.retry);
    assert_int_equal(s.decision.delay_ms, 1);
    assert_int_equal(s.decision.rule, RP_RULE_BEST_EFFORT_BACKOFF);

    OK(rp_run_wait_ended(run, 1011.0, NAN, &s));
    assert_int_equal(s.action, RP_RUN_SEND);
    assert_int_equal(s.attempt, 2);
    assert_int_equal(s.timeout_ms, 2489);
    assert_string_equal(s.rule, "wait_over");

    o = of_kind(RP_OUTCOME_SUCCESS);
    OK(rp_run_attempt_ended(run, &o, 1020.5, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_DONE);
    assert_int_equal(s.end, RP_RUN_END_SUCCEEDED);
    assert_int_equal(s.attempt, 2);
    assert_int_equal(s.elapsed_ms, 21); /* 20.5 rounded up */
    assert_string_equal(s.rule, "attempt_succeeded");
    uint32_t sent = 0;
    OK(rp_run_attempts_sent(run, &sent));
    assert_int_equal(sent, 2);
    rp_run_free(run);

    /* Rule names are static and interned: the same text is the same pointer in another run. */
    run = new_run(KV_GET, NULL, NULL);
    OK(rp_run_start(run, 0.0, NAN, &s));
    assert_ptr_equal(s.rule, first_rule);
    rp_run_free(run);
}

/* then_cancel ends the run at once (done, timed out), with the capped decision; no wait step. */
static void then_cancel_ends_the_run_at_once(void **state) {
    (void)state;
    const char *config =
        "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 5}";
    rp_run *run = new_run(config, NULL, NULL);
    rp_run_step s;
    OK(rp_run_start(run, 0.0, NAN, &s));
    rp_outcome o = kv(0x09);
    OK(rp_run_attempt_ended(run, &o, 1.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_WAIT);
    OK(rp_run_wait_ended(run, 2.0, NAN, &s));
    OK(rp_run_attempt_ended(run, &o, 4.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_DONE);
    assert_int_equal(s.end, RP_RUN_END_TIMED_OUT);
    assert_true(s.has_decision);
    assert_true(s.decision.then_cancel);
    assert_int_equal(s.delay_ms, 0);
    rp_run_free(run);
}

/* HTTP: a 429 with Retry-After: 1 waits 1000 ms; the step says so. A POST is not resent after 503. */
static void http_retry_after_and_method(void **state) {
    (void)state;
    rp_run *run = new_run("{\"rules\": {\"http\": {\"method\": \"GET\"}}, \"timeout_ms\": 10000}", NULL, NULL);
    rp_run_step s;
    OK(rp_run_start(run, 0.0, NAN, &s));
    rp_outcome o = of_kind(RP_OUTCOME_HTTP);
    o.status = 429;
    o.retry_after = "1";
    OK(rp_run_attempt_ended(run, &o, 5.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_WAIT);
    assert_int_equal(s.delay_ms, 1000);
    assert_int_equal(s.retry_after_ms, 1000);
    assert_false(s.has_decision); /* HTTP decisions are not in C */
    rp_run_free(run);

    run = new_run("{\"rules\": {\"http\": {\"method\": \"POST\"}}, \"timeout_ms\": 10000}", NULL, NULL);
    OK(rp_run_start(run, 0.0, NAN, &s));
    o.status = 503;
    o.retry_after = NULL;
    OK(rp_run_attempt_ended(run, &o, 5.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_DONE);
    assert_int_equal(s.end, RP_RUN_END_GAVE_UP);
    rp_run_free(run);
}

/* A run with a shared budget and breaker: the breaker is asked before each attempt (its verdict
 * in the step), a refused attempt waits the breaker's window, and the budget is asked before the retry. */
static void a_run_asks_its_budget_and_breaker(void **state) {
    (void)state;
    const char *budget_doc = "{\"kind\": \"retry_quota\"}";
    const char *breaker_doc = "{\"volume_threshold\": 1, \"error_threshold_percentage\": 50, \"sleep_window_ms\": 100}";
    rp_budget *budget = NULL;
    rp_breaker *breaker = NULL;
    OK(rp_budget_from_json(budget_doc, strlen(budget_doc), &budget));
    OK(rp_breaker_from_json(breaker_doc, strlen(breaker_doc), &breaker));
    rp_run *run = new_run(
        "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 10000}",
        budget, breaker);
    rp_run_step s;
    OK(rp_run_start(run, 0.0, NAN, &s));
    assert_true(s.has_breaker);
    assert_true(s.breaker.permitted);
    assert_false(s.has_budget);
    rp_outcome o = kv(0x86);
    OK(rp_run_attempt_ended(run, &o, 10.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_WAIT);
    assert_true(s.has_budget);
    assert_true(s.budget.permitted);
    assert_int_equal(s.budget.balance, 495);
    OK(rp_run_wait_ended(run, 11.0, NAN, &s));
    assert_int_equal(s.action, RP_RUN_WAIT); /* the breaker is open: wait its window, never spin */
    assert_int_equal(s.delay_ms, 100);
    assert_string_equal(s.rule, "breaker_wait");
    assert_int_equal(s.reason, RP_REASON_CIRCUIT_BREAKER_OPEN);
    assert_true(s.has_breaker);
    assert_false(s.breaker.permitted);
    OK(rp_run_wait_ended(run, 111.0, NAN, &s));
    assert_int_equal(s.action, RP_RUN_SEND);
    assert_true(s.breaker.canary);
    o = of_kind(RP_OUTCOME_SUCCESS);
    OK(rp_run_attempt_ended(run, &o, 120.0, NAN, -1, &s));
    assert_int_equal(s.end, RP_RUN_END_SUCCEEDED);
    rp_run_free(run);
    char *snapshot = NULL;
    OK(rp_budget_snapshot(budget, &snapshot));
    assert_string_equal(snapshot, "{\"version\":1,\"kind\":\"retry_quota\",\"balance\":500}");
    rp_string_free(snapshot);
    rp_breaker_state st;
    OK(rp_breaker_state_at(breaker, 120, &st));
    assert_int_equal(st, RP_BREAKER_STATE_CLOSED);
    rp_breaker_free(breaker);
    rp_budget_free(budget);
}

/* The budget event a final failure is told as has a constant and a name. */
static void the_budget_has_a_final_event(void **state) {
    (void)state;
    const char *doc = "{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.5}";
    rp_budget *budget = NULL;
    OK(rp_budget_from_json(doc, strlen(doc), &budget));
    OK(rp_budget_record(budget, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
    OK(rp_budget_record(budget, 1, RP_BUDGET_EVENT_FINAL, RP_RETRY_CAUSE_NONE));
    char *snapshot = NULL;
    OK(rp_budget_snapshot(budget, &snapshot));
    assert_non_null(strstr(snapshot, "\"balance\":9500")); /* -1000 then +500: a final is a success */
    rp_string_free(snapshot);
    FAILS(rp_budget_record(budget, 2, RP_BUDGET_EVENT_FINAL, RP_RETRY_CAUSE_ERROR), RP_RESULT_UNKNOWN_FIELD, "cause");
    rp_budget_free(budget);
    const char *name = NULL;
    OK(rp_enum_name(RP_ENUM_BUDGET_EVENT, RP_BUDGET_EVENT_FINAL, &name));
    assert_string_equal(name, "final");
    OK(rp_enum_name(RP_ENUM_RUN_END, RP_RUN_END_GAVE_UP, &name));
    assert_string_equal(name, "gave_up");
    OK(rp_enum_name(RP_ENUM_RUN_ACTION, RP_RUN_WAIT, &name));
    assert_string_equal(name, "wait");
}

/* Misuse is a typed error naming the argument or field, and the step output is left untouched. */
static void misuse_is_a_typed_error(void **state) {
    (void)state;
    rp_run_step s, untouched;
    memset(&s, 0xab, sizeof s);
    memcpy(&untouched, &s, sizeof s);
    rp_outcome o = of_kind(RP_OUTCOME_SUCCESS);
    rp_run *run = NULL;

    /* NULL handle, NULL outputs, NULL config. */
    FAILS(rp_run_start(NULL, 0.0, NAN, &s), RP_RESULT_NULL_POINTER, "run");
    FAILS(rp_run_attempt_ended(NULL, &o, 0.0, NAN, -1, &s), RP_RESULT_NULL_POINTER, "run");
    FAILS(rp_run_wait_ended(NULL, 0.0, NAN, &s), RP_RESULT_NULL_POINTER, "run");
    FAILS(rp_run_cancel(NULL, 0.0, &s), RP_RESULT_NULL_POINTER, "run");
    FAILS(rp_run_new(NULL, 5, NULL, NULL, &run), RP_RESULT_NULL_POINTER, "config_json");
    FAILS(rp_run_new(KV_GET, strlen(KV_GET), NULL, NULL, NULL), RP_RESULT_NULL_POINTER, "run_out");
    assert_null(run);
    run = new_run(KV_GET, NULL, NULL);
    FAILS(rp_run_start(run, 0.0, NAN, NULL), RP_RESULT_NULL_POINTER, "step_out");
    FAILS(rp_run_attempts_sent(run, NULL), RP_RESULT_NULL_POINTER, "attempts_out");

    /* Bad configurations name their field. */
    rp_run *bad = NULL;
    const char *no_timeout = "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}}";
    FAILS(rp_run_new(no_timeout, strlen(no_timeout), NULL, NULL, &bad), RP_RESULT_MISSING_FIELD, "timeout_ms");
    const char *zero = "{\"rules\": {\"http\": {}}, \"max_attempts\": 0}";
    FAILS(rp_run_new(zero, strlen(zero), NULL, NULL, &bad), RP_RESULT_OUT_OF_RANGE, "max_attempts");
    FAILS(rp_run_new("{", 1, NULL, NULL, &bad), RP_RESULT_MALFORMED_JSON, "");
    assert_null(bad);

    /* Events out of order: attempt_ended and wait_ended before start. */
    FAILS(rp_run_attempt_ended(run, &o, 0.0, NAN, -1, &s), RP_RESULT_OUT_OF_RANGE, "event");
    FAILS(rp_run_wait_ended(run, 0.0, NAN, &s), RP_RESULT_OUT_OF_RANGE, "event");
    /* A clock that is no reading; a draw out of [0, 1). */
    FAILS(rp_run_start(run, INFINITY, NAN, &s), RP_RESULT_OUT_OF_RANGE, "now_ms");
    FAILS(rp_run_start(run, -1.0, NAN, &s), RP_RESULT_OUT_OF_RANGE, "now_ms");
    assert_memory_equal(&s, &untouched, sizeof s);

    rp_run_step ok;
    OK(rp_run_start(run, 0.0, NAN, &ok));
    FAILS(rp_run_start(run, 1.0, NAN, &s), RP_RESULT_OUT_OF_RANGE, "event");
    FAILS(rp_run_attempt_ended(run, &o, 1.0, 1.5, -1, &s), RP_RESULT_INVALID_RANDOM, "random");
    FAILS(rp_run_attempt_ended(run, NULL, 1.0, NAN, -1, &s), RP_RESULT_NULL_POINTER, "outcome");

    /* Bad outcomes name their field; the run is still waiting for the attempt. */
    rp_outcome bad_kind = of_kind(99);
    FAILS(rp_run_attempt_ended(run, &bad_kind, 1.0, NAN, -1, &s), RP_RESULT_INVALID_ENUM, "outcome.kind");
    rp_outcome bad_status = kv(70000);
    FAILS(rp_run_attempt_ended(run, &bad_status, 1.0, NAN, -1, &s), RP_RESULT_OUT_OF_RANGE, "outcome.status");
    rp_outcome bad_sent = of_kind(RP_OUTCOME_NETWORK);
    bad_sent.sent = 2;
    FAILS(rp_run_attempt_ended(run, &bad_sent, 1.0, NAN, -1, &s), RP_RESULT_OUT_OF_RANGE, "outcome.sent");
    rp_outcome bad_reason = of_kind(RP_OUTCOME_REASON);
    bad_reason.reason = 1000;
    FAILS(rp_run_attempt_ended(run, &bad_reason, 1.0, NAN, -1, &s), RP_RESULT_INVALID_ENUM, "outcome.reason");
    rp_outcome http = of_kind(RP_OUTCOME_HTTP);
    http.status = 999;
    FAILS(rp_run_attempt_ended(run, &http, 1.0, NAN, -1, &s), RP_RESULT_OUT_OF_RANGE, "outcome.status");
    http.status = 503;
    http.retry_after = "\xff";
    FAILS(rp_run_attempt_ended(run, &http, 1.0, NAN, -1, &s), RP_RESULT_INVALID_UTF8, "outcome.retry_after");
    rp_outcome mongo = of_kind(RP_OUTCOME_MONGODB);
    FAILS(rp_run_attempt_ended(run, &mongo, 1.0, NAN, -1, &s), RP_RESULT_NULL_POINTER, "outcome.mongodb_error");
    assert_memory_equal(&s, &untouched, sizeof s);

    /* Cancel ends it; nothing follows. */
    OK(rp_run_cancel(run, 2.0, &ok));
    assert_int_equal(ok.end, RP_RUN_END_CANCELLED);
    FAILS(rp_run_cancel(run, 3.0, &s), RP_RESULT_OUT_OF_RANGE, "event");
    FAILS(rp_run_attempt_ended(run, &o, 3.0, NAN, -1, &s), RP_RESULT_OUT_OF_RANGE, "event");
    rp_run_free(run);
    rp_run_free(NULL);
}

/* A MongoDB error crosses as its JSON; a bad one names its field under outcome.mongodb_error. */
static void mongodb_outcomes(void **state) {
    (void)state;
    const char *config = "{\"rules\": {\"mongodb\": {\"operation\": {\"name\": \"find\"}}}}";
    rp_run *run = new_run(config, NULL, NULL);
    rp_run_step s;
    OK(rp_run_start(run, 0.0, NAN, &s));
    rp_outcome o = of_kind(RP_OUTCOME_MONGODB);
    o.mongodb_error = "{\"kind\": \"netwrk\"}";
    assert_int_not_equal(rp_run_attempt_ended(run, &o, 5.0, NAN, -1, &s), RP_RESULT_OK);
    assert_non_null(strstr(rp_last_error_field(), "outcome.mongodb_error"));
    o.mongodb_error = "{\"kind\": \"network\"}";
    OK(rp_run_attempt_ended(run, &o, 5.0, NAN, -1, &s));
    assert_int_equal(s.action, RP_RUN_WAIT);
    assert_string_equal(s.rule, "retryable_read_error");
    rp_run_free(run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_kv_run_is_send_wait_send_done),
        cmocka_unit_test(then_cancel_ends_the_run_at_once),
        cmocka_unit_test(http_retry_after_and_method),
        cmocka_unit_test(a_run_asks_its_budget_and_breaker),
        cmocka_unit_test(the_budget_has_a_final_event),
        cmocka_unit_test(misuse_is_a_typed_error),
        cmocka_unit_test(mongodb_outcomes),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, the run handle", tests, NULL, NULL);
}

/*
 * cmocka tests of what a host observes (issue 27): a breaker's state changes, handed to its
 * callback (rp_breaker_on_change) and read back (rp_breaker_last_changes), made by direct calls and
 * by runs; and a run's statistics (rp_run_statistics). Clocks are passed in (no real time); every
 * expected change is worked out by hand from the breaker's rules (Couchbase's LazyCircuitBreaker:
 * volume threshold, error percentage, sleep window, one canary, its timeout). The threaded test is
 * in test_threads.c.
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

#define CLOSED RP_BREAKER_STATE_CLOSED
#define OPEN RP_BREAKER_STATE_OPEN
#define HALF_OPEN RP_BREAKER_STATE_HALF_OPEN

static rp_breaker *breaker_from(const char *json) {
    rp_breaker *b = NULL;
    OK(rp_breaker_from_json(json, strlen(json), &b));
    return b;
}

static rp_budget *budget_from(const char *json) {
    rp_budget *b = NULL;
    OK(rp_budget_from_json(json, strlen(json), &b));
    return b;
}

/* ---- what a callback was handed ------------------------------------------------------------ */

#define MAX_HEARD 8

/* The changes a callback was handed, in order, with what it saw when it was called. The callback
 * only records (a cmocka assertion would longjmp out of it, which the header forbids); the tests
 * assert afterwards. */
typedef struct {
    int count;
    rp_breaker_change changes[MAX_HEARD];
    rp_breaker *breakers[MAX_HEARD];
    int events[MAX_HEARD];           /* `event` when the change came: which of the test's calls made it */
    int event;                       /* set by the test before each call */
    uint64_t now_ms;                 /* the time of the test's current call, for state_at */
    rp_result state_rc[MAX_HEARD];   /* rp_breaker_state_at on `breaker` from inside the callback */
    rp_breaker_state state[MAX_HEARD];
    rp_run *run;                     /* when set, the callback reads the run's statistics */
    rp_result stats_rc[MAX_HEARD];
    uint32_t attempts[MAX_HEARD], retries[MAX_HEARD];
    int answer_canary;               /* when set, a canary is answered (success) from inside the callback */
    int fail_after_timeout;          /* when set, on a timed-out canary the next canary's failure is recorded */
} heard;

static void hear(void *user_data, rp_breaker *breaker, rp_breaker_change change) {
    heard *h = user_data;
    int i = h->count++;
    if (i >= MAX_HEARD) return;
    h->changes[i] = change;
    h->breakers[i] = breaker;
    h->events[i] = h->event;
    /* The breaker's lock is not held: calling it again neither deadlocks nor fails. */
    h->state_rc[i] = rp_breaker_state_at(breaker, h->now_ms, &h->state[i]);
    if (h->run) {
        rp_run_stats s;
        h->stats_rc[i] = rp_run_statistics(h->run, &s);
        h->attempts[i] = s.attempts;
        h->retries[i] = s.retries;
    }
    if (h->answer_canary && change.rule == RP_BREAKER_CHANGE_CANARY) {
        h->answer_canary = 0;
        rp_breaker_record(breaker, h->now_ms, RP_BREAKER_OUTCOME_SUCCESS); /* a nested change */
    }
    if (h->fail_after_timeout && change.rule == RP_BREAKER_CHANGE_CANARY_TIMED_OUT) {
        h->fail_after_timeout = 0;
        rp_breaker_record(breaker, h->now_ms + 1, RP_BREAKER_OUTCOME_FAILURE); /* a nested change */
    }
}

static void assert_change(const rp_breaker_change *c, rp_breaker_state from, rp_breaker_state to,
                          rp_breaker_change_rule rule) {
    assert_int_equal(c->from, from);
    assert_int_equal(c->to, to);
    assert_int_equal(c->rule, rule);
}

/* The i-th change the callback was handed: `from` to `to` by `rule`, during event `event`, on
 * breaker `b`, which the callback could read (its state then was `to`). */
static void assert_heard(const heard *h, int i, int event, rp_breaker *b, rp_breaker_state from, rp_breaker_state to,
                         rp_breaker_change_rule rule) {
    assert_true(i < h->count);
    assert_change(&h->changes[i], from, to, rule);
    assert_int_equal(h->events[i], event);
    assert_ptr_equal(h->breakers[i], b);
    assert_int_equal(h->state_rc[i], RP_RESULT_OK);
    assert_int_equal(h->state[i], to);
}

/* rp_breaker_last_changes: none, or the one change `from` to `to` by `rule`. */
static void assert_last(rp_breaker *b, int changed, rp_breaker_state from, rp_breaker_state to,
                        rp_breaker_change_rule rule) {
    size_t count = 99;
    rp_breaker_change c[RP_BREAKER_MAX_CHANGES];
    memset(c, 0xab, sizeof c);
    OK(rp_breaker_last_changes(b, c, &count));
    assert_int_equal(count, changed);
    if (changed) assert_change(&c[0], from, to, rule);
}

#define NONE 0, 0, 0, 0

/* ---- direct calls ---------------------------------------------------------------------------- */

/* Volume 2, 50%, a 100 ms sleep window, a 50 ms canary timeout. Two failures trip it at 1; refused
 * at 50 (49 ms into the window); the canary at 102 (101 ms > 100); refused at 103 (canary out); at
 * 153 the canary sent at 102 has timed out (at 152): open again, 1 ms into a new window, refused;
 * the next canary at 253 (101 ms after 152) succeeds at 254 and closes it; a success at 255 changes
 * nothing. Each change reaches the callback once, during the call that made it. */
static void each_state_change_reaches_the_callback_once_with_its_rule(void **state) {
    (void)state;
    rp_breaker *b = breaker_from("{\"volume_threshold\": 2, \"error_threshold_percentage\": 50, \"sleep_window_ms\": "
                                 "100, \"rolling_window_ms\": 10000, \"canary_timeout_ms\": 50}");
    heard h = {0};
    OK(rp_breaker_on_change(b, hear, &h));
    rp_breaker_verdict v;
    assert_last(b, NONE);

#define AT(n, t) (h.event = (n), h.now_ms = (t))
    AT(1, 0), OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE));
    assert_int_equal(h.count, 0); /* one outcome is below the volume of 2 */
    assert_last(b, NONE);
    AT(2, 1), OK(rp_breaker_record(b, 1, RP_BREAKER_OUTCOME_FAILURE));
    assert_int_equal(h.count, 1);
    assert_heard(&h, 0, 2, b, CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    assert_last(b, 1, CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    AT(3, 50), OK(rp_breaker_permit(b, 50, &v));
    assert_false(v.permitted);
    assert_last(b, NONE); /* a refusal changes nothing, and forgets the last call's change */
    AT(4, 102), OK(rp_breaker_permit(b, 102, &v));
    assert_true(v.canary);
    assert_heard(&h, 1, 4, b, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    AT(5, 103), OK(rp_breaker_permit(b, 103, &v));
    assert_false(v.permitted);
    assert_int_equal(h.count, 2);
    AT(6, 153), OK(rp_breaker_permit(b, 153, &v));
    assert_false(v.permitted);
    assert_heard(&h, 2, 6, b, HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    assert_last(b, 1, HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    AT(7, 253), OK(rp_breaker_permit(b, 253, &v));
    assert_true(v.canary);
    assert_heard(&h, 3, 7, b, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    AT(8, 254), OK(rp_breaker_record(b, 254, RP_BREAKER_OUTCOME_SUCCESS));
    assert_heard(&h, 4, 8, b, HALF_OPEN, CLOSED, RP_BREAKER_CHANGE_CANARY_SUCCEEDED);
    AT(9, 255), OK(rp_breaker_record(b, 255, RP_BREAKER_OUTCOME_SUCCESS));
    assert_int_equal(h.count, 5);
    assert_last(b, NONE);
#undef AT
    rp_breaker_free(b);
}

/* A failed canary opens the circuit again; a canary found timed out by the call that sends the next
 * one makes two changes, each handed to the callback in order and read back in order. */
static void a_failed_canary_and_a_timed_out_then_replaced_one(void **state) {
    (void)state;
    rp_breaker *b = breaker_from("{\"volume_threshold\": 1, \"sleep_window_ms\": 100, \"canary_timeout_ms\": 50}");
    heard h = {0};
    OK(rp_breaker_on_change(b, hear, &h));
    rp_breaker_verdict v;
    OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_TIMEOUT)); /* a timeout is a failure */
    h.now_ms = 101;
    OK(rp_breaker_permit(b, 101, &v));
    assert_true(v.canary);
    h.now_ms = 110;
    OK(rp_breaker_record(b, 110, RP_BREAKER_OUTCOME_FAILURE));
    h.now_ms = 211; /* 101 ms after 110 */
    OK(rp_breaker_permit(b, 211, &v));
    assert_true(v.canary);
    h.now_ms = 362; /* the canary of 211 timed out at 261; 101 ms later the same call sends the next */
    OK(rp_breaker_permit(b, 362, &v));
    assert_true(v.canary);
    assert_int_equal(h.count, 6);
    assert_heard(&h, 0, 0, b, CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    assert_heard(&h, 1, 0, b, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_heard(&h, 2, 0, b, HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_FAILED);
    assert_heard(&h, 3, 0, b, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    /* The two changes of the permit at 362, in order (the callback reads the state after the call). */
    assert_change(&h.changes[4], HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    assert_change(&h.changes[5], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    size_t count = 0;
    rp_breaker_change c[RP_BREAKER_MAX_CHANGES];
    OK(rp_breaker_last_changes(b, c, &count));
    assert_int_equal(count, 2);
    assert_change(&c[0], HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    assert_change(&c[1], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    rp_breaker_free(b);
}

/* The callback may call the breaker: here it answers the canary it is told of (a success), a change
 * of its own, which reaches the callback (nested) before the permit that sent the canary returns. */
static void the_callback_may_call_the_breaker_again(void **state) {
    (void)state;
    rp_breaker *b = breaker_from("{\"volume_threshold\": 1, \"sleep_window_ms\": 100}");
    heard h = {0};
    h.answer_canary = 1;
    OK(rp_breaker_on_change(b, hear, &h));
    OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE));
    h.now_ms = 101;
    rp_breaker_verdict v;
    OK(rp_breaker_permit(b, 101, &v));
    assert_true(v.canary); /* the verdict of the permit itself */
    assert_int_equal(h.count, 3);
    assert_heard(&h, 0, 0, b, CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    /* The canary's callback read the state first (half-open), then recorded the success. */
    assert_heard(&h, 1, 0, b, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_heard(&h, 2, 0, b, HALF_OPEN, CLOSED, RP_BREAKER_CHANGE_CANARY_SUCCEEDED);
    assert_last(b, 1, HALF_OPEN, CLOSED, RP_BREAKER_CHANGE_CANARY_SUCCEEDED); /* the nested call was the last */
    rp_breaker_free(b);
}

/* A change the callback makes during a call that made two reaches it after both: the canary sent at
 * 101 timed out at 151; the permit at 252 finds it (half-open -> open) and sends the next canary
 * (open -> half-open); told of the first, the callback records that canary's failure at 253, a
 * third change (half-open -> open), handed over after the call's second. */
static void a_change_made_during_a_call_that_made_two_comes_after_both(void **state) {
    (void)state;
    rp_breaker *b = breaker_from("{\"volume_threshold\": 1, \"sleep_window_ms\": 100, \"canary_timeout_ms\": 50}");
    heard h = {0};
    OK(rp_breaker_on_change(b, hear, &h));
    OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE));
    rp_breaker_verdict v;
    OK(rp_breaker_permit(b, 101, &v));
    assert_true(v.canary);
    assert_int_equal(h.count, 2);
    h.fail_after_timeout = 1;
    h.now_ms = 252;
    OK(rp_breaker_permit(b, 252, &v));
    assert_true(v.canary);
    assert_int_equal(h.count, 5);
    assert_change(&h.changes[2], HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    assert_change(&h.changes[3], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_change(&h.changes[4], HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_FAILED);
    rp_breaker_state s;
    OK(rp_breaker_state_at(b, 253, &s));
    assert_int_equal(s, OPEN);
    rp_breaker_free(b);
}

/* A new callback replaces the old one; NULL unregisters (rp_breaker_last_changes still reports). A
 * disabled breaker never changes state. */
static void null_unregisters_and_a_new_callback_replaces_the_old(void **state) {
    (void)state;
    rp_breaker *b = breaker_from("{\"volume_threshold\": 1, \"sleep_window_ms\": 100}");
    heard first = {0}, second = {0};
    rp_breaker_verdict v;
    OK(rp_breaker_on_change(b, hear, &first));
    OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE));
    OK(rp_breaker_on_change(b, hear, &second));
    OK(rp_breaker_permit(b, 101, &v));
    OK(rp_breaker_on_change(b, NULL, &first));
    OK(rp_breaker_record(b, 102, RP_BREAKER_OUTCOME_SUCCESS));
    assert_int_equal(first.count, 1);
    assert_change(&first.changes[0], CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    assert_int_equal(second.count, 1);
    assert_change(&second.changes[0], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_last(b, 1, HALF_OPEN, CLOSED, RP_BREAKER_CHANGE_CANARY_SUCCEEDED);
    rp_breaker_free(b);

    b = breaker_from("{\"enabled\": false, \"volume_threshold\": 1}");
    OK(rp_breaker_on_change(b, hear, &first));
    for (uint64_t t = 0; t < 5; t++) {
        OK(rp_breaker_record(b, t, RP_BREAKER_OUTCOME_FAILURE));
        OK(rp_breaker_permit(b, t, &v));
        assert_true(v.permitted);
    }
    assert_int_equal(first.count, 1);
    assert_last(b, NONE);
    rp_breaker_free(b);
}

/* Misuse is a typed error naming the argument; outputs are left untouched. */
static void misuse_of_the_change_functions_is_a_typed_error(void **state) {
    (void)state;
    heard h = {0};
    rp_breaker *b = breaker_from("{}");
    rp_budget *budget = budget_from("{\"kind\": \"retry_quota\"}");
    FAILS(rp_breaker_on_change(NULL, hear, &h), RP_RESULT_NULL_POINTER, "breaker");
    FAILS(rp_breaker_on_change((rp_breaker *)budget, hear, &h), RP_RESULT_INVALID_HANDLE, "breaker");
    size_t count = 99;
    rp_breaker_change c[RP_BREAKER_MAX_CHANGES], untouched[RP_BREAKER_MAX_CHANGES];
    memset(c, 0xab, sizeof c);
    memcpy(untouched, c, sizeof c);
    FAILS(rp_breaker_last_changes(NULL, c, &count), RP_RESULT_NULL_POINTER, "breaker");
    FAILS(rp_breaker_last_changes(b, NULL, &count), RP_RESULT_NULL_POINTER, "changes_out");
    FAILS(rp_breaker_last_changes(b, c, NULL), RP_RESULT_NULL_POINTER, "count_out");
    assert_int_equal(count, 99);
    OK(rp_breaker_last_changes(b, c, &count));
    assert_int_equal(count, 0);
    assert_memory_equal(c, untouched, sizeof c); /* only the changes made are written */
    const char *name = NULL;
    OK(rp_enum_name(RP_ENUM_BREAKER_CHANGE_RULE, RP_BREAKER_CHANGE_CANARY_TIMED_OUT, &name));
    assert_string_equal(name, "canary_timed_out");
    uint32_t value = 0;
    OK(rp_enum_from_name(RP_ENUM_BREAKER_CHANGE_RULE, "breaker_tripped", &value));
    assert_int_equal(value, RP_BREAKER_CHANGE_TRIPPED);
    FAILS(rp_enum_name(RP_ENUM_BREAKER_CHANGE_RULE, 6, &name), RP_RESULT_INVALID_ENUM, "value");
    rp_breaker_free(b);
    FAILS(rp_breaker_on_change(b, hear, &h), RP_RESULT_INVALID_HANDLE, "breaker");
    FAILS(rp_breaker_last_changes(b, c, &count), RP_RESULT_INVALID_HANDLE, "breaker");
    rp_budget_free(budget);
    assert_int_equal(h.count, 0);
}

/* ---- runs ------------------------------------------------------------------------------------ */

static const char KV_GET[] =
    "{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}}, \"timeout_ms\": 10000}";
static const char SMALL_BREAKER[] = "{\"volume_threshold\": 1, \"error_threshold_percentage\": 50, \"sleep_window_ms\": 100}";

static rp_run *new_run(const char *config, rp_budget *budget, rp_breaker *breaker) {
    rp_run *run = NULL;
    OK(rp_run_new(config, strlen(config), budget, breaker, &run));
    return run;
}

static rp_outcome of_kind(rp_outcome_kind kind, uint32_t status) {
    rp_outcome o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.status = status;
    o.sent = -1;
    return o;
}

/* The run's statistics, with their counts and end checked (the rest is the caller's to check). */
static rp_run_stats stats_of(const rp_run *run, uint32_t attempts, uint32_t retries, uint64_t waited_ms,
                             uint64_t elapsed_ms, uint32_t budget_refusals, uint32_t breaker_rejections,
                             rp_run_end end) {
    rp_run_stats s;
    memset(&s, 0xab, sizeof s);
    OK(rp_run_statistics(run, &s));
    assert_int_equal(s.attempts, attempts);
    assert_int_equal(s.retries, retries);
    assert_int_equal(s.waited_ms, waited_ms);
    assert_int_equal(s.elapsed_ms, elapsed_ms);
    assert_int_equal(s.budget_refusals, budget_refusals);
    assert_int_equal(s.breaker_rejections, breaker_rejections);
    assert_int_equal(s.end, end);
    return s;
}

/* Nothing yet: zeros, no rule, no end, no verdicts. */
static void assert_no_stats(const rp_run *run) {
    rp_run_stats s = stats_of(run, 0, 0, 0, 0, 0, 0, RP_RUN_END_NONE);
    assert_null(s.last_rule);
    assert_false(s.has_last_reason);
    assert_int_equal(s.last_reason, RP_REASON_UNKNOWN);
    assert_false(s.has_last_budget);
    assert_false(s.has_last_breaker);
}

/* A KV get with the AWS retry quota and a breaker of volume 1: 0x86 (TEMPFAIL) at 10 trips the
 * breaker and best effort asks for 1 ms (the quota takes 5: 495 left); at 11 the breaker refuses,
 * so the run waits the rest of its window (100 ms); at 111 the second attempt is the canary; its
 * success at 120 closes the circuit. The callback hears each change during the step that made it,
 * and reads the run's statistics from inside (the run's lock is released too). */
static void a_run_hands_its_breaker_changes_to_the_callback_and_counts_what_it_did(void **state) {
    (void)state;
    rp_budget *budget = budget_from("{\"kind\": \"retry_quota\"}");
    rp_breaker *breaker = breaker_from(SMALL_BREAKER);
    rp_run *run = new_run(KV_GET, budget, breaker);
    heard h = {0};
    h.run = run;
    OK(rp_breaker_on_change(breaker, hear, &h));
    assert_no_stats(run);
    rp_run_step s;
    rp_outcome failed = of_kind(RP_OUTCOME_KV, 0x86), success = of_kind(RP_OUTCOME_SUCCESS, 0);
    h.event = 1, h.now_ms = 0;
    OK(rp_run_start(run, 0.0, NAN, &s));
    h.event = 2, h.now_ms = 10;
    assert_int_equal(s.signal, RP_RUN_SIGNAL_NONE);
    OK(rp_run_attempt_ended(run, &failed, 10.0, NAN, -1, &s));
    assert_int_equal(s.delay_ms, 1);
    assert_int_equal(s.signal, RP_RUN_SIGNAL_RETRY);
    h.event = 3, h.now_ms = 11;
    OK(rp_run_wait_ended(run, 11.0, NAN, &s));
    assert_string_equal(s.rule, "breaker_wait");
    assert_int_equal(s.signal, RP_RUN_SIGNAL_BREAKER_WAIT); /* a wait for the breaker is no retry */
    h.event = 4, h.now_ms = 111;
    OK(rp_run_wait_ended(run, 111.0, NAN, &s));
    assert_true(s.breaker.canary);
    h.event = 5, h.now_ms = 120;
    OK(rp_run_attempt_ended(run, &success, 120.0, NAN, -1, &s));
    assert_int_equal(s.end, RP_RUN_END_SUCCEEDED);
    assert_int_equal(s.signal, RP_RUN_SIGNAL_NONE);

    assert_int_equal(h.count, 3);
    assert_heard(&h, 0, 2, breaker, CLOSED, OPEN, RP_BREAKER_CHANGE_TRIPPED);
    assert_heard(&h, 1, 4, breaker, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_heard(&h, 2, 5, breaker, HALF_OPEN, CLOSED, RP_BREAKER_CHANGE_CANARY_SUCCEEDED);
    /* From inside: the statistics already count the step that made the change. */
    for (int i = 0; i < 3; i++) assert_int_equal(h.stats_rc[i], RP_RESULT_OK);
    assert_int_equal(h.attempts[0], 1);
    assert_int_equal(h.retries[0], 1);
    assert_int_equal(h.attempts[1], 2);
    assert_int_equal(h.attempts[2], 2);
    assert_int_equal(h.retries[2], 1);

    /* Two sent; one retry (the breaker's wait is none); 1 + 100 ms asked to wait; one refusal. */
    rp_run_stats st = stats_of(run, 2, 1, 101, 120, 0, 1, RP_RUN_END_SUCCEEDED);
    assert_string_equal(st.last_rule, "attempt_succeeded");
    assert_true(st.has_last_reason);            /* the last step that had one: the breaker's wait */
    assert_int_equal(st.last_reason, RP_REASON_CIRCUIT_BREAKER_OPEN);
    assert_true(st.has_last_budget);            /* the retry's: 500 - 5 */
    assert_true(st.last_budget.permitted);
    assert_int_equal(st.last_budget.kind, RP_BUDGET_KIND_RETRY_QUOTA);
    assert_int_equal(st.last_budget.balance, 495);
    assert_int_equal(st.last_budget.rule, RP_BUDGET_RULE_RETRY_QUOTA_AVAILABLE);
    assert_true(st.has_last_breaker);           /* the canary's */
    assert_true(st.last_breaker.canary);
    assert_int_equal(st.last_breaker.state, HALF_OPEN);
    assert_int_equal(st.last_breaker.rule, RP_BREAKER_RULE_CANARY);
    rp_run_free(run);
    rp_breaker_free(breaker);
    rp_budget_free(budget);
}

/* An HTTP 503 whose retry gRPC's bucket refuses (6 of 10 tokens; the failure takes one: 5, at half):
 * one attempt, no retry, one refusal, given up by the bucket's rule; no breaker. */
static void a_budget_refusal_is_counted_and_ends_the_run(void **state) {
    (void)state;
    const char *doc = "{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}";
    const char *snapshot = "{\"version\": 1, \"kind\": \"token_bucket\", \"balance\": 6000}";
    rp_budget *budget = NULL;
    OK(rp_budget_restore(doc, strlen(doc), snapshot, strlen(snapshot), &budget));
    rp_run *run = new_run("{\"rules\": {\"http\": {\"method\": \"GET\"}}, \"timeout_ms\": 10000}", budget, NULL);
    rp_run_step s;
    OK(rp_run_start(run, 0.0, NAN, &s));
    rp_outcome o = of_kind(RP_OUTCOME_HTTP, 503);
    OK(rp_run_attempt_ended(run, &o, 5.0, NAN, -1, &s));
    assert_int_equal(s.end, RP_RUN_END_GAVE_UP);
    assert_int_equal(s.signal, RP_RUN_SIGNAL_GIVE_UP);
    const char *name = NULL;
    OK(rp_enum_name(RP_ENUM_RUN_SIGNAL, s.signal, &name));
    assert_string_equal(name, "give_up");
    rp_run_stats st = stats_of(run, 1, 0, 0, 5, 1, 0, RP_RUN_END_GAVE_UP);
    assert_string_equal(st.last_rule, "token_bucket_at_or_below_half");
    assert_true(st.has_last_reason);
    assert_int_equal(st.last_reason, RP_REASON_SERVICE_RESPONSE_CODE_INDICATED);
    assert_true(st.has_last_budget);
    assert_false(st.last_budget.permitted);
    assert_int_equal(st.last_budget.kind, RP_BUDGET_KIND_TOKEN_BUCKET);
    assert_int_equal(st.last_budget.balance, 5000);
    assert_int_equal(st.last_budget.rule, RP_BUDGET_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF);
    assert_false(st.has_last_breaker);
    rp_run_free(run);
    rp_budget_free(budget);
}

/* A breaker of `doc` restored from `snapshot`. */
static rp_breaker *restored(const char *doc, const char *snapshot) {
    rp_breaker *b = NULL;
    OK(rp_breaker_restore(doc, strlen(doc), snapshot, strlen(snapshot), &b));
    return b;
}

/* A KV get run over `breaker`, whose changes go to `h`, started at 200 (event 1) into `s`. */
static rp_run *started_at_200(rp_breaker *breaker, heard *h, rp_run_step *s) {
    rp_run *run = new_run(KV_GET, NULL, breaker);
    OK(rp_breaker_on_change(breaker, hear, h));
    h->event = 1, h->now_ms = 200;
    OK(rp_run_start(run, 200.0, NAN, s));
    return run;
}

/* A breaker restored half-open (a canary sent at 0, never answered; timeout 50 ms, window 100 ms):
 * the run's start at 200 finds that canary timed out at 50 and, the window over at 150, sends this
 * attempt as the next canary: one step, two changes, each handed to the callback in order. */
static void a_run_step_that_makes_two_changes_hands_each_in_order(void **state) {
    (void)state;
    rp_breaker *breaker = restored("{\"volume_threshold\": 1, \"sleep_window_ms\": 100, \"canary_timeout_ms\": 50}",
                                   "{\"version\": 1, \"state\": \"half_open\", \"since_ms\": 0, "
                                   "\"window_start_ms\": null, \"total\": 0, \"failures\": 0}");
    heard h = {0};
    rp_run_step s;
    rp_run *run = started_at_200(breaker, &h, &s);
    assert_int_equal(s.action, RP_RUN_SEND);
    assert_true(s.breaker.canary);
    assert_int_equal(h.count, 2);
    assert_change(&h.changes[0], HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_TIMED_OUT);
    assert_change(&h.changes[1], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_int_equal(h.events[0], 1);
    assert_int_equal(h.events[1], 1);
    rp_run_free(run);
    rp_breaker_free(breaker);
}

/* A breaker open since 0 with a 100 ms window: the run's first attempt at 200 is the canary; the
 * host cancels it at 210, so the canary is released (open again, its window over). */
static void a_cancelled_canary_is_released(void **state) {
    (void)state;
    rp_breaker *breaker = restored(SMALL_BREAKER, "{\"version\": 1, \"state\": \"open\", \"since_ms\": 0, "
                                                  "\"window_start_ms\": 0, \"total\": 1, \"failures\": 1}");
    heard h = {0};
    rp_run_step s;
    rp_run *run = started_at_200(breaker, &h, &s);
    h.event = 2, h.now_ms = 210;
    OK(rp_run_cancel(run, 210.0, &s));
    assert_int_equal(h.count, 2);
    assert_heard(&h, 0, 1, breaker, OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_heard(&h, 1, 2, breaker, HALF_OPEN, OPEN, RP_BREAKER_CHANGE_CANARY_RELEASED);
    rp_run_stats st = stats_of(run, 1, 0, 0, 10, 0, 0, RP_RUN_END_CANCELLED);
    assert_string_equal(st.last_rule, "cancelled");
    assert_false(st.has_last_reason);
    assert_false(st.has_last_budget);
    assert_true(st.has_last_breaker);
    assert_true(st.last_breaker.canary);
    rp_run_free(run);
    rp_breaker_free(breaker);
}

/* A run keeps its breaker, and its callback, after the host freed the handle: the callback is still
 * told, with the freed handle's pointer, which every call refuses as no live breaker. */
static void a_breaker_freed_before_its_run_still_reports_through_the_run(void **state) {
    (void)state;
    rp_breaker *breaker = breaker_from(SMALL_BREAKER);
    heard h = {0};
    OK(rp_breaker_on_change(breaker, hear, &h));
    OK(rp_breaker_record(breaker, 0, RP_BREAKER_OUTCOME_FAILURE));
    rp_run *run = new_run(KV_GET, NULL, breaker);
    rp_breaker_free(breaker);
    rp_run_step s;
    OK(rp_run_start(run, 200.0, NAN, &s));
    assert_int_equal(h.count, 2);
    assert_change(&h.changes[1], OPEN, HALF_OPEN, RP_BREAKER_CHANGE_CANARY);
    assert_ptr_equal(h.breakers[1], breaker);
    assert_int_equal(h.state_rc[1], RP_RESULT_INVALID_HANDLE);
    rp_run_free(run);
}

/* rp_run_statistics's misuse is a typed error naming the argument, the output left untouched. */
static void misuse_of_the_statistics_is_a_typed_error(void **state) {
    (void)state;
    rp_run_stats s, untouched;
    memset(&s, 0xab, sizeof s);
    memcpy(&untouched, &s, sizeof s);
    rp_breaker *breaker = breaker_from("{}");
    rp_run *run = new_run(KV_GET, NULL, NULL);
    FAILS(rp_run_statistics(NULL, &s), RP_RESULT_NULL_POINTER, "run");
    FAILS(rp_run_statistics(run, NULL), RP_RESULT_NULL_POINTER, "stats_out");
    FAILS(rp_run_statistics((rp_run *)breaker, &s), RP_RESULT_INVALID_HANDLE, "run");
    rp_run_free(run);
    FAILS(rp_run_statistics(run, &s), RP_RESULT_INVALID_HANDLE, "run");
    assert_memory_equal(&s, &untouched, sizeof s);
    rp_breaker_free(breaker);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_state_change_reaches_the_callback_once_with_its_rule),
        cmocka_unit_test(a_failed_canary_and_a_timed_out_then_replaced_one),
        cmocka_unit_test(the_callback_may_call_the_breaker_again),
        cmocka_unit_test(a_change_made_during_a_call_that_made_two_comes_after_both),
        cmocka_unit_test(null_unregisters_and_a_new_callback_replaces_the_old),
        cmocka_unit_test(misuse_of_the_change_functions_is_a_typed_error),
        cmocka_unit_test(a_run_hands_its_breaker_changes_to_the_callback_and_counts_what_it_did),
        cmocka_unit_test(a_budget_refusal_is_counted_and_ends_the_run),
        cmocka_unit_test(a_run_step_that_makes_two_changes_hands_each_in_order),
        cmocka_unit_test(a_cancelled_canary_is_released),
        cmocka_unit_test(a_breaker_freed_before_its_run_still_reports_through_the_run),
        cmocka_unit_test(misuse_of_the_statistics_is_a_typed_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

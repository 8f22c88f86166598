/*
 * cmocka tests of retry budgets and circuit breakers through the C API (rp_budget, rp_breaker,
 * rp_decide_with_budget): the behaviour each source describes, snapshots, and bad input as typed
 * errors naming the field. The threaded tests are in test_threads.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

#include "same_decision.h"

#define OK(call) assert_int_equal((call), RP_RESULT_OK)

static const char *last_error(void) { return rp_last_error_message(); }

static rp_budget *budget_from(const char *json) {
    rp_budget *b = NULL;
    if (rp_budget_from_json(json, strlen(json), &b) != RP_RESULT_OK) fail_msg("budget %s: %s", json, last_error());
    return b;
}

static rp_breaker *breaker_from(const char *json) {
    rp_breaker *b = NULL;
    if (rp_breaker_from_json(json, strlen(json), &b) != RP_RESULT_OK) fail_msg("breaker %s: %s", json, last_error());
    return b;
}

/* Asserts that `call` fails with `code`, naming `field`. */
#define FAILS(call, code, field)                              \
    do {                                                      \
        assert_int_equal((call), (code));                     \
        assert_string_equal(rp_last_error_field(), (field));  \
    } while (0)

/* ---- budgets ----------------------------------------------------------------------------- */

/* gRFC A6's example bucket (maxTokens 10, tokenRatio 0.1): each failure takes a token and retries
 * stop once the bucket is at or below half, so a 100% failure storm gets 4 retries (tokens 9, 8, 7,
 * 6), then none; a success adds 0.1 token, which lifts 5 above half again. */
static void token_bucket_stops_retries_at_half_under_total_failure(void **state) {
    (void)state;
    rp_budget *b = budget_from("{\"version\": 1, \"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}");
    rp_budget_verdict v;
    int permitted = 0;
    for (uint64_t i = 0; i < 20; i++) {
        OK(rp_budget_record(b, i * 100, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
        OK(rp_budget_try_retry(b, i * 100, RP_RETRY_CAUSE_ERROR, &v));
        if (v.permitted) {
            permitted++;
            assert_int_equal(i, permitted - 1); /* only the first ones */
        }
        if (i == 4) {
            assert_false(v.permitted);
            assert_int_equal(v.rule, RP_BUDGET_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF);
            assert_int_equal(v.balance, 5000); /* thousandths of a token */
        }
    }
    assert_int_equal(permitted, 4);
    assert_int_equal(v.kind, RP_BUDGET_KIND_TOKEN_BUCKET);
    assert_int_equal(v.balance, 0);
    assert_non_null(strstr(v.source, "gRFC A6"));

    rp_budget *half = budget_from("{\"kind\": \"token_bucket\", \"lenient\": true}"); /* lenient: the example values */
    for (int i = 0; i < 5; i++) OK(rp_budget_record(half, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
    OK(rp_budget_permit(half, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_false(v.permitted);
    OK(rp_budget_record(half, 1, RP_BUDGET_EVENT_SUCCESS, RP_RETRY_CAUSE_NONE));
    OK(rp_budget_permit(half, 1, RP_RETRY_CAUSE_ERROR, &v));
    assert_true(v.permitted);
    assert_int_equal(v.rule, RP_BUDGET_RULE_TOKEN_BUCKET_ABOVE_HALF);
    assert_int_equal(v.balance, 5100);
    rp_budget_free(half);
    rp_budget_free(b);
}

/* The AWS standard-mode quota: capacity / cost retries, then none; a timeout costs more; a retry
 * that succeeds refunds its cost. */
/* The AWS quota's 2026 costs: a retry of a throttling error takes 5, of any other error 14, and a
 * success refunds what its retry took. */
static void retry_quota_2026_costs_charge_throttling_less(void **state) {
    (void)state;
    rp_budget *b = budget_from("{\"kind\": \"retry_quota\", \"costs\": \"2026\"}");
    rp_budget_verdict v;
    OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_THROTTLING, &v));
    assert_true(v.permitted);
    assert_int_equal(v.balance, 495);
    OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 481);
    OK(rp_budget_record(b, 1, RP_BUDGET_EVENT_SUCCESS, RP_RETRY_CAUSE_THROTTLING));
    OK(rp_budget_permit(b, 1, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 486);
    rp_budget_free(b);
}

static void retry_quota_permits_exactly_capacity_over_cost(void **state) {
    (void)state;
    const char *doc = "{\"kind\": \"retry_quota\", \"capacity\": 50, \"retry_cost\": 5, \"timeout_cost\": 10}";
    rp_budget *b = budget_from(doc);
    rp_budget_verdict v;
    int permitted = 0;
    for (int i = 0; i < 30; i++) {
        OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &v));
        permitted += v.permitted;
    }
    assert_int_equal(permitted, 50 / 5);
    assert_false(v.permitted);
    assert_int_equal(v.rule, RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED);
    assert_int_equal(v.kind, RP_BUDGET_KIND_RETRY_QUOTA);
    assert_int_equal(v.balance, 0);
    /* A retry of an error that succeeded gives its 5 back: one more retry. */
    OK(rp_budget_record(b, 1, RP_BUDGET_EVENT_SUCCESS, RP_RETRY_CAUSE_ERROR));
    OK(rp_budget_try_retry(b, 1, RP_RETRY_CAUSE_ERROR, &v));
    assert_true(v.permitted);
    assert_int_equal(v.balance, 0);
    rp_budget_free(b);

    b = budget_from(doc);
    permitted = 0;
    for (int i = 0; i < 30; i++) {
        OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_TIMEOUT, &v));
        permitted += v.permitted;
    }
    assert_int_equal(permitted, 50 / 10);
    /* permit asks without taking: the same answer twice, and the quota unchanged. */
    rp_budget *fresh = budget_from(doc);
    OK(rp_budget_permit(fresh, 0, RP_RETRY_CAUSE_ERROR, &v));
    OK(rp_budget_permit(fresh, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_true(v.permitted);
    assert_int_equal(v.balance, 50);
    rp_budget_free(fresh);
    rp_budget_free(b);
}

/* A snapshot restores the same state: the same snapshot text and the same verdicts after. */
static void budget_snapshots_round_trip(void **state) {
    (void)state;
    const char *docs[] = {
        "{\"kind\": \"token_bucket\", \"max_tokens\": 4, \"token_ratio\": 0.5}",
        "{\"kind\": \"retry_quota\", \"capacity\": 20}",
        "{\"kind\": \"percentage\", \"percent\": 50, \"ttl_ms\": 2000, \"min_retries_per_sec\": 1}",
    };
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
        rp_budget *b = budget_from(docs[d]), *again = NULL;
        rp_budget_verdict v, w;
        for (uint64_t t = 0; t < 1500; t += 100) {
            OK(rp_budget_record(b, t, RP_BUDGET_EVENT_REQUEST, RP_RETRY_CAUSE_NONE));
            OK(rp_budget_record(b, t, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
            OK(rp_budget_try_retry(b, t, RP_RETRY_CAUSE_ERROR, &v));
        }
        char *snapshot = NULL, *snapshot_again = NULL;
        OK(rp_budget_snapshot(b, &snapshot));
        OK(rp_budget_restore(docs[d], strlen(docs[d]), snapshot, strlen(snapshot), &again));
        OK(rp_budget_snapshot(again, &snapshot_again));
        assert_string_equal(snapshot, snapshot_again);
        for (uint64_t t = 1500; t < 2500; t += 100) {
            OK(rp_budget_try_retry(b, t, RP_RETRY_CAUSE_ERROR, &v));
            OK(rp_budget_try_retry(again, t, RP_RETRY_CAUSE_ERROR, &w));
            assert_int_equal(v.permitted, w.permitted);
            assert_int_equal(v.rule, w.rule);
            assert_int_equal(v.balance, w.balance);
        }
        rp_string_free(snapshot);
        rp_string_free(snapshot_again);
        rp_budget_free(again);
        rp_budget_free(b);
    }
    /* The token bucket's snapshot is the documented JSON. */
    rp_budget *b = budget_from("{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}");
    OK(rp_budget_record(b, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
    char *snapshot = NULL;
    OK(rp_budget_snapshot(b, &snapshot));
    assert_string_equal(snapshot, "{\"version\":1,\"kind\":\"token_bucket\",\"balance\":9000}");
    rp_string_free(snapshot);
    rp_budget_free(b);
}

static void budget_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_budget *b = (rp_budget *)0x1; /* must stay untouched */
    const char *json = "{\"kind\": \"token_bucket\", \"max_tokens\": 0}";
    FAILS(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_OUT_OF_RANGE, "max_tokens");
    json = "{\"kind\": \"token_bucket\", \"capacity\": 5}";
    FAILS(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_UNKNOWN_FIELD, "capacity");
    json = "{\"kind\": \"leaky_bucket\"}";
    FAILS(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_UNKNOWN_NAME, "kind");
    json = "{\"max_tokens\": 5}";
    FAILS(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_MISSING_FIELD, "kind");
    json = "{\"kind\": \"retry_quota\", \"version\": 2}";
    assert_int_equal(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_UNSUPPORTED_VERSION);
    json = "{\"kind\": ";
    assert_int_equal(rp_budget_from_json(json, strlen(json), &b), RP_RESULT_MALFORMED_JSON);
    assert_int_equal(rp_budget_from_json(NULL, 0, &b), RP_RESULT_MALFORMED_JSON); /* NULL, 0 is "" */
    FAILS(rp_budget_from_json(NULL, 5, &b), RP_RESULT_NULL_POINTER, "json");
    json = "{\"kind\": \"retry_quota\"}";
    FAILS(rp_budget_from_json(json, strlen(json), NULL), RP_RESULT_NULL_POINTER, "budget_out");
    assert_ptr_equal(b, (rp_budget *)0x1);

    /* Snapshots: errors name fields under "snapshot". */
    const char *doc = "{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}";
    const char *snap = "{\"version\": 1, \"kind\": \"token_bucket\", \"balance\": 10001}";
    FAILS(rp_budget_restore(doc, strlen(doc), snap, strlen(snap), &b), RP_RESULT_OUT_OF_RANGE, "snapshot.balance");
    snap = "{\"kind\": \"retry_quota\", \"balance\": 1}";
    FAILS(rp_budget_restore(doc, strlen(doc), snap, strlen(snap), &b), RP_RESULT_UNKNOWN_NAME, "snapshot.kind");
    snap = "{\"kind\": \"token_bucket\", \"balance\": 1, \"tokens\": 2}";
    FAILS(rp_budget_restore(doc, strlen(doc), snap, strlen(snap), &b), RP_RESULT_UNKNOWN_FIELD, "snapshot.tokens");
    snap = "{\"kind\": \"token_bucket\", \"balance\": \"1\"}";
    FAILS(rp_budget_restore(doc, strlen(doc), snap, strlen(snap), &b), RP_RESULT_INVALID_TYPE, "snapshot.balance");
    snap = "{";
    FAILS(rp_budget_restore(doc, strlen(doc), snap, strlen(snap), &b), RP_RESULT_MALFORMED_JSON, "snapshot");
    FAILS(rp_budget_restore(doc, strlen(doc), NULL, 3, &b), RP_RESULT_NULL_POINTER, "snapshot_json");
    assert_ptr_equal(b, (rp_budget *)0x1);

    /* Calls on a handle: NULL handles and outputs, enum values that name no constant. */
    rp_budget_verdict v;
    memset(&v, 0xAB, sizeof v);
    rp_budget_verdict untouched = v;
    FAILS(rp_budget_permit(NULL, 0, RP_RETRY_CAUSE_ERROR, &v), RP_RESULT_NULL_POINTER, "budget");
    FAILS(rp_budget_try_retry(NULL, 0, RP_RETRY_CAUSE_ERROR, &v), RP_RESULT_NULL_POINTER, "budget");
    FAILS(rp_budget_record(NULL, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE), RP_RESULT_NULL_POINTER, "budget");
    FAILS(rp_budget_snapshot(NULL, &(char *){NULL}), RP_RESULT_NULL_POINTER, "budget");
    rp_budget *real = budget_from("{\"kind\": \"retry_quota\"}");
    FAILS(rp_budget_permit(real, 0, RP_RETRY_CAUSE_ERROR, NULL), RP_RESULT_NULL_POINTER, "verdict_out");
    FAILS(rp_budget_snapshot(real, NULL), RP_RESULT_NULL_POINTER, "json_out");
    FAILS(rp_budget_try_retry(real, 0, 4, &v), RP_RESULT_INVALID_ENUM, "cause");
    FAILS(rp_budget_record(real, 0, 6, RP_RETRY_CAUSE_NONE), RP_RESULT_INVALID_ENUM, "event");
    /* Only a success or a retry takes a cause. */
    FAILS(rp_budget_record(real, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_TIMEOUT), RP_RESULT_UNKNOWN_FIELD, "cause");
    assert_memory_equal(&v, &untouched, sizeof v);
    /* None of the failed calls took anything: the quota is full. */
    OK(rp_budget_permit(real, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 500);
    rp_budget_free(real);
    rp_budget_free(NULL);
}

/* The normalized documents fill in each source's defaults: aws-sdk-go-v2's retry quota (500
 * tokens, cost 5, timeout cost 10, increment 1) and Couchbase's breaker (20, 50%, 5 s, 1 min, 5 s). */
static void documents_fill_in_the_sources_defaults(void **state) {
    (void)state;
    rp_budget *b = budget_from("{\"kind\": \"retry_quota\"}");
    char *doc = NULL;
    OK(rp_budget_document(b, &doc));
    assert_string_equal(doc, "{\"version\":1,\"kind\":\"retry_quota\",\"capacity\":500,\"retry_cost\":5,"
                             "\"timeout_cost\":10,\"throttling_cost\":5,\"no_retry_increment\":1}");
    rp_string_free(doc);
    rp_budget_free(b);
    rp_breaker *k = breaker_from("{}");
    OK(rp_breaker_document(k, &doc));
    assert_string_equal(doc, "{\"version\":1,\"enabled\":true,\"volume_threshold\":20,\"error_threshold_percentage\":50,"
                             "\"sleep_window_ms\":5000,\"rolling_window_ms\":60000,\"canary_timeout_ms\":5000}");
    rp_string_free(doc);
    FAILS(rp_breaker_document(NULL, &doc), RP_RESULT_NULL_POINTER, "breaker");
    FAILS(rp_budget_document(NULL, &doc), RP_RESULT_NULL_POINTER, "budget");
    rp_breaker_free(k);
}

/* ---- breakers ---------------------------------------------------------------------------- */

#define BREAKER_DOC                                                                             \
    "{\"volume_threshold\": 4, \"error_threshold_percentage\": 50, \"sleep_window_ms\": 1000, " \
    "\"rolling_window_ms\": 10000, \"canary_timeout_ms\": 500}"

/* Couchbase's breaker: trips at its volume threshold, refuses with CIRCUIT_BREAKER_OPEN, and lets
 * exactly one canary through once more than the sleep window has passed. */
static void breaker_opens_at_volume_and_lets_one_canary_through(void **state) {
    (void)state;
    rp_breaker *b = breaker_from(BREAKER_DOC);
    rp_breaker_verdict v;
    rp_breaker_state s;
    for (uint64_t t = 0; t < 3; t++) OK(rp_breaker_record(b, t, RP_BREAKER_OUTCOME_FAILURE));
    OK(rp_breaker_permit(b, 3, &v)); /* 3 outcomes: below the volume threshold */
    assert_true(v.permitted);
    assert_int_equal(v.state, RP_BREAKER_STATE_CLOSED);
    assert_int_equal(v.rule, RP_BREAKER_RULE_CLOSED);
    assert_false(v.has_reason);
    OK(rp_breaker_record(b, 10, RP_BREAKER_OUTCOME_TIMEOUT)); /* the 4th: trips */
    OK(rp_breaker_state_at(b, 10, &s));
    assert_int_equal(s, RP_BREAKER_STATE_OPEN);
    OK(rp_breaker_permit(b, 11, &v));
    assert_false(v.permitted);
    assert_true(v.has_reason);
    assert_int_equal(v.reason, RP_REASON_CIRCUIT_BREAKER_OPEN);
    assert_int_equal(v.rule, RP_BREAKER_RULE_OPEN);
    assert_non_null(strstr(v.source, "LazyCircuitBreaker"));
    OK(rp_breaker_permit(b, 1010, &v)); /* exactly the sleep window: still open */
    assert_false(v.permitted);
    int canaries = 0, permitted = 0;
    for (uint64_t t = 1011; t < 1400; t++) {
        OK(rp_breaker_permit(b, t, &v));
        canaries += v.canary;
        permitted += v.permitted;
        if (t == 1011) {
            assert_true(v.canary);
            assert_int_equal(v.rule, RP_BREAKER_RULE_CANARY);
            assert_int_equal(v.state, RP_BREAKER_STATE_HALF_OPEN);
        } else {
            assert_int_equal(v.rule, RP_BREAKER_RULE_CANARY_IN_FLIGHT);
        }
    }
    assert_int_equal(canaries, 1);
    assert_int_equal(permitted, 1);
    OK(rp_breaker_record(b, 1400, RP_BREAKER_OUTCOME_SUCCESS)); /* the canary succeeded: closed */
    OK(rp_breaker_permit(b, 1401, &v));
    assert_true(v.permitted);
    assert_int_equal(v.state, RP_BREAKER_STATE_CLOSED);
    rp_breaker_free(b);

    /* A canary unanswered for canary_timeout_ms counts as failed: open again, no second canary. */
    b = breaker_from(BREAKER_DOC);
    for (uint64_t t = 0; t < 4; t++) OK(rp_breaker_record(b, 0, RP_BREAKER_OUTCOME_FAILURE));
    OK(rp_breaker_permit(b, 1001, &v));
    assert_true(v.canary);
    OK(rp_breaker_state_at(b, 1500, &s));
    assert_int_equal(s, RP_BREAKER_STATE_HALF_OPEN);
    OK(rp_breaker_state_at(b, 1501, &s));
    assert_int_equal(s, RP_BREAKER_STATE_OPEN);
    rp_breaker_free(b);
}

static void breaker_snapshots_round_trip(void **state) {
    (void)state;
    rp_breaker *b = breaker_from(BREAKER_DOC), *again = NULL;
    for (uint64_t t = 0; t < 4; t++) OK(rp_breaker_record(b, t, RP_BREAKER_OUTCOME_FAILURE));
    char *snapshot = NULL, *snapshot_again = NULL;
    OK(rp_breaker_snapshot(b, &snapshot));
    assert_string_equal(snapshot,
                        "{\"version\":1,\"state\":\"open\",\"since_ms\":3,\"window_start_ms\":0,\"total\":4,\"failures\":4}");
    OK(rp_breaker_restore(BREAKER_DOC, strlen(BREAKER_DOC), snapshot, strlen(snapshot), &again));
    OK(rp_breaker_snapshot(again, &snapshot_again));
    assert_string_equal(snapshot, snapshot_again);
    rp_breaker_verdict v, w;
    for (uint64_t t = 900; t < 1100; t += 7) {
        OK(rp_breaker_permit(b, t, &v));
        OK(rp_breaker_permit(again, t, &w));
        assert_int_equal(v.permitted, w.permitted);
        assert_int_equal(v.canary, w.canary);
        assert_int_equal(v.state, w.state);
    }
    rp_string_free(snapshot);
    rp_string_free(snapshot_again);
    rp_breaker_free(again);
    rp_breaker_free(b);
}

static void breaker_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_breaker *b = (rp_breaker *)0x1;
    const char *json = "{\"error_threshold_percentage\": 101}";
    FAILS(rp_breaker_from_json(json, strlen(json), &b), RP_RESULT_OUT_OF_RANGE, "error_threshold_percentage");
    json = "{\"sleep_window_ms\": -1}";
    FAILS(rp_breaker_from_json(json, strlen(json), &b), RP_RESULT_INVALID_DURATION, "sleep_window_ms");
    json = "{\"volume\": 3}";
    FAILS(rp_breaker_from_json(json, strlen(json), &b), RP_RESULT_UNKNOWN_FIELD, "volume");
    FAILS(rp_breaker_from_json(NULL, 2, &b), RP_RESULT_NULL_POINTER, "json");
    const char *snap = "{\"state\": \"open\", \"total\": 4, \"failures\": 4}";
    FAILS(rp_breaker_restore("{}", 2, snap, strlen(snap), &b), RP_RESULT_MISSING_FIELD, "snapshot.since_ms");
    snap = "{\"state\": \"ajar\", \"total\": 0, \"failures\": 0}";
    FAILS(rp_breaker_restore("{}", 2, snap, strlen(snap), &b), RP_RESULT_UNKNOWN_NAME, "snapshot.state");
    snap = "{\"state\": \"closed\", \"total\": 1, \"failures\": 2}";
    FAILS(rp_breaker_restore("{}", 2, snap, strlen(snap), &b), RP_RESULT_OUT_OF_RANGE, "snapshot.failures");
    assert_ptr_equal(b, (rp_breaker *)0x1);
    rp_breaker_verdict v;
    FAILS(rp_breaker_permit(NULL, 0, &v), RP_RESULT_NULL_POINTER, "breaker");
    FAILS(rp_breaker_record(NULL, 0, RP_BREAKER_OUTCOME_SUCCESS), RP_RESULT_NULL_POINTER, "breaker");
    FAILS(rp_breaker_state_at(NULL, 0, &(rp_breaker_state){0}), RP_RESULT_NULL_POINTER, "breaker");
    rp_breaker *real = breaker_from("{}");
    FAILS(rp_breaker_record(real, 0, 3), RP_RESULT_INVALID_ENUM, "outcome");
    FAILS(rp_breaker_permit(real, 0, NULL), RP_RESULT_NULL_POINTER, "verdict_out");
    FAILS(rp_breaker_state_at(real, 0, NULL), RP_RESULT_NULL_POINTER, "state_out");
    rp_breaker_free(real);
    rp_breaker_free(NULL);
}

/* ---- decisions with a budget ------------------------------------------------------------- */

static rp_request kv_get(uint32_t attempts) {
    rp_request r;
    memset(&r, 0, sizeof r);
    r.operation.service = RP_SERVICE_KV;
    r.operation.kv_operation = RP_KV_OPERATION_GET;
    r.attempts = attempts;
    r.timeout_ms = 2500;
    return r;
}

/* A refused retry is a no-retry with cause budget_exhausted and the budget's rule and source. */
static void a_budget_refusal_turns_a_retry_into_budget_exhausted(void **state) {
    (void)state;
    rp_budget *b = budget_from("{\"kind\": \"retry_quota\", \"capacity\": 5}");
    rp_budget_verdict first, second;
    OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &first));
    OK(rp_budget_try_retry(b, 0, RP_RETRY_CAUSE_ERROR, &second));
    assert_true(first.permitted);
    assert_false(second.permitted);
    rp_request r = kv_get(1);
    rp_decision plain, with_permit, with_none, refused;
    OK(rp_decide(&r, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &plain));
    OK(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, &first, &with_permit));
    OK(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, NULL, &with_none));
    assert_true(plain.retry);
    assert_same_decision(&with_permit, &plain);
    assert_same_decision(&with_none, &plain);
    OK(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, &second, &refused));
    assert_false(refused.retry);
    assert_int_equal(refused.delay_ms, 0);
    assert_int_equal(refused.cause, RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED);
    assert_int_equal(refused.rule, RP_RULE_RETRY_QUOTA_EXHAUSTED);
    assert_int_equal(refused.reason, RP_REASON_KV_LOCKED);
    assert_int_equal(refused.attempts, 1);
    assert_true(refused.idempotent);
    const char *section = NULL;
    OK(rp_rule_section(refused.rule, &section));
    assert_string_equal(section, second.source);
    char *line = NULL;
    OK(rp_decision_format(&refused, &line));
    assert_string_equal(line, "no retry after 1 retries: budget exhausted (reason KV_LOCKED, rule retry_quota_exhausted; "
                              "AWS SDKs and Tools Reference Guide, Retry behavior: standard mode retry quota "
                              "(aws/aws-sdk-go-v2 aws/retry/standard.go: 500 tokens, cost 5, timeout cost 10, "
                              "increment 1))");
    rp_string_free(line);
    /* A no-retry stays decide's own, refused verdict or not. */
    rp_decision unknown;
    OK(rp_decide_with_budget(&r, RP_REASON_UNKNOWN, NULL, &second, &unknown));
    assert_int_equal(unknown.cause, RP_NO_RETRY_CAUSE_UNKNOWN_REASON);
    assert_int_equal(unknown.rule, RP_RULE_UNKNOWN_NEVER_RETRIED);
    rp_budget_free(b);
}

static void a_verdict_that_disagrees_with_its_rule_is_refused(void **state) {
    (void)state;
    rp_request r = kv_get(0);
    rp_decision d;
    memset(&d, 0xAB, sizeof d);
    rp_decision untouched = d;
    rp_budget_verdict v = {true, RP_BUDGET_KIND_RETRY_QUOTA, RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED, NULL, 0};
    FAILS(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, &v, &d), RP_RESULT_OUT_OF_RANGE, "budget_verdict.permitted");
    v = (rp_budget_verdict){false, RP_BUDGET_KIND_TOKEN_BUCKET, RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED, NULL, 0};
    FAILS(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, &v, &d), RP_RESULT_UNKNOWN_NAME, "budget_verdict.kind");
    v = (rp_budget_verdict){false, RP_BUDGET_KIND_RETRY_QUOTA, 77, NULL, 0};
    FAILS(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, &v, &d), RP_RESULT_INVALID_ENUM, "budget_verdict.rule");
    FAILS(rp_decide_with_budget(NULL, RP_REASON_KV_LOCKED, NULL, NULL, &d), RP_RESULT_NULL_POINTER, "request");
    FAILS(rp_decide_with_budget(&r, RP_REASON_KV_LOCKED, NULL, NULL, NULL), RP_RESULT_NULL_POINTER, "decision_out");
    assert_memory_equal(&d, &untouched, sizeof d);
    /* A budget rule on a retrying decision has no log line. */
    OK(rp_decide(&r, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d));
    d.rule = RP_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF;
    char *line = NULL;
    FAILS(rp_decision_format(&d, &line), RP_RESULT_OUT_OF_RANGE, "decision.rule");
    assert_null(line);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_bucket_stops_retries_at_half_under_total_failure),
        cmocka_unit_test(retry_quota_2026_costs_charge_throttling_less),
        cmocka_unit_test(retry_quota_permits_exactly_capacity_over_cost),
        cmocka_unit_test(budget_snapshots_round_trip),
        cmocka_unit_test(budget_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(documents_fill_in_the_sources_defaults),
        cmocka_unit_test(breaker_opens_at_volume_and_lets_one_canary_through),
        cmocka_unit_test(breaker_snapshots_round_trip),
        cmocka_unit_test(breaker_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(a_budget_refusal_turns_a_retry_into_budget_exhausted),
        cmocka_unit_test(a_verdict_that_disagrees_with_its_rule_is_refused),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, budgets and breakers", tests, NULL, NULL);
}

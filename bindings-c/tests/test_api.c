/*
 * cmocka tests of the C API: behaviour, and every kind of bad input (NULL pointers, out-of-range
 * enum values, invalid UTF-8, malformed JSON, bad draws, bool bytes other than 0 and 1), each a
 * result code with outputs left untouched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

#include "same_decision.h"

#ifndef EXPECTED_VERSION
#error "compile with -DEXPECTED_VERSION=\"x.y.z\" (the workspace Cargo.toml version)"
#endif

#define OK(call) assert_int_equal((call), RP_RESULT_OK)
#define STR(x) STR_(x)
#define STR_(x) #x

/* This thread's last-error detail. */
static const char *last_error(void) { return rp_last_error_message(); }

static rp_request kv_request(rp_kv_operation op, uint32_t attempts, uint64_t elapsed, uint64_t timeout) {
    rp_request r;
    memset(&r, 0, sizeof r);
    r.operation.service = RP_SERVICE_KV;
    r.operation.kv_operation = op;
    r.attempts = attempts;
    r.elapsed_ms = elapsed;
    r.timeout_ms = timeout;
    return r;
}

static rp_policy *policy_from(const char *json) {
    rp_policy *p = NULL;
    rp_result rc = rp_policy_from_json(json, strlen(json), &p);
    if (rc != RP_RESULT_OK) fail_msg("policy %s: %s", json, last_error());
    return p;
}

/* A recognisable pattern for "this output was not written". */
static rp_decision sentinel_decision(void) {
    rp_decision d;
    memset(&d, 0xAB, sizeof d);
    return d;
}

static void assert_untouched(const rp_decision *d) {
    rp_decision s = sentinel_decision();
    assert_memory_equal(d, &s, sizeof s);
}

/* ---- version ----------------------------------------------------------------------------- */

static void version_agrees_across_header_cargo_and_runtime(void **state) {
    (void)state;
    char composed[64];
    snprintf(composed, sizeof composed, "%d.%d.%d", RP_VERSION_MAJOR, RP_VERSION_MINOR, RP_VERSION_PATCH);
    assert_string_equal(RP_VERSION, EXPECTED_VERSION);
    assert_string_equal(composed, RP_VERSION);
    assert_string_equal(rp_version(), RP_VERSION);
}

/* ---- results and messages ---------------------------------------------------------------- */

static void every_result_has_a_stable_code_name(void **state) {
    (void)state;
    static const struct {
        rp_result code;
        const char *name;
    } expected[] = {
        {RP_RESULT_OK, "ok"},
        {RP_RESULT_UNKNOWN_REASON, "unknown_reason"},
        {RP_RESULT_UNKNOWN_NAME, "unknown_name"},
        {RP_RESULT_INVALID_DURATION, "invalid_duration"},
        {RP_RESULT_INVALID_RANDOM, "invalid_random"},
        {RP_RESULT_OUT_OF_RANGE, "out_of_range"},
        {RP_RESULT_INVALID_TYPE, "invalid_type"},
        {RP_RESULT_UNKNOWN_FIELD, "unknown_field"},
        {RP_RESULT_MISSING_FIELD, "missing_field"},
        {RP_RESULT_MALFORMED_JSON, "malformed_json"},
        {RP_RESULT_UNSUPPORTED_VERSION, "unsupported_version"},
        {RP_RESULT_NULL_POINTER, "null_pointer"},
        {RP_RESULT_INVALID_ENUM, "invalid_enum"},
        {RP_RESULT_INVALID_UTF8, "invalid_utf8"},
        {RP_RESULT_PANIC, "panic"},
        {RP_RESULT_OTHER_ERROR, "other_error"},
        {RP_RESULT_POISONED, "poisoned"},
        {RP_RESULT_INVALID_HANDLE, "invalid_handle"},
    };
    /* The numbers are ABI: pin them. */
    assert_int_equal(RP_RESULT_UNKNOWN_REASON, 1);
    assert_int_equal(RP_RESULT_UNSUPPORTED_VERSION, 10);
    assert_int_equal(RP_RESULT_NULL_POINTER, 100);
    assert_int_equal(RP_RESULT_PANIC, 103);
    assert_int_equal(RP_RESULT_OTHER_ERROR, 105);
    assert_int_equal(RP_RESULT_POISONED, 106);
    assert_int_equal(RP_RESULT_INVALID_HANDLE, 107);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        assert_string_equal(rp_result_code_name(expected[i].code), expected[i].name);
    /* Numbers that name no result (104 was buffer_too_small, never reused) have no name. */
    assert_null(rp_result_code_name(11));
    assert_null(rp_result_code_name(104));
    assert_null(rp_result_code_name(UINT32_MAX));
}

static void last_error_names_the_field_and_survives_success(void **state) {
    (void)state;
    rp_policy *p = NULL;
    const char *bad = "{\"backoff\": {\"kind\": \"exponential\", \"min_ms\": 9, \"max_ms\": 3}}";
    assert_int_equal(rp_policy_from_json(bad, strlen(bad), &p), RP_RESULT_OUT_OF_RANGE);
    assert_null(p);
    const char *detail = rp_last_error_message();
    assert_string_equal(detail, "backoff.min_ms: 9 is out of range: expected at most max_ms");
    /* A success neither clears nor moves it. */
    rp_classification c;
    OK(rp_classify_analytics(23000, &c));
    assert_ptr_equal(rp_last_error_message(), detail);
    assert_string_equal(rp_last_error_message(), "backoff.min_ms: 9 is out of range: expected at most max_ms");
    assert_string_equal(rp_last_error_field(), "backoff.min_ms");
    /* The next failure replaces it, naming the value. */
    assert_int_equal(rp_enum_from_name(RP_ENUM_REASON, "NOPE", &(rp_reason){0}), RP_RESULT_UNKNOWN_REASON);
    assert_non_null(strstr(last_error(), "NOPE"));
}

/* ---- NULL pointers: every required pointer of every function ---------------------------- */

static bool never_called(void *user_data, const rp_request *r, rp_reason reason, uint64_t *delay) {
    (void)user_data, (void)r, (void)reason, (void)delay;
    fail_msg("strategy called on a failing call");
    return false;
}

static void every_required_pointer_is_checked(void **state) {
    (void)state;
    const rp_result N = RP_RESULT_NULL_POINTER;
    rp_request req = kv_request(RP_KV_OPERATION_GET, 0, 0, 100);
    rp_decision d = sentinel_decision();
    rp_classification c;
    rp_policy *p = policy_from("{}");
    rp_policy *untouched_policy = NULL;
    rp_error_map *m = NULL;
    const char *name = NULL;
    char *text = NULL;
    bool decided;
    rp_reason r;

    assert_int_equal(rp_enum_name(RP_ENUM_REASON, RP_REASON_KV_LOCKED, NULL), N);
    assert_int_equal(rp_enum_from_name(RP_ENUM_REASON, NULL, &r), N);
    assert_int_equal(rp_enum_from_name(RP_ENUM_REASON, "KV_LOCKED", NULL), N);
    assert_int_equal(rp_rule_section(RP_RULE_FAIL_FAST, NULL), N);
    assert_int_equal(rp_error_map_from_json(NULL, 2, &m), N); /* NULL text with a length */
    assert_int_equal(rp_error_map_from_json("{}", 2, NULL), N);
    assert_int_equal(rp_classify_kv(RP_KV_OPERATION_GET, 7, NULL, NULL, NULL), N);
    assert_int_equal(rp_classify_query(4050, "x", 1, false, NULL, NULL), N);
    assert_int_equal(rp_classify_query(4050, NULL, 3, false, NULL, &c), N);
    assert_int_equal(rp_classify_analytics(23000, NULL), N);
    assert_int_equal(rp_classify_search(429, NULL), N);
    assert_int_equal(rp_classify_views(302, "", 0, NULL), N);
    assert_int_equal(rp_classify_views(302, NULL, 5, &c), N);
    assert_int_equal(rp_policy_from_json(NULL, 2, &untouched_policy), N);
    assert_int_equal(rp_policy_from_json("{}", 2, NULL), N);
    assert_int_equal(rp_decide(NULL, RP_REASON_KV_LOCKED, p, NULL, NULL, &d), N);
    assert_int_equal(rp_decide(NULL, RP_REASON_KV_LOCKED, p, never_called, NULL, &d), N);
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, NULL), N);
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, p, never_called, NULL, NULL), N);
    assert_int_equal(rp_decide_before_strategy(NULL, RP_REASON_KV_LOCKED, p, &decided, &d), N);
    assert_int_equal(rp_decide_before_strategy(&req, RP_REASON_KV_LOCKED, p, NULL, &d), N);
    assert_int_equal(rp_decide_before_strategy(&req, RP_REASON_KV_LOCKED, p, &decided, NULL), N);
    assert_int_equal(rp_decide_after_strategy(NULL, RP_REASON_KV_LOCKED, true, 5, &d), N);
    assert_int_equal(rp_decide_after_strategy(&req, RP_REASON_KV_LOCKED, true, 5, NULL), N);
    assert_int_equal(rp_decision_format(NULL, &text), N);
    assert_int_equal(rp_call_json(NULL, "{}", 2, &text), N);
    assert_int_equal(rp_call_json("http_date", NULL, 2, &text), N);
    assert_int_equal(rp_call_json("http_date", "{}", 2, NULL), N);
    /* previous_reasons NULL with a length. */
    req.previous_reasons_len = 2;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, p, NULL, NULL, &d), N);
    assert_non_null(strstr(last_error(), "request.previous_reasons: null pointer"));
    assert_string_equal(rp_last_error_field(), "request.previous_reasons");
    assert_untouched(&d);
    /* Nothing was written anywhere. */
    assert_null(name);
    assert_null(text);
    assert_null(m);
    assert_null(untouched_policy);
    /* A (pointer, length) text may be NULL with length 0: the empty text. */
    assert_int_equal(rp_policy_from_json(NULL, 0, &untouched_policy), RP_RESULT_MALFORMED_JSON);
    OK(rp_classify_views(302, NULL, 0, &c));
    /* The free functions accept NULL. */
    rp_policy_free(NULL);
    rp_error_map_free(NULL);
    rp_string_free(NULL);
    rp_policy_free(p);
}

/* ---- out-of-range enum values ------------------------------------------------------------ */

static void out_of_range_enum_values_are_invalid_enum(void **state) {
    (void)state;
    const rp_result E = RP_RESULT_INVALID_ENUM;
    const char *name = "untouched";
    uint32_t value = 1234;
    rp_classification c;
    rp_decision d = sentinel_decision();
    char *line = NULL;

    assert_int_equal(rp_enum_name(RP_ENUM_REASON, 21, &name), E);
    assert_string_equal(last_error(), "value: 21 is not a valid rp_reason");
    assert_string_equal(rp_last_error_field(), "value");
    assert_int_equal(rp_enum_name(RP_ENUM_REASON, UINT32_MAX, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_SERVICE, 7, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_KV_OPERATION, 24, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_HTTP_METHOD, 7, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_STRATEGY, 2, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_NO_RETRY_CAUSE, 6, &name), E);
    assert_int_equal(rp_enum_name(RP_ENUM_RULE, 10, &name), E);
    assert_int_equal(rp_enum_name(30, 0, &name), E);
    assert_string_equal(last_error(), "kind: 30 is not a valid rp_enum");
    assert_int_equal(rp_enum_from_name(99, "KV_LOCKED", &value), E);
    assert_int_equal(rp_rule_section(10, &name), E);
    assert_string_equal(name, "untouched");
    assert_int_equal(value, 1234);
    assert_int_equal(rp_classify_kv(24, 7, NULL, NULL, &c), E);

    rp_request req = kv_request(RP_KV_OPERATION_GET, 0, 0, 2500);
    assert_int_equal(rp_decide(&req, 21, NULL, NULL, NULL, &d), E);
    assert_non_null(strstr(last_error(), "reason"));
    req.operation.service = 99;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d), E);
    assert_string_equal(last_error(), "request.operation.service: 99 is not a valid rp_service");
    req.operation.service = RP_SERVICE_KV;
    req.operation.kv_operation = 24;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d), E);
    req.operation.service = RP_SERVICE_MANAGEMENT;
    req.operation.method = 7;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d), E);
    assert_non_null(strstr(last_error(), "method"));
    /* A field the service does not use is not read. */
    req.operation.service = RP_SERVICE_SEARCH;
    rp_decision ok;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &ok));
    req.operation.service = RP_SERVICE_KV;
    req.operation.kv_operation = RP_KV_OPERATION_GET;
    req.has_strategy = true;
    req.strategy = 2;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d), E);
    req.has_strategy = false;
    rp_reason previous[] = {RP_REASON_KV_LOCKED, 77};
    req.previous_reasons = previous;
    req.previous_reasons_len = 2;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d), E);
    assert_string_equal(last_error(), "request.previous_reasons[1]: 77 is not a valid rp_reason");
    assert_untouched(&d);

    rp_decision bad = ok;
    bad.rule = 10;
    assert_int_equal(rp_decision_format(&bad, &line), E);
    bad = ok;
    bad.cause = 99;
    assert_int_equal(rp_decision_format(&bad, &line), E);
    bad = ok;
    bad.retry = false; /* a no-retry without a cause */
    assert_int_equal(rp_decision_format(&bad, &line), RP_RESULT_MISSING_FIELD);
    assert_non_null(strstr(last_error(), "decision.cause"));
    assert_null(line);
}

/* ---- invalid UTF-8 ----------------------------------------------------------------------- */

static void invalid_utf8_is_a_result_code(void **state) {
    (void)state;
    const rp_result U = RP_RESULT_INVALID_UTF8;
    const char bad[] = "KV_\xff\xfeLOCKED";
    rp_reason r = 1234;
    rp_classification c;
    rp_policy *p = NULL;
    char *out = NULL;
    assert_int_equal(rp_enum_from_name(RP_ENUM_REASON, bad, &r), U);
    assert_string_equal(last_error(), "name: invalid UTF-8 at byte 3");
    assert_int_equal(r, 1234);
    assert_int_equal(rp_enum_from_name(RP_ENUM_STRATEGY, "\xc3", &(rp_strategy){0}), U);
    assert_int_equal(rp_classify_query(5000, bad, sizeof bad - 1, false, NULL, &c), U);
    assert_int_equal(rp_classify_views(404, bad, sizeof bad - 1, &c), U);
    const char json[] = "{\"strategy\": \"\xff\"}";
    assert_int_equal(rp_policy_from_json(json, sizeof json - 1, &p), U);
    assert_null(p);
    assert_non_null(strstr(last_error(), "json: invalid UTF-8 at byte 14"));
    assert_int_equal(rp_error_map_from_json(json, sizeof json - 1, &(rp_error_map *){NULL}), U);
    assert_int_equal(rp_call_json("is_idempotent", json, sizeof json - 1, &out), U);
    assert_int_equal(rp_call_json(bad, "{}", 2, &out), U);
    assert_null(out);
}

/* ---- malformed JSON and bad documents ---------------------------------------------------- */

static void malformed_json_and_bad_documents_are_typed_errors(void **state) {
    (void)state;
    rp_policy *p = NULL;
    rp_error_map *m = NULL;
    char *out = NULL;
    static const struct {
        const char *json;
        rp_result expected;
        const char *detail;
    } policies[] = {
        {"{\"strategy\": ", RP_RESULT_MALFORMED_JSON, "malformed JSON at line 1"},
        {"{} x", RP_RESULT_MALFORMED_JSON, "malformed JSON"},
        {"", RP_RESULT_MALFORMED_JSON, "malformed JSON"},
        {"[1, 2]", RP_RESULT_INVALID_TYPE, ""},
        {"{\"stratgy\": \"fail_fast\"}", RP_RESULT_UNKNOWN_FIELD, "stratgy"},
        {"{\"strategy\": \"always\"}", RP_RESULT_UNKNOWN_NAME, "strategy"},
        {"{\"version\": 2}", RP_RESULT_UNSUPPORTED_VERSION, "version"},
        {"{\"backoff\": {\"kind\": \"fixed\", \"delay_ms\": -5}}", RP_RESULT_INVALID_DURATION, "delay_ms"},
        {"{\"compat\": {\"retry_kv_busy\": 1}}", RP_RESULT_INVALID_TYPE, "compat.retry_kv_busy"},
    };
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        rp_result rc = rp_policy_from_json(policies[i].json, strlen(policies[i].json), &p);
        if (rc != policies[i].expected) fail_msg("%s: got %u (%s)", policies[i].json, rc, last_error());
        assert_null(p);
        assert_non_null(strstr(last_error(), policies[i].detail));
    }
    /* A length shorter than the text: only that prefix is read. */
    const char *doc = "{\"jitter\": \"full\"}";
    assert_int_equal(rp_policy_from_json(doc, 5, &p), RP_RESULT_MALFORMED_JSON);
    assert_int_equal(rp_error_map_from_json("nope", 4, &m), RP_RESULT_MALFORMED_JSON);
    assert_int_equal(rp_error_map_from_json("{\"version\": 1}", 14, &m), RP_RESULT_MISSING_FIELD);
    assert_null(m);
    assert_int_equal(rp_call_json("is_idempotent", "[", 1, &out), RP_RESULT_MALFORMED_JSON);
    assert_int_equal(rp_call_json("is_idempotent", "{\"service\": \"kv\"}", 17, &out), RP_RESULT_MISSING_FIELD);
    assert_non_null(strstr(last_error(), "operation"));
    assert_null(out);
}

/* ---- random draws ---------------------------------------------------------------------- */

static void bad_random_draws_are_invalid_random(void **state) {
    (void)state;
    rp_policy *jittered = policy_from("{\"jitter\": \"full\"}");
    rp_request req = kv_request(RP_KV_OPERATION_GET, 1, 0, 2500);
    rp_decision d = sentinel_decision();
    const double bad[] = {1.0, -0.1, 1.5, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        req.has_random = true;
        req.random = bad[i];
        assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, jittered, NULL, NULL, &d), RP_RESULT_INVALID_RANDOM);
    }
    /* Jitter without a draw: the core asks for it. */
    req.has_random = false;
    assert_int_equal(rp_decide(&req, RP_REASON_KV_LOCKED, jittered, NULL, NULL, &d), RP_RESULT_MISSING_FIELD);
    assert_non_null(strstr(last_error(), "random"));
    assert_untouched(&d);
    rp_policy_free(jittered);
}

/* ---- decisions --------------------------------------------------------------------------- */

static void readme_example_is_capped_then_cancelled(void **state) {
    (void)state;
    rp_request req = kv_request(RP_KV_OPERATION_UPSERT, 7, 2000, 2500);
    rp_decision d;
    char *line = NULL;
    OK(rp_decide(&req, RP_REASON_KV_NOT_MY_VBUCKET, NULL, NULL, NULL, &d));
    assert_true(d.retry);
    assert_int_equal(d.delay_ms, 500);
    assert_true(d.capped);
    assert_true(d.then_cancel);
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_NONE);
    assert_int_equal(d.rule, RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF);
    assert_int_equal(d.reason, RP_REASON_KV_NOT_MY_VBUCKET);
    assert_int_equal(d.attempts, 7);
    assert_false(d.idempotent);
    OK(rp_decision_format(&d, &line));
    assert_string_equal(line,
                        "retry 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, "
                        "rule always_retry_controlled_backoff; RFC 0049, Retry Orchestration; Controlled "
                        "Backoff for Always Retry)");
    rp_string_free(line);
}

static void decisions_follow_the_core_rules(void **state) {
    (void)state;
    rp_decision d;
    const char *text;
    /* Not idempotent and the reason forbids non-idempotent retry. */
    rp_request req = kv_request(RP_KV_OPERATION_UPSERT, 0, 0, 2500);
    OK(rp_decide(&req, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &d));
    assert_false(d.retry);
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT);
    assert_int_equal(d.rule, RP_RULE_BEST_EFFORT_NOT_IDEMPOTENT);
    assert_int_equal(d.delay_ms, 0);
    OK(rp_enum_name(RP_ENUM_NO_RETRY_CAUSE, d.cause, &text));
    assert_string_equal(text, "not_idempotent");
    OK(rp_rule_section(d.rule, &text));
    assert_string_equal(text, "RFC 0049, Best Effort");
    /* The idempotent override makes it retryable: exponential 1, 2, 4 ... ms. */
    req.has_idempotent = true;
    req.idempotent = true;
    req.attempts = 3;
    OK(rp_decide(&req, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &d));
    assert_true(d.retry);
    assert_int_equal(d.delay_ms, 8);
    assert_true(d.idempotent);
    /* At the deadline nothing is retried, always-retry reasons included. */
    req = kv_request(RP_KV_OPERATION_GET, 0, 2500, 2500);
    OK(rp_decide(&req, RP_REASON_KV_NOT_MY_VBUCKET, NULL, NULL, NULL, &d));
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_DEADLINE_PASSED);
    /* UNKNOWN is never retried. */
    req.elapsed_ms = 0;
    OK(rp_decide(&req, RP_REASON_UNKNOWN, NULL, NULL, NULL, &d));
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_UNKNOWN_REASON);
    /* Fail fast as a request override; as the policy's strategy; always-retry still retries. */
    req.has_strategy = true;
    req.strategy = RP_STRATEGY_FAIL_FAST;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d));
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_STRATEGY_DECLINED);
    assert_int_equal(d.rule, RP_RULE_FAIL_FAST);
    req.has_strategy = false;
    rp_policy *ff = policy_from("{\"strategy\": \"fail_fast\"}");
    OK(rp_decide(&req, RP_REASON_KV_TEMPORARY_FAILURE, ff, NULL, NULL, &d));
    assert_int_equal(d.rule, RP_RULE_FAIL_FAST);
    OK(rp_decide(&req, RP_REASON_KV_NOT_MY_VBUCKET, ff, NULL, NULL, &d));
    assert_true(d.retry);
    rp_policy_free(ff);
    /* Full jitter with the caller's draw. */
    rp_policy *jittered = policy_from("{\"jitter\": \"full\"}");
    req.attempts = 4; /* 16 ms before jitter */
    req.has_random = true;
    req.random = 0.5;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, jittered, NULL, NULL, &d));
    assert_int_equal(d.delay_ms, 8);
    rp_policy_free(jittered);
    /* Previous reasons are accepted. */
    rp_reason previous[] = {RP_REASON_KV_LOCKED, RP_REASON_KV_LOCKED};
    req.has_random = false;
    req.previous_reasons = previous;
    req.previous_reasons_len = 2;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &d));
    assert_int_equal(d.delay_ms, 16);
}

/* Whether the decision counted `op` as idempotent (decided after SOCKET_CLOSED_WHILE_IN_FLIGHT, which
 * retries only idempotent requests, so the decision shows it twice). */
static bool counted_idempotent(rp_operation op) {
    rp_request req = kv_request(RP_KV_OPERATION_GET, 0, 0, 2500);
    rp_decision d;
    req.operation = op;
    OK(rp_decide(&req, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &d));
    assert_int_equal(d.retry, d.idempotent);
    return d.idempotent;
}

static void idempotency_follows_the_rfc_list_and_overrides(void **state) {
    (void)state;
    rp_operation op = {RP_SERVICE_KV, RP_KV_OPERATION_GET, false, RP_HTTP_METHOD_GET};
    assert_true(counted_idempotent(op));
    op.kv_operation = RP_KV_OPERATION_EXISTS;
    assert_false(counted_idempotent(op));
    op.service = RP_SERVICE_QUERY;
    assert_false(counted_idempotent(op));
    op.readonly = true;
    assert_true(counted_idempotent(op));
    op.service = RP_SERVICE_MANAGEMENT;
    op.method = RP_HTTP_METHOD_POST;
    assert_false(counted_idempotent(op));
    op.method = RP_HTTP_METHOD_GET;
    assert_true(counted_idempotent(op));
    /* The request's override wins over the list. */
    rp_request req = kv_request(RP_KV_OPERATION_UPSERT, 0, 0, 2500);
    rp_decision d;
    req.has_idempotent = true;
    req.idempotent = true;
    OK(rp_decide(&req, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &d));
    assert_true(d.idempotent && d.retry);
    /* The RFC list itself, through the JSON API. */
    char *out = NULL;
    const char *json = "{\"service\": \"cluster_manager\", \"method\": \"GET\"}";
    OK(rp_call_json("is_idempotent", json, strlen(json), &out));
    assert_string_equal(out, "{\"idempotent\":true}");
    rp_string_free(out);
}

/* A service reads only its own operation fields: the bytes of the others (as an uninitialised
 * struct may hold; most are no valid bool) change nothing, on any call. */
static void operation_fields_a_service_does_not_use_are_never_read(void **state) {
    (void)state;
    const rp_service services[] = {RP_SERVICE_KV,     RP_SERVICE_QUERY, RP_SERVICE_ANALYTICS,
                                   RP_SERVICE_SEARCH, RP_SERVICE_VIEWS, RP_SERVICE_CLUSTER_MANAGER,
                                   RP_SERVICE_MANAGEMENT};
    const int garbage[] = {0x01, 0x02, 0x10, 0x33, 0xA5, 0xFF};
    for (size_t i = 0; i < sizeof services / sizeof services[0] * sizeof garbage / sizeof garbage[0]; i++) {
        rp_service s = services[i % (sizeof services / sizeof services[0])];
        int byte = garbage[i / (sizeof services / sizeof services[0])];
        rp_request clean;
        memset(&clean, 0, sizeof clean);
        clean.operation.service = s;
        clean.attempts = 2;
        clean.elapsed_ms = 100;
        clean.timeout_ms = 2500;
        rp_request dirty = clean;
        memset(&dirty.operation, byte, sizeof dirty.operation);
        dirty.operation.service = s;
        if (s == RP_SERVICE_KV) dirty.operation.kv_operation = clean.operation.kv_operation;
        if (s == RP_SERVICE_QUERY || s == RP_SERVICE_ANALYTICS) dirty.operation.readonly = clean.operation.readonly;
        if (s == RP_SERVICE_CLUSTER_MANAGER || s == RP_SERVICE_MANAGEMENT) dirty.operation.method = clean.operation.method;
        for (int call = 0; call < 3; call++) {
            rp_decision want, got;
            OK(rp_decide(&clean, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &want));
            OK(rp_decide(&dirty, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &got));
            assert_same_decision(&want, &got);
        }
    }
}

/* ---- bool bytes -------------------------------------------------------------------------- */

/* Writes `byte` into the bool at `offset` of the struct at `base`, as a ctypes, cgo or Zig host
 * that fills the struct's bytes may (a C program cannot store 2 in a bool without this). */
static void put_byte(void *base, size_t offset, unsigned char byte) {
    memcpy((unsigned char *)base + offset, &byte, 1);
}

/* A host strategy as such hosts may write it: it returns a byte, not a C bool. */
static unsigned char byte_strategy(void *user_data, const rp_request *request, rp_reason reason, uint64_t *delay_ms) {
    (void)request, (void)reason;
    *delay_ms = 40;
    return *(const unsigned char *)user_data;
}

typedef rp_result (*after_fn)(const rp_request *, rp_reason, unsigned char, uint64_t, rp_decision *);

/* Regression (found on the old main, where the idempotent byte indexed a table): every bool the
 * library reads from caller memory counts any non-zero byte as true. An upsert with 2,490 ms left
 * and an idempotent override of 2, 0x80 or 0xff is retried exactly as with true, never
 * "deadline passed". */
static void bool_bytes_other_than_0_and_1_read_as_true(void **state) {
    (void)state;
    static const unsigned char bytes[] = {2, 0x7f, 0x80, 0xfe, 0xff};
    rp_request plain = kv_request(RP_KV_OPERATION_UPSERT, 3, 10, 2500);
    plain.has_idempotent = true;
    plain.idempotent = true;
    rp_decision want, got;
    OK(rp_decide(&plain, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &want));
    assert_true(want.retry);
    assert_int_equal(want.rule, RP_RULE_BEST_EFFORT_BACKOFF);
    assert_int_equal(want.delay_ms, 8);
    assert_true(want.idempotent);
    rp_policy *jittered = policy_from("{\"jitter\": \"full\"}");
    rp_decision fail_fast, drawn;
    plain.has_strategy = true;
    plain.strategy = RP_STRATEGY_FAIL_FAST;
    OK(rp_decide(&plain, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &fail_fast));
    assert_int_equal(fail_fast.rule, RP_RULE_FAIL_FAST);
    plain.has_strategy = false;
    plain.has_random = true;
    plain.random = 0.5;
    OK(rp_decide(&plain, RP_REASON_KV_LOCKED, jittered, NULL, NULL, &drawn));
    assert_int_equal(drawn.delay_ms, 4);
    plain.has_random = false;
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        unsigned char b = bytes[i];
        rp_request odd = plain;
        put_byte(&odd, offsetof(rp_request, has_idempotent), b);
        put_byte(&odd, offsetof(rp_request, idempotent), b);
        OK(rp_decide(&odd, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &got));
        assert_same_decision(&want, &got);
        bool decided = true;
        OK(rp_decide_before_strategy(&odd, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, &decided, &got));
        assert_false(decided);
        /* The host strategy's answer, and the retry argument, as bytes. */
        OK(rp_decide(&odd, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL,
                     (rp_strategy_fn)(void (*)(void))byte_strategy, &b, &got));
        assert_true(got.retry);
        assert_int_equal(got.delay_ms, 40);
        after_fn after = (after_fn)(void (*)(void))rp_decide_after_strategy;
        OK(after(&odd, RP_REASON_KV_LOCKED, b, 40, &got));
        assert_true(got.retry);
        assert_int_equal(got.delay_ms, 40);
        /* The other flags of a request. */
        rp_request flags = plain;
        put_byte(&flags, offsetof(rp_request, has_strategy), b);
        flags.strategy = RP_STRATEGY_FAIL_FAST;
        OK(rp_decide(&flags, RP_REASON_KV_LOCKED, NULL, NULL, NULL, &got));
        assert_same_decision(&fail_fast, &got);
        flags = plain;
        put_byte(&flags, offsetof(rp_request, has_random), b);
        flags.random = 0.5;
        OK(rp_decide(&flags, RP_REASON_KV_LOCKED, jittered, NULL, NULL, &got));
        assert_same_decision(&drawn, &got);
        /* A read-only query: idempotent, so retried after SOCKET_CLOSED_WHILE_IN_FLIGHT. */
        rp_request query = kv_request(RP_KV_OPERATION_GET, 3, 10, 2500);
        query.operation.service = RP_SERVICE_QUERY;
        put_byte(&query, offsetof(rp_request, operation) + offsetof(rp_operation, readonly), b);
        OK(rp_decide(&query, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &got));
        assert_true(got.retry && got.idempotent);
        /* A decision handed back for its log line: retry and capped as bytes. */
        rp_decision logged = want;
        put_byte(&logged, offsetof(rp_decision, retry), b);
        put_byte(&logged, offsetof(rp_decision, capped), b);
        char *line = NULL;
        OK(rp_decision_format(&logged, &line));
        assert_non_null(strstr(line, "retry 4 after 8 ms, capped to the timeout"));
        rp_string_free(line);
    }
    /* And a zero byte is false. */
    rp_request zero = plain;
    put_byte(&zero, offsetof(rp_request, idempotent), 0);
    OK(rp_decide(&zero, RP_REASON_SOCKET_CLOSED_WHILE_IN_FLIGHT, NULL, NULL, NULL, &got));
    assert_int_equal(got.cause, RP_NO_RETRY_CAUSE_NOT_IDEMPOTENT);
    rp_policy_free(jittered);
}

/* ---- strategies -------------------------------------------------------------------------- */

typedef struct {
    int calls;
    const rp_request *seen_request;
    rp_reason seen_reason;
    bool retry;
    uint64_t delay_ms;
} strategy_state;

static bool host_strategy(void *user_data, const rp_request *request, rp_reason reason, uint64_t *delay_ms) {
    strategy_state *s = user_data;
    s->calls++;
    s->seen_request = request;
    s->seen_reason = reason;
    *delay_ms = s->delay_ms;
    return s->retry;
}

static void host_strategy_is_consulted_only_where_the_core_allows(void **state) {
    (void)state;
    rp_request req = kv_request(RP_KV_OPERATION_UPSERT, 2, 2000, 2500);
    strategy_state s = {0, NULL, 0, true, 10000};
    rp_decision d;
    /* Consulted for a strategy reason; its delay is capped to the 500 ms left. */
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, host_strategy, &s, &d));
    assert_int_equal(s.calls, 1);
    assert_ptr_equal(s.seen_request, &req);
    assert_int_equal(s.seen_reason, RP_REASON_KV_LOCKED);
    assert_true(d.retry);
    assert_int_equal(d.rule, RP_RULE_CUSTOM_STRATEGY);
    assert_int_equal(d.delay_ms, 500);
    assert_true(d.capped && d.then_cancel);
    /* Declining. */
    s.retry = false;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, host_strategy, &s, &d));
    assert_int_equal(s.calls, 2);
    assert_false(d.retry);
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_STRATEGY_DECLINED);
    assert_int_equal(d.rule, RP_RULE_CUSTOM_STRATEGY);
    /* Always-retry, UNKNOWN and the deadline are decided before it: not called. */
    OK(rp_decide(&req, RP_REASON_KV_NOT_MY_VBUCKET, NULL, host_strategy, &s, &d));
    assert_int_equal(d.rule, RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF);
    OK(rp_decide(&req, RP_REASON_UNKNOWN, NULL, host_strategy, &s, &d));
    assert_int_equal(d.rule, RP_RULE_UNKNOWN_NEVER_RETRIED);
    req.elapsed_ms = 2500;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, host_strategy, &s, &d));
    assert_int_equal(d.rule, RP_RULE_DEADLINE_PASSED);
    /* A built-in override on the request wins over the host strategy. */
    req.elapsed_ms = 0;
    req.has_strategy = true;
    req.strategy = RP_STRATEGY_FAIL_FAST;
    OK(rp_decide(&req, RP_REASON_KV_LOCKED, NULL, host_strategy, &s, &d));
    assert_int_equal(d.rule, RP_RULE_FAIL_FAST);
    assert_int_equal(s.calls, 2);
    /* A failing call (bad reason) never reaches the strategy. */
    assert_int_equal(rp_decide(&req, 99, NULL, never_called, NULL, &d), RP_RESULT_INVALID_ENUM);
}

static void before_and_after_strategy_split(void **state) {
    (void)state;
    rp_request req = kv_request(RP_KV_OPERATION_GET, 1, 100, 2500);
    bool decided = true;
    rp_decision d = sentinel_decision();
    OK(rp_decide_before_strategy(&req, RP_REASON_KV_LOCKED, NULL, &decided, &d));
    assert_false(decided);
    assert_untouched(&d);
    OK(rp_decide_after_strategy(&req, RP_REASON_KV_LOCKED, true, 3000, &d));
    assert_int_equal(d.rule, RP_RULE_CUSTOM_STRATEGY);
    assert_int_equal(d.delay_ms, 2400);
    assert_true(d.capped);
    OK(rp_decide_after_strategy(&req, RP_REASON_KV_LOCKED, false, 0, &d));
    assert_int_equal(d.cause, RP_NO_RETRY_CAUSE_STRATEGY_DECLINED);
    OK(rp_decide_before_strategy(&req, RP_REASON_VIEWS_NO_ACTIVE_PARTITION, NULL, &decided, &d));
    assert_true(decided);
    assert_int_equal(d.delay_ms, 10);
    assert_int_equal(d.rule, RP_RULE_ALWAYS_RETRY_CONTROLLED_BACKOFF);
}

/* ---- classification ---------------------------------------------------------------------- */

static void classification_uses_the_core_tables(void **state) {
    (void)state;
    rp_classification c, again;
    OK(rp_classify_kv(RP_KV_OPERATION_UPSERT, 0x07, NULL, NULL, &c));
    assert_true(c.has_reason);
    assert_int_equal(c.reason, RP_REASON_KV_NOT_MY_VBUCKET);
    assert_string_equal(c.rule, "kv_response_code");
    assert_string_equal(c.section, "RFC 0049, Response Code Retry List");
    assert_null(c.surface_as);
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0x07, NULL, NULL, &again));
    assert_ptr_equal(c.rule, again.rule); /* static strings */
    OK(rp_classify_kv(RP_KV_OPERATION_UNLOCK, 0x09, NULL, NULL, &c));
    assert_false(c.has_reason);
    assert_string_equal(c.surface_as, "cas_mismatch");
    /* EBUSY: not retried unless the policy's compat option says so. */
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0x85, NULL, NULL, &c));
    assert_false(c.has_reason);
    rp_policy *p = policy_from("{\"compat\": {\"retry_kv_busy\": true}}");
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0x85, NULL, p, &c));
    assert_int_equal(c.reason, RP_REASON_KV_TEMPORARY_FAILURE);
    const char *msg4080 = "";
    OK(rp_classify_query(4080, msg4080, 0, false, NULL, &c));
    assert_false(c.has_reason);
    rp_policy_free(p);
    p = policy_from("{\"compat\": {\"query_retry_4040_to_4090\": true}}");
    OK(rp_classify_query(4080, msg4080, 0, false, p, &c));
    assert_int_equal(c.reason, RP_REASON_QUERY_PREPARED_STATEMENT_FAILURE);
    rp_policy_free(p);
    /* An unknown status consults the error map. */
    const char *map_json = "{\"version\": 1, \"revision\": 1, \"errors\": {"
                           "\"fff0\": {\"name\": \"X\", \"desc\": \"x\", \"attrs\": [\"temp\", \"retry-now\"]},"
                           "\"fff1\": {\"name\": \"Y\", \"desc\": \"y\", \"attrs\": [\"temp\"]}}}";
    rp_error_map *map = NULL;
    OK(rp_error_map_from_json(map_json, strlen(map_json), &map));
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0xfff0, map, NULL, &c));
    assert_int_equal(c.reason, RP_REASON_KV_ERROR_MAP_RETRY_INDICATED);
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0xfff1, map, NULL, &c));
    assert_false(c.has_reason);
    OK(rp_classify_kv(RP_KV_OPERATION_GET, 0xfff0, NULL, NULL, &c));
    assert_false(c.has_reason);
    rp_error_map_free(map);
    const char *msg = "queryport.indexNotFound";
    OK(rp_classify_query(5000, msg, strlen(msg), false, NULL, &c));
    assert_int_equal(c.reason, RP_REASON_QUERY_INDEX_NOT_FOUND);
    OK(rp_classify_query(4050, NULL, 0, false, NULL, &c));
    assert_int_equal(c.reason, RP_REASON_QUERY_PREPARED_STATEMENT_FAILURE);
    OK(rp_classify_analytics(23007, &c));
    assert_int_equal(c.reason, RP_REASON_ANALYTICS_TEMPORARY_FAILURE);
    OK(rp_classify_search(429, &c));
    assert_int_equal(c.reason, RP_REASON_SEARCH_TOO_MANY_REQUESTS);
    OK(rp_classify_views(302, NULL, 0, &c));
    assert_int_equal(c.reason, RP_REASON_VIEWS_NO_ACTIVE_PARTITION);
    const char *body = "{\"error\":\"x\",\"reason\":\"missing\"}";
    OK(rp_classify_views(404, body, strlen(body), &c));
    assert_int_equal(c.reason, RP_REASON_VIEWS_TEMPORARY_FAILURE);
}

/* ---- names ------------------------------------------------------------------------------- */

/* Every constant 0..count-1 of `kind` has a name that parses back to it; `count` names none. */
static void round_trip(const char *what, rp_enum kind, uint32_t count) {
    for (uint32_t v = 0; v < count; v++) {
        const char *text = NULL;
        uint32_t back = UINT32_MAX;
        if (rp_enum_name(kind, v, &text) != RP_RESULT_OK) fail_msg("%s %u has no name: %s", what, v, last_error());
        if (!text) continue; /* RP_NO_RETRY_CAUSE_NONE */
        if (rp_enum_from_name(kind, text, &back) != RP_RESULT_OK) fail_msg("%s %s does not parse", what, text);
        assert_int_equal(back, v);
    }
    const char *text = NULL;
    assert_int_equal(rp_enum_name(kind, count, &text), RP_RESULT_INVALID_ENUM);
}

static void every_constant_has_a_name_that_parses_back(void **state) {
    (void)state;
    round_trip("reason", RP_ENUM_REASON, 21);
    round_trip("service", RP_ENUM_SERVICE, 7);
    round_trip("kv operation", RP_ENUM_KV_OPERATION, 24);
    round_trip("http method", RP_ENUM_HTTP_METHOD, 7);
    round_trip("strategy", RP_ENUM_STRATEGY, 2);
    round_trip("no-retry cause", RP_ENUM_NO_RETRY_CAUSE, 6);
    round_trip("rule", RP_ENUM_RULE, 10);
    round_trip("retry cause", RP_ENUM_RETRY_CAUSE, 4);
    round_trip("budget event", RP_ENUM_BUDGET_EVENT, 6);
    round_trip("budget kind", RP_ENUM_BUDGET_KIND, 3);
    round_trip("budget rule", RP_ENUM_BUDGET_RULE, 6);
    round_trip("breaker outcome", RP_ENUM_BREAKER_OUTCOME, 3);
    round_trip("breaker state", RP_ENUM_BREAKER_STATE, 3);
    round_trip("breaker rule", RP_ENUM_BREAKER_RULE, 5);
    round_trip("run action", RP_ENUM_RUN_ACTION, 3);
    round_trip("run end", RP_ENUM_RUN_END, 6);
    round_trip("run signal", RP_ENUM_RUN_SIGNAL, 4);
    round_trip("breaker change rule", RP_ENUM_BREAKER_CHANGE_RULE, 6);
    const char *text;
    OK(rp_enum_name(RP_ENUM_REASON, RP_REASON_KV_LOCKED, &text));
    assert_string_equal(text, "KV_LOCKED");
    OK(rp_enum_name(RP_ENUM_KV_OPERATION, RP_KV_OPERATION_MUTATE_IN, &text));
    assert_string_equal(text, "mutate_in");
    OK(rp_enum_name(RP_ENUM_HTTP_METHOD, RP_HTTP_METHOD_DELETE, &text));
    assert_string_equal(text, "DELETE");
    OK(rp_enum_name(RP_ENUM_SERVICE, RP_SERVICE_CLUSTER_MANAGER, &text));
    assert_string_equal(text, "cluster_manager");
    OK(rp_enum_name(RP_ENUM_RULE, RP_RULE_BEST_EFFORT_BACKOFF, &text));
    assert_string_equal(text, "best_effort_backoff");
    OK(rp_enum_name(RP_ENUM_NO_RETRY_CAUSE, RP_NO_RETRY_CAUSE_NONE, &text));
    assert_null(text);
    OK(rp_rule_section(RP_RULE_FAIL_FAST, &text));
    assert_string_equal(text, "RFC 0049, Fail Fast");
    OK(rp_enum_name(RP_ENUM_RULE, RP_RULE_RETRY_QUOTA_EXHAUSTED, &text));
    assert_string_equal(text, "retry_quota_exhausted");
    OK(rp_rule_section(RP_RULE_RETRY_QUOTA_EXHAUSTED, &text));
    assert_non_null(strstr(text, "AWS SDKs and Tools Reference Guide"));
    OK(rp_enum_name(RP_ENUM_NO_RETRY_CAUSE, RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED, &text));
    assert_string_equal(text, "budget_exhausted");
    OK(rp_enum_name(RP_ENUM_BREAKER_STATE, RP_BREAKER_STATE_HALF_OPEN, &text));
    assert_string_equal(text, "half_open");
    rp_reason r;
    OK(rp_enum_from_name(RP_ENUM_REASON, "KV_SYNC_RE_COMMIT_IN_PROGRESS", &r)); /* the RFC's alias */
    assert_int_equal(r, RP_REASON_KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS);
    assert_int_equal(rp_enum_from_name(RP_ENUM_REASON, "kv_locked", &r), RP_RESULT_UNKNOWN_REASON);
    assert_int_equal(rp_enum_from_name(RP_ENUM_SERVICE, "eventing", &(rp_service){0}), RP_RESULT_UNKNOWN_NAME);
    assert_non_null(strstr(last_error(), "eventing"));
    assert_int_equal(rp_enum_from_name(RP_ENUM_STRATEGY, "always", &(rp_strategy){0}), RP_RESULT_UNKNOWN_NAME);
    assert_int_equal(rp_enum_from_name(RP_ENUM_KV_OPERATION, "", &(rp_kv_operation){0}), RP_RESULT_UNKNOWN_NAME);
}

/* ---- policy and the JSON API ------------------------------------------------------------- */

/* rp_call_json(function, input) as text; fails the test on an error. */
static char *call(const char *function, const char *input) {
    char *out = NULL;
    rp_result rc = rp_call_json(function, input, strlen(input), &out);
    if (rc != RP_RESULT_OK) fail_msg("%s %s: %s", function, input, last_error());
    return out;
}

static void policy_round_trips_through_the_json_api(void **state) {
    (void)state;
    /* parse_policy normalizes a document (every field present); the typed handle reads it back. */
    char *a = call("parse_policy", "{\"json\": \"{}\"}");
    const char *prefix = "{\"policy\":";
    assert_true(strncmp(a, prefix, strlen(prefix)) == 0);
    assert_non_null(strstr(a, "\"version\":1"));
    assert_non_null(strstr(a, "\"strategy\":\"best_effort\""));
    const char *inner = a + strlen(prefix); /* {"policy": <document>} */
    rp_policy *p = NULL;
    OK(rp_policy_from_json(inner, strlen(inner) - 1, &p));
    rp_policy_free(p);
    rp_string_free(a);
    /* Big values survive as strings. */
    a = call("parse_policy", "{\"json\": \"{\\\"backoff\\\":{\\\"kind\\\":\\\"exponential\\\",\\\"max_ms\\\":\\\"18446744073709551615\\\"}}\"}");
    assert_non_null(strstr(a, "\"max_ms\":\"18446744073709551615\""));
    rp_string_free(a);
}

static void call_json_reaches_the_functions_without_a_typed_api(void **state) {
    (void)state;
    static const uint64_t controlled[] = {1, 10, 50, 100, 500, 1000, 1000};
    for (uint32_t i = 0; i < 7; i++) {
        char input[32], expected[32];
        snprintf(input, sizeof input, "{\"attempt\": %u}", i);
        snprintf(expected, sizeof expected, "{\"delay_ms\":%u}", (unsigned)controlled[i]);
        char *out = call("controlled_backoff", input);
        assert_string_equal(out, expected);
        rp_string_free(out);
    }
    char *out = call("reason_flags", "{\"reason\": \"KV_COLLECTION_OUTDATED\"}");
    assert_non_null(strstr(out, "\"always_retry\":true"));
    rp_string_free(out);
    out = call("classify_dispatch", "{\"failure\": \"socket_closed_while_in_flight\"}");
    assert_non_null(strstr(out, "\"reason\":\"SOCKET_CLOSED_WHILE_IN_FLIGHT\""));
    assert_non_null(strstr(out, "RFC 0049, Network Time"));
    rp_string_free(out);
}

static void call_json_reaches_the_mongodb_and_http_rules(void **state) {
    (void)state;
    char *out = NULL;
    const char *in = "{\"request\":{\"operation\":{\"name\":\"insertOne\"}},\"error\":{\"kind\":\"network\"}}";
    OK(rp_call_json("mongodb_decide", in, strlen(in), &out));
    assert_non_null(strstr(out, "\"action\":\"retry\""));
    rp_string_free(out);
    const char *date = "{\"value\":\"Sun, 06 Nov 1994 08:49:37 GMT\"}";
    OK(rp_call_json("http_date", date, strlen(date), &out));
    assert_string_equal(out, "{\"unix_ms\":784111777000}");
    rp_string_free(out);
    /* Errors are result codes, and the output pointer is left alone. */
    char *untouched = (char *)0x1;
    assert_int_equal(rp_call_json("no_such_function", "{}", 2, &untouched), RP_RESULT_UNKNOWN_NAME);
    assert_ptr_equal(untouched, (char *)0x1);
    assert_int_equal(rp_call_json("http_date", "{\"value\":", 10, &untouched), RP_RESULT_MALFORMED_JSON);
    assert_int_equal(rp_call_json("http_date", "{}", 2, &untouched), RP_RESULT_MISSING_FIELD);
    assert_int_equal(rp_call_json(NULL, "{}", 2, &untouched), RP_RESULT_NULL_POINTER);
    assert_int_equal(rp_call_json("http_date", NULL, 2, &untouched), RP_RESULT_NULL_POINTER);
    assert_int_equal(rp_call_json("http_date", "{}", 2, NULL), RP_RESULT_NULL_POINTER);
    assert_ptr_equal(untouched, (char *)0x1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(call_json_reaches_the_mongodb_and_http_rules),
        cmocka_unit_test(call_json_reaches_the_functions_without_a_typed_api),
        cmocka_unit_test(version_agrees_across_header_cargo_and_runtime),
        cmocka_unit_test(every_result_has_a_stable_code_name),
        cmocka_unit_test(last_error_names_the_field_and_survives_success),
        cmocka_unit_test(every_required_pointer_is_checked),
        cmocka_unit_test(out_of_range_enum_values_are_invalid_enum),
        cmocka_unit_test(invalid_utf8_is_a_result_code),
        cmocka_unit_test(malformed_json_and_bad_documents_are_typed_errors),
        cmocka_unit_test(bad_random_draws_are_invalid_random),
        cmocka_unit_test(readme_example_is_capped_then_cancelled),
        cmocka_unit_test(decisions_follow_the_core_rules),
        cmocka_unit_test(idempotency_follows_the_rfc_list_and_overrides),
        cmocka_unit_test(operation_fields_a_service_does_not_use_are_never_read),
        cmocka_unit_test(bool_bytes_other_than_0_and_1_read_as_true),
        cmocka_unit_test(host_strategy_is_consulted_only_where_the_core_allows),
        cmocka_unit_test(before_and_after_strategy_split),
        cmocka_unit_test(classification_uses_the_core_tables),
        cmocka_unit_test(every_constant_has_a_name_that_parses_back),
        cmocka_unit_test(policy_round_trips_through_the_json_api),
    };
    return cmocka_run_group_tests_name("retrypolicy C API", tests, NULL, NULL);
}

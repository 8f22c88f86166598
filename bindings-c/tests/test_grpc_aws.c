/*
 * cmocka tests of gRPC's retry and hedging (gRFC A6) and the AWS SDKs' retry modes through the C
 * API: service configs and policies, rp_grpc_retry, rp_grpc_hedge, rp_aws_decide with an rp_budget
 * quota, and the rp_aws_rate_limiter. Expected values are worked out by hand from A6's text and
 * examples and from the SDKs' documented constants (the comments show the arithmetic); bad input is
 * a typed error naming the field, outputs stay untouched on failure, and the shared handles
 * (the throttling bucket, the rate limiter) hand out exactly their quota between threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define BIT(code) (1u << (code))

/* Writes `byte` into a bool as a host that fills structs byte by byte would (C's `= 2` stores 1). */
static void set_byte(bool *b, unsigned char byte) { memcpy(b, &byte, 1); }

/* gRFC A6's example retry policy. */
static const char *A6_RETRY = "{\"maxAttempts\": 4, \"initialBackoff\": \".1s\", \"maxBackoff\": \"1s\","
                              " \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}";
/* A6's hedging example: 4 attempts 500 ms apart, three non-fatal codes. */
static const char *A6_HEDGING = "{\"maxAttempts\": 4, \"hedgingDelay\": \"0.5s\","
                                " \"nonFatalStatusCodes\": [\"UNAVAILABLE\", \"INTERNAL\", \"ABORTED\"]}";

static rp_grpc_retry_policy *retry_policy(const char *json) {
    rp_grpc_retry_policy *p = NULL;
    if (rp_grpc_retry_policy_from_json(json, strlen(json), RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP, &p) != RP_RESULT_OK)
        fail_msg("retry policy %s: %s", json, rp_last_error_message());
    return p;
}

static rp_grpc_hedging_policy *hedging_policy(const char *json) {
    rp_grpc_hedging_policy *p = NULL;
    if (rp_grpc_hedging_policy_from_json(json, strlen(json), RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP, &p) != RP_RESULT_OK)
        fail_msg("hedging policy %s: %s", json, rp_last_error_message());
    return p;
}

static rp_budget *budget_from(const char *json) {
    rp_budget *b = NULL;
    if (rp_budget_from_json(json, strlen(json), &b) != RP_RESULT_OK) fail_msg("budget %s: %s", json, rp_last_error_message());
    return b;
}

static rp_grpc_retry_state first_attempt(void) {
    rp_grpc_retry_state s;
    memset(&s, 0, sizeof s);
    s.attempts = 1;
    return s;
}

static rp_grpc_attempt ended(rp_grpc_code status) {
    rp_grpc_attempt a;
    memset(&a, 0, sizeof a);
    a.status = status;
    return a;
}

/* ---- service configs and policies --------------------------------------------------------- */

/* A service config with A6's retry policy for a service, a hedging policy for one of its methods,
 * and a default whose maxAttempts of 7 the client's cap of 5 cuts. */
static const char *SERVICE_CONFIG =
    "{\"loadBalancingPolicy\": \"round_robin\", \"methodConfig\": ["
    " {\"name\": [{\"service\": \"helloworld.Greeter\"}], \"retryPolicy\": {\"maxAttempts\": 4,"
    "  \"initialBackoff\": \".1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [14]}},"
    " {\"name\": [{\"service\": \"helloworld.Greeter\", \"method\": \"SayGoodbye\"}], \"hedgingPolicy\":"
    "  {\"maxAttempts\": 3, \"hedgingDelay\": \"0.5s\", \"nonFatalStatusCodes\": [\"unavailable\", \"Internal\"]}},"
    " {\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 7, \"initialBackoff\": \"1.5s\", \"maxBackoff\": \"10s\","
    "  \"backoffMultiplier\": 1.5, \"retryableStatusCodes\": [\"ABORTED\", \"UNAVAILABLE\"]}, \"timeout\": \"2s\"}],"
    " \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}}";

static void a_service_config_matches_the_method_then_the_service_then_the_default(void **state) {
    (void)state;
    rp_grpc_service_config *config = NULL;
    OK(rp_grpc_service_config_from_json(SERVICE_CONFIG, strlen(SERVICE_CONFIG), RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP,
                                        &config));
    rp_grpc_method_policy m;
    rp_grpc_retry_params r;
    rp_grpc_hedging_params h;

    OK(rp_grpc_service_config_policy_for(config, "helloworld.Greeter", "SayHello", &m));
    assert_int_equal(m.matched, RP_GRPC_MATCH_SERVICE);
    assert_null(m.hedging);
    OK(rp_grpc_retry_policy_params(m.retry, &r));
    assert_int_equal(r.max_attempts, 4);
    assert_int_equal(r.initial_backoff_ns, 100000000);  /* ".1s" */
    assert_int_equal(r.max_backoff_ns, 1000000000);     /* "1s" */
    assert_true(r.backoff_multiplier == 2.0);
    assert_int_equal(r.retryable_status_codes, BIT(RP_GRPC_CODE_UNAVAILABLE)); /* 14 */
    rp_grpc_retry_policy_free(m.retry);

    OK(rp_grpc_service_config_policy_for(config, "helloworld.Greeter", "SayGoodbye", &m));
    assert_int_equal(m.matched, RP_GRPC_MATCH_EXACT);
    assert_null(m.retry);
    OK(rp_grpc_hedging_policy_params(m.hedging, &h));
    assert_int_equal(h.max_attempts, 3);
    assert_int_equal(h.hedging_delay_ns, 500000000);
    assert_int_equal(h.non_fatal_status_codes, BIT(RP_GRPC_CODE_UNAVAILABLE) | BIT(RP_GRPC_CODE_INTERNAL));
    rp_grpc_hedging_policy_free(m.hedging);

    OK(rp_grpc_service_config_policy_for(config, "other.Service", "", &m));
    assert_int_equal(m.matched, RP_GRPC_MATCH_DEFAULT);
    OK(rp_grpc_retry_policy_params(m.retry, &r));
    assert_int_equal(r.max_attempts, 5); /* 7, capped at the client's 5 without an error */
    assert_int_equal(r.initial_backoff_ns, 1500000000);
    assert_true(r.backoff_multiplier == 1.5);
    assert_int_equal(r.retryable_status_codes, BIT(RP_GRPC_CODE_ABORTED) | BIT(RP_GRPC_CODE_UNAVAILABLE));
    rp_grpc_retry_policy_free(m.retry);
    rp_grpc_service_config_free(config);

    /* A client that raises its cap gets the 7; a config without a default matches nothing. */
    OK(rp_grpc_service_config_from_json(SERVICE_CONFIG, strlen(SERVICE_CONFIG), 10, &config));
    OK(rp_grpc_service_config_policy_for(config, "x", "y", &m));
    OK(rp_grpc_retry_policy_params(m.retry, &r));
    assert_int_equal(r.max_attempts, 7);
    rp_grpc_retry_policy_free(m.retry);
    rp_grpc_service_config_free(config);
    const char *none = "{\"methodConfig\": [{\"name\": [{\"service\": \"a\"}]}]}";
    OK(rp_grpc_service_config_from_json(none, strlen(none), 5, &config));
    OK(rp_grpc_service_config_policy_for(config, "a", "m", &m)); /* a config without a policy */
    assert_int_equal(m.matched, RP_GRPC_MATCH_SERVICE);
    assert_null(m.retry);
    assert_null(m.hedging);
    OK(rp_grpc_service_config_policy_for(config, "b", "m", &m));
    assert_int_equal(m.matched, RP_GRPC_MATCH_NONE);
    char *throttling = (char *)"untouched";
    OK(rp_grpc_service_config_throttling(config, &throttling));
    assert_null(throttling); /* no retryThrottling */
    rp_grpc_service_config_free(config);
}

/* The config's retryThrottling becomes A6's bucket: 10 tokens, a failure takes one, retries stop at
 * or below half (so 4 retries under total failure: 9, 8, 7, 6 tokens), a success adds 0.1. */
static void a_service_configs_throttling_is_a6s_token_bucket(void **state) {
    (void)state;
    rp_grpc_service_config *config = NULL;
    char *doc = NULL;
    OK(rp_grpc_service_config_from_json(SERVICE_CONFIG, strlen(SERVICE_CONFIG), 5, &config));
    OK(rp_grpc_service_config_throttling(config, &doc));
    assert_non_null(strstr(doc, "\"token_bucket\""));
    rp_budget *bucket = budget_from(doc);
    rp_string_free(doc);
    rp_budget_verdict v;
    for (int i = 1; i <= 5; i++) {
        OK(rp_budget_record(bucket, 0, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE));
        OK(rp_budget_try_retry(bucket, 0, RP_RETRY_CAUSE_ERROR, &v));
        assert_int_equal(v.permitted, i < 5);
        assert_int_equal(v.balance, (uint64_t)(10 - i) * 1000);
    }
    OK(rp_budget_record(bucket, 0, RP_BUDGET_EVENT_SUCCESS, RP_RETRY_CAUSE_NONE));
    OK(rp_budget_permit(bucket, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_true(v.permitted);
    assert_int_equal(v.balance, 5100);
    rp_budget_free(bucket);
    rp_grpc_service_config_free(config);
}

static void an_invalid_service_config_or_policy_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_grpc_service_config *config = (rp_grpc_service_config *)0x1;
    rp_grpc_retry_policy *retry = (rp_grpc_retry_policy *)0x1;
    rp_grpc_hedging_policy *hedging = (rp_grpc_hedging_policy *)0x1;
    const char *one = "{\"methodConfig\": [{\"name\": [{\"service\": \"s\"}], \"retryPolicy\": {\"maxAttempts\": 1,"
                      " \"initialBackoff\": \".1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
                      " \"retryableStatusCodes\": [14]}}]}";
    FAILS(rp_grpc_service_config_from_json(one, strlen(one), 5, &config), RP_RESULT_OUT_OF_RANGE,
          "methodConfig[0].retryPolicy.maxAttempts");
    const char *both = "{\"methodConfig\": [{\"name\": [{\"service\": \"s\"}], \"retryPolicy\": {}, \"hedgingPolicy\": {}}]}";
    FAILS(rp_grpc_service_config_from_json(both, strlen(both), 5, &config), RP_RESULT_OUT_OF_RANGE,
          "methodConfig[0].hedgingPolicy");
    const char *bucket = "{\"retryThrottling\": {\"maxTokens\": 1001, \"tokenRatio\": 0.1}}";
    FAILS(rp_grpc_service_config_from_json(bucket, strlen(bucket), 5, &config), RP_RESULT_OUT_OF_RANGE,
          "retryThrottling.maxTokens");
    FAILS(rp_grpc_service_config_from_json("{}", 2, 1, &config), RP_RESULT_OUT_OF_RANGE, "max_attempts_cap");
    FAILS(rp_grpc_service_config_from_json("{", 1, 5, &config), RP_RESULT_MALFORMED_JSON, "");
    FAILS(rp_grpc_service_config_from_json(NULL, 0, 5, &config), RP_RESULT_MALFORMED_JSON, ""); /* "" */
    FAILS(rp_grpc_service_config_from_json("{}", 2, 5, NULL), RP_RESULT_NULL_POINTER, "config_out");
    assert_ptr_equal(config, (rp_grpc_service_config *)0x1);

    const char *typo = "{\"maxAttemps\": 4}";
    FAILS(rp_grpc_retry_policy_from_json(typo, strlen(typo), 5, &retry), RP_RESULT_UNKNOWN_FIELD, "maxAttemps");
    const char *code = "{\"maxAttempts\": 4, \"initialBackoff\": \".1s\", \"maxBackoff\": \"1s\","
                       " \"backoffMultiplier\": 2, \"retryableStatusCodes\": [17]}";
    FAILS(rp_grpc_retry_policy_from_json(code, strlen(code), 5, &retry), RP_RESULT_OUT_OF_RANGE,
          "retryableStatusCodes[0]");
    const char *zero = "{\"maxAttempts\": 4, \"initialBackoff\": \"0s\", \"maxBackoff\": \"1s\","
                       " \"backoffMultiplier\": 2, \"retryableStatusCodes\": [14]}";
    FAILS(rp_grpc_retry_policy_from_json(zero, strlen(zero), 5, &retry), RP_RESULT_OUT_OF_RANGE, "initialBackoff");
    const char *nocodes = "{\"maxAttempts\": 4, \"initialBackoff\": \"1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2}";
    FAILS(rp_grpc_retry_policy_from_json(nocodes, strlen(nocodes), 5, &retry), RP_RESULT_MISSING_FIELD,
          "retryableStatusCodes");
    const char *negative = "{\"maxAttempts\": 2, \"hedgingDelay\": \"-1s\"}";
    FAILS(rp_grpc_hedging_policy_from_json(negative, strlen(negative), 5, &hedging), RP_RESULT_OUT_OF_RANGE,
          "hedgingDelay");
    FAILS(rp_grpc_hedging_policy_from_json("{\"maxAttempts\": 2}", 18, 0, &hedging), RP_RESULT_OUT_OF_RANGE,
          "max_attempts_cap");
    assert_ptr_equal(retry, (rp_grpc_retry_policy *)0x1);
    assert_ptr_equal(hedging, (rp_grpc_hedging_policy *)0x1);

    /* A lookup names its arguments; a policy of the other kind is no handle of this one. */
    OK(rp_grpc_service_config_from_json(SERVICE_CONFIG, strlen(SERVICE_CONFIG), 5, &config));
    rp_grpc_method_policy m;
    FAILS(rp_grpc_service_config_policy_for(config, NULL, "", &m), RP_RESULT_NULL_POINTER, "service");
    FAILS(rp_grpc_service_config_policy_for(config, "s", "\xff", &m), RP_RESULT_INVALID_UTF8, "method");
    FAILS(rp_grpc_service_config_policy_for(NULL, "s", "", &m), RP_RESULT_NULL_POINTER, "config");
    rp_grpc_hedging_policy *h = hedging_policy(A6_HEDGING);
    rp_grpc_retry_params r;
    FAILS(rp_grpc_retry_policy_params((const rp_grpc_retry_policy *)h, &r), RP_RESULT_INVALID_HANDLE, "policy");
    assert_non_null(strstr(rp_last_error_message(), "rp_grpc_hedging_policy"));
    FAILS(rp_grpc_service_config_policy_for((const rp_grpc_service_config *)h, "s", "", &m), RP_RESULT_INVALID_HANDLE,
          "config");
    rp_grpc_hedging_policy_free(h);
    rp_grpc_hedging_params hp;
    FAILS(rp_grpc_hedging_policy_params(h, &hp), RP_RESULT_INVALID_HANDLE, "policy"); /* freed */
    rp_grpc_service_config_free(config);
}

/* ---- rp_grpc_retry ------------------------------------------------------------------------- */

/* A6 "Exponential Backoff" before 2024-08-29 (RP_GRPC_JITTER_FULL): random(0, min(initialBackoff *
 * backoffMultiplier^n, maxBackoff)) with n the retries since the last pushback: 100, 200, 400 ms
 * bounds; r = 0.5 halves each. The fourth attempt is the last (maxAttempts 4). */
static void grpc_retries_back_off_exponentially_up_to_max_attempts(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    rp_grpc_retry_state s = first_attempt();
    rp_grpc_retry_decision d;
    const uint64_t delays[] = {50, 100, 200};
    for (int i = 0; i < 3; i++) {
        OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
        assert_int_equal(d.action, RP_GRPC_ACTION_RETRY);
        assert_int_equal(d.delay_ms, delays[i]);
        assert_string_equal(d.rule, "exponential_backoff");
        assert_int_equal(d.throttle, RP_GRPC_THROTTLE_FAILURE);
        assert_false(d.transparent);
        assert_int_equal(d.pushback_ms, -1);
        assert_false(d.has_budget);
        assert_true(d.has_next);
        assert_int_equal(d.next.attempts, (uint32_t)i + 2);
        assert_int_equal(d.next.retries, (uint32_t)i + 1);
        assert_int_equal(d.next.retries_since_pushback, (uint32_t)i + 1);
        assert_false(d.next.has_deadline);
        assert_non_null(strstr(d.section, "gRFC A6"));
        s = d.next;
    }
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_FAIL);
    assert_string_equal(d.rule, "max_attempts_reached");
    assert_int_equal(d.delay_ms, 0);
    assert_false(d.has_next);

    /* A6's text since 2024-08-29 (and grpc-go): bound * (0.8 + 0.4 r): 80 ms with r = 0, 119 with
     * r = 0.999 (119.96). */
    s = first_attempt();
    OK(rp_grpc_retry(p, &s, &a, 0.0, RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT, NULL, 0, &d));
    assert_int_equal(d.delay_ms, 80);
    OK(rp_grpc_retry(p, &s, &a, 0.999, RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT, NULL, 0, &d));
    assert_int_equal(d.delay_ms, 119);
    /* A wait that reaches the deadline ends the call now: 90 + 50 >= 100. */
    s.elapsed_ms = 90;
    s.has_deadline = true;
    s.deadline_ms = 100;
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_FAIL);
    assert_string_equal(d.rule, "deadline_before_retry");
    s.deadline_ms = 141; /* 140 < 141: the retry goes, and the next state keeps the deadline */
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_RETRY);
    assert_true(d.next.has_deadline);
    assert_int_equal(d.next.deadline_ms, 141);
    assert_int_equal(d.next.elapsed_ms, 90);
    rp_grpc_retry_policy_free(p);
}

/* A6 "Pushback": a valid grpc-retry-pushback-ms replaces the backoff and restarts it; a negative,
 * malformed or repeated one stops retrying and counts as a throttling failure. */
static void grpc_pushback_replaces_the_backoff_or_stops_retries(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    rp_grpc_retry_state s = first_attempt();
    s.retries_since_pushback = 2;
    rp_grpc_retry_decision d;
    const char *wait[] = {"250"};
    a.pushback = wait;
    a.pushback_len = 1;
    OK(rp_grpc_retry(p, &s, &a, NAN, RP_GRPC_JITTER_FULL, NULL, 0, &d)); /* no draw needed */
    assert_int_equal(d.action, RP_GRPC_ACTION_RETRY);
    assert_int_equal(d.delay_ms, 250);
    assert_int_equal(d.pushback_ms, 250);
    assert_string_equal(d.rule, "pushback");
    assert_int_equal(d.next.retries_since_pushback, 0);

    const char *negative[] = {"-5"}, *malformed[] = {"soon"}, *twice[] = {"1", "2"};
    const struct {
        const char **values;
        size_t len;
        const char *rule;
    } stops[] = {{negative, 1, "pushback_negative"}, {malformed, 1, "pushback_malformed"}, {twice, 2, "pushback_multiple_values"}};
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        a.pushback = stops[i].values;
        a.pushback_len = stops[i].len;
        OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
        assert_int_equal(d.action, RP_GRPC_ACTION_FAIL);
        assert_string_equal(d.rule, stops[i].rule);
        assert_int_equal(d.throttle, RP_GRPC_THROTTLE_FAILURE);
    }
    rp_grpc_retry_policy_free(p);
}

/* The checks before the policy's: OK, a committed call, transparent retries (whatever the policy),
 * no policy, a status the policy does not retry. */
static void grpc_commits_transparent_retries_and_statuses_come_first(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_grpc_retry_state s = first_attempt();
    rp_grpc_retry_decision d;
    rp_grpc_attempt a = ended(RP_GRPC_CODE_OK);
    OK(rp_grpc_retry(p, &s, &a, NAN, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_SUCCEEDED);
    assert_string_equal(d.rule, "ok");
    assert_int_equal(d.throttle, RP_GRPC_THROTTLE_SUCCESS);

    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    set_byte(&a.committed, 2); /* any non-zero byte is true */
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_FAIL);
    assert_string_equal(d.rule, "committed");
    assert_int_equal(d.throttle, RP_GRPC_THROTTLE_NONE);

    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    a.reach = RP_GRPC_REACH_NEVER_SENT;
    OK(rp_grpc_retry(NULL, &s, &a, NAN, RP_GRPC_JITTER_FULL, NULL, 0, &d)); /* no policy: still retried */
    assert_int_equal(d.action, RP_GRPC_ACTION_RETRY);
    assert_true(d.transparent);
    assert_int_equal(d.delay_ms, 0);
    assert_string_equal(d.rule, "transparent_never_sent");
    assert_int_equal(d.next.attempts, 1); /* not counted toward maxAttempts */
    assert_int_equal(d.next.retries, 1);

    a.reach = RP_GRPC_REACH_UNPROCESSED; /* once, on the call's first attempt */
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_string_equal(d.rule, "transparent_unprocessed");
    s = d.next;
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_string_equal(d.rule, "exponential_backoff");

    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    OK(rp_grpc_retry(NULL, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_int_equal(d.action, RP_GRPC_ACTION_FAIL);
    assert_string_equal(d.rule, "no_retry_policy");
    a = ended(RP_GRPC_CODE_INTERNAL);
    OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d));
    assert_string_equal(d.rule, "status_not_retryable");
    assert_int_equal(d.throttle, RP_GRPC_THROTTLE_NONE);
    rp_grpc_retry_policy_free(p);
}

/* The throttling bucket is told of each attempt and asked before a retry, under its lock: five
 * failed calls at 10 tokens leave 9, 8, 7, 6 (retried) and 5 (at half: not retried). */
static void grpc_retries_stop_when_the_throttling_bucket_is_at_half(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_budget *bucket = budget_from("{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}");
    rp_grpc_retry_state s = first_attempt();
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    rp_grpc_retry_decision d;
    for (int i = 1; i <= 5; i++) {
        OK(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, bucket, (uint64_t)i, &d));
        assert_true(d.has_budget);
        assert_int_equal(d.budget.balance, (uint64_t)(10 - i) * 1000);
        assert_int_equal(d.action, i < 5 ? RP_GRPC_ACTION_RETRY : RP_GRPC_ACTION_FAIL);
    }
    assert_string_equal(d.rule, "token_bucket_at_or_below_half");
    assert_int_equal(d.budget.rule, RP_BUDGET_RULE_TOKEN_BUCKET_AT_OR_BELOW_HALF);
    assert_non_null(strstr(d.section, "Throttling"));
    a = ended(RP_GRPC_CODE_OK);
    OK(rp_grpc_retry(p, &s, &a, NAN, RP_GRPC_JITTER_FULL, bucket, 6, &d));
    assert_false(d.has_budget); /* told, not asked */
    char *snapshot = NULL;
    OK(rp_budget_snapshot(bucket, &snapshot));
    assert_non_null(strstr(snapshot, "\"balance\":5100"));
    rp_string_free(snapshot);
    rp_budget_free(bucket);
    rp_grpc_retry_policy_free(p);
}

static void grpc_retry_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_grpc_retry_state s = first_attempt();
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    rp_grpc_retry_decision d, untouched;
    memset(&d, 0xAB, sizeof d);
    untouched = d;
    FAILS(rp_grpc_retry(p, &s, &a, NAN, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_MISSING_FIELD, "random");
    FAILS(rp_grpc_retry(p, &s, &a, 1.0, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_INVALID_RANDOM, "random");
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, 2, NULL, 0, &d), RP_RESULT_INVALID_ENUM, "jitter");
    s.attempts = 0;
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_OUT_OF_RANGE, "state.attempts");
    s.attempts = 1;
    a.status = 17;
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_INVALID_ENUM, "attempt.status");
    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    a.reach = 3;
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_INVALID_ENUM, "attempt.reach");
    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    a.pushback_len = 1;
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_NULL_POINTER, "attempt.pushback");
    const char *values[] = {"1", NULL};
    a.pushback = values;
    a.pushback_len = 2;
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_NULL_POINTER,
          "attempt.pushback[1]");
    values[1] = "\xc3";
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_INVALID_UTF8,
          "attempt.pushback[1]");
    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    FAILS(rp_grpc_retry(p, NULL, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_NULL_POINTER, "state");
    FAILS(rp_grpc_retry(p, &s, NULL, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d), RP_RESULT_NULL_POINTER, "attempt");
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, NULL), RP_RESULT_NULL_POINTER, "decision_out");
    rp_breaker *breaker = NULL;
    OK(rp_breaker_from_json("{}", 2, &breaker));
    FAILS(rp_grpc_retry(p, &s, &a, 0.5, RP_GRPC_JITTER_FULL, (rp_budget *)breaker, 0, &d), RP_RESULT_INVALID_HANDLE,
          "throttling");
    FAILS(rp_grpc_retry((const rp_grpc_retry_policy *)breaker, &s, &a, 0.5, RP_GRPC_JITTER_FULL, NULL, 0, &d),
          RP_RESULT_INVALID_HANDLE, "policy");
    rp_breaker_free(breaker);
    assert_memory_equal(&d, &untouched, sizeof d);
    rp_grpc_retry_policy_free(p);
}

/* ---- rp_grpc_hedge ------------------------------------------------------------------------- */

/* One step: the event on `*s`, which becomes the step's state. */
static rp_grpc_hedge_step hedge(const rp_grpc_hedging_policy *p, rp_grpc_hedge_state *s, rp_grpc_hedge_event e,
                                const rp_grpc_attempt *a, rp_budget *bucket) {
    rp_grpc_hedge_step step;
    if (rp_grpc_hedge(p, s, e, a, bucket, 0, &step) != RP_RESULT_OK) fail_msg("hedge: %s", rp_last_error_message());
    *s = step.state;
    return step;
}

/* A6's hedging example: the original at once, a hedge every 500 ms; a non-fatal status sends the next
 * at once, a pushback of 100 ms delays the one after; OK ends the call and cancels the others. */
static void a_hedged_call_follows_a6s_schedule(void **state) {
    (void)state;
    rp_grpc_hedging_policy *p = hedging_policy(A6_HEDGING);
    rp_grpc_hedge_state s;
    memset(&s, 0, sizeof s);
    rp_grpc_hedge_step step = hedge(p, &s, RP_GRPC_HEDGE_START, NULL, NULL);
    assert_int_equal(step.send, 1);
    assert_int_equal(step.next_hedge_in_ms, 500);
    assert_string_equal(step.rule, "original_attempt");
    step = hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL);
    assert_int_equal(step.send, 1);
    assert_string_equal(step.rule, "hedging_delay_over");
    assert_int_equal(s.outstanding, 2);
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    step = hedge(p, &s, RP_GRPC_HEDGE_ATTEMPT_ENDED, &a, NULL);
    assert_int_equal(step.send, 1); /* at once */
    assert_int_equal(step.next_hedge_in_ms, 500);
    assert_string_equal(step.rule, "non_fatal_status");
    assert_int_equal(step.throttle, RP_GRPC_THROTTLE_FAILURE);
    assert_true(s.has_last_status);
    assert_int_equal(s.last_status, RP_GRPC_CODE_UNAVAILABLE);
    const char *pushback[] = {"100"};
    a = ended(RP_GRPC_CODE_INTERNAL);
    a.pushback = pushback;
    a.pushback_len = 1;
    step = hedge(p, &s, RP_GRPC_HEDGE_ATTEMPT_ENDED, &a, NULL);
    assert_int_equal(step.send, 0);
    assert_int_equal(step.next_hedge_in_ms, 100);
    assert_string_equal(step.rule, "pushback");
    step = hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL);
    assert_int_equal(step.send, 1);
    assert_int_equal(step.next_hedge_in_ms, -1); /* the fourth and last */
    assert_int_equal(s.sent, 4);
    a = ended(RP_GRPC_CODE_OK);
    step = hedge(p, &s, RP_GRPC_HEDGE_ATTEMPT_ENDED, &a, NULL);
    assert_int_equal(step.end, RP_GRPC_HEDGE_END_SUCCEEDED);
    assert_true(step.cancel_others);
    assert_false(step.has_status);
    assert_string_equal(step.rule, "ok");
    assert_true(s.done);
    memset(&step, 0x5A, sizeof step); /* padding too: the comparison reads every byte */
    rp_grpc_hedge_step untouched = step;
    FAILS(rp_grpc_hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL, 0, &step), RP_RESULT_OUT_OF_RANGE, "event");
    assert_memory_equal(&step, &untouched, sizeof step);
    rp_grpc_hedging_policy_free(p);
}

static void a_fatal_status_a_commit_or_the_bucket_ends_hedging(void **state) {
    (void)state;
    rp_grpc_hedging_policy *p = hedging_policy(A6_HEDGING);
    rp_grpc_hedge_state s;
    memset(&s, 0, sizeof s);
    hedge(p, &s, RP_GRPC_HEDGE_START, NULL, NULL);
    rp_grpc_attempt a = ended(RP_GRPC_CODE_INVALID_ARGUMENT);
    rp_grpc_hedge_step step = hedge(p, &s, RP_GRPC_HEDGE_ATTEMPT_ENDED, &a, NULL);
    assert_int_equal(step.end, RP_GRPC_HEDGE_END_FAILED);
    assert_true(step.has_status);
    assert_int_equal(step.status, RP_GRPC_CODE_INVALID_ARGUMENT);
    assert_string_equal(step.rule, "fatal_status");

    memset(&s, 0, sizeof s);
    hedge(p, &s, RP_GRPC_HEDGE_START, NULL, NULL);
    hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL);
    step = hedge(p, &s, RP_GRPC_HEDGE_COMMITTED, NULL, NULL);
    assert_true(step.cancel_others);
    assert_true(s.stopped);
    assert_int_equal(s.outstanding, 1);

    /* A bucket at half refuses the hedge: not sent, and no later one goes. */
    rp_budget *bucket = NULL;
    const char *doc = "{\"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}";
    const char *half = "{\"version\": 1, \"kind\": \"token_bucket\", \"balance\": 5000}";
    OK(rp_budget_restore(doc, strlen(doc), half, strlen(half), &bucket));
    memset(&s, 0, sizeof s);
    hedge(p, &s, RP_GRPC_HEDGE_START, NULL, bucket);
    step = hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, bucket);
    assert_int_equal(step.send, 0);
    assert_true(step.has_budget);
    assert_false(step.budget.permitted);
    assert_string_equal(step.rule, "token_bucket_at_or_below_half");
    assert_true(s.stopped);
    assert_int_equal(step.end, RP_GRPC_HEDGE_END_NONE); /* the original is still out */
    rp_budget_free(bucket);

    /* hedgingDelay 0s: every attempt at once. */
    rp_grpc_hedging_policy *now = hedging_policy("{\"maxAttempts\": 4, \"hedgingDelay\": \"0s\"}");
    memset(&s, 0, sizeof s);
    step = hedge(now, &s, RP_GRPC_HEDGE_START, NULL, NULL);
    assert_int_equal(step.send, 4);
    assert_string_equal(step.rule, "all_attempts_at_once");
    rp_grpc_hedging_policy_free(now);
    rp_grpc_hedging_policy_free(p);
}

static void grpc_hedge_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_grpc_hedging_policy *p = hedging_policy(A6_HEDGING);
    rp_grpc_hedge_state s;
    rp_grpc_hedge_step step;
    memset(&s, 0, sizeof s);
    FAILS(rp_grpc_hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL, 0, &step), RP_RESULT_OUT_OF_RANGE, "event");
    FAILS(rp_grpc_hedge(p, &s, 4, NULL, NULL, 0, &step), RP_RESULT_INVALID_ENUM, "event");
    hedge(p, &s, RP_GRPC_HEDGE_START, NULL, NULL);
    FAILS(rp_grpc_hedge(p, &s, RP_GRPC_HEDGE_ATTEMPT_ENDED, NULL, NULL, 0, &step), RP_RESULT_NULL_POINTER, "attempt");
    s.has_last_status = true;
    s.last_status = 99;
    FAILS(rp_grpc_hedge(p, &s, RP_GRPC_HEDGE_DUE, NULL, NULL, 0, &step), RP_RESULT_INVALID_ENUM, "state.last_status");
    FAILS(rp_grpc_hedge(NULL, &s, RP_GRPC_HEDGE_DUE, NULL, NULL, 0, &step), RP_RESULT_NULL_POINTER, "policy");
    FAILS(rp_grpc_hedge(p, NULL, RP_GRPC_HEDGE_DUE, NULL, NULL, 0, &step), RP_RESULT_NULL_POINTER, "state");
    rp_grpc_hedging_policy_free(p);
}

/* ---- AWS ----------------------------------------------------------------------------------- */

static rp_aws_error status_error(uint32_t status, const char *code) {
    rp_aws_error e;
    memset(&e, 0, sizeof e);
    e.status = status;
    e.code = code;
    return e;
}

static rp_aws_retry_config *aws_config(const char *json) {
    rp_aws_retry_config *c = NULL;
    if (rp_aws_retry_config_from_json(json, strlen(json), &c) != RP_RESULT_OK)
        fail_msg("aws config %s: %s", json, rp_last_error_message());
    return c;
}

/* Standard mode, classic (NULL config): a 503 is transient; floor(r * min(1 s * 2^i, 20 s)) with i
 * the failed attempt's number from 0; the third attempt is the last. */
static void aws_standard_mode_retries_transient_errors_with_full_jitter(void **state) {
    (void)state;
    rp_aws_error e = status_error(503, NULL);
    rp_aws_decision d;
    OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
    assert_int_equal(d.action, RP_AWS_ACTION_RETRY);
    assert_int_equal(d.delay_ms, 500);   /* 0.5 * 1000 */
    assert_int_equal(d.ceiling_ms, 1000);
    assert_int_equal(d.wait_ms, -1);
    assert_int_equal(d.retry_after_ms, -1);
    assert_true(d.retryable);
    assert_false(d.throttling);
    assert_int_equal(d.cause, RP_RETRY_CAUSE_ERROR);
    assert_int_equal(d.max_attempts, 3);
    assert_string_equal(d.rule, "transient_status");
    OK(rp_aws_decide(NULL, 2, &e, 0.25, NULL, &d));
    assert_int_equal(d.delay_ms, 500); /* 0.25 * 2000 */
    OK(rp_aws_decide(NULL, 3, &e, 0.25, NULL, &d));
    assert_int_equal(d.action, RP_AWS_ACTION_NO_RETRY);
    assert_string_equal(d.rule, "max_attempts_reached");
    assert_int_equal(d.delay_ms, 0);

    e = status_error(400, "ThrottlingException");
    OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
    assert_true(d.throttling);
    assert_int_equal(d.cause, RP_RETRY_CAUSE_THROTTLING);
    assert_string_equal(d.rule, "throttling_error_code");
    e = status_error(404, "NoSuchKey");
    OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
    assert_int_equal(d.action, RP_AWS_ACTION_NO_RETRY);
    assert_false(d.retryable);
    assert_int_equal(d.cause, RP_RETRY_CAUSE_NONE);
    assert_string_equal(d.rule, "not_retryable");
    assert_int_equal(d.ceiling_ms, -1);
    memset(&e, 0, sizeof e);
    set_byte(&e.timeout, 0xff); /* any non-zero byte is true */
    OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
    assert_int_equal(d.cause, RP_RETRY_CAUSE_TIMEOUT);
    e = status_error(400, "SomeModeledError");
    e.retryable_trait = RP_AWS_RETRYABLE_TRANSIENT;
    OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
    assert_string_equal(d.rule, "modeled_retryable");
}

/* The 2026 behaviour: a 50 ms base (25 ms for DynamoDB, whose default is 4 attempts); a valid
 * x-amz-retry-after is clamped to [t, t + 5 s] around the jittered backoff t. */
static void aws_2026_behaviour_and_its_config(void **state) {
    (void)state;
    rp_aws_retry_config *c = aws_config("{\"behavior\": \"2026\", \"service\": \"dynamodb\"}");
    rp_aws_retry_params p;
    OK(rp_aws_retry_config_params(c, &p));
    assert_int_equal(p.mode, RP_AWS_MODE_STANDARD);
    assert_int_equal(p.behavior, RP_AWS_BEHAVIOR_2026);
    assert_int_equal(p.max_attempts, 4);
    assert_string_equal(p.service, "dynamodb");
    assert_int_equal(p.max_backoff_ms, 20000);
    assert_false(p.long_polling);
    char *doc = NULL;
    OK(rp_aws_retry_config_document(c, &doc));
    assert_string_equal(doc, "{\"version\":1,\"mode\":\"standard\",\"behavior\":\"2026\",\"max_attempts\":4,"
                             "\"service\":\"dynamodb\",\"max_backoff_ms\":20000,\"long_polling\":false}");
    rp_string_free(doc);
    rp_aws_error e = status_error(500, NULL);
    rp_aws_decision d;
    OK(rp_aws_decide(c, 1, &e, 0.5, NULL, &d));
    assert_int_equal(d.ceiling_ms, 25);
    assert_int_equal(d.delay_ms, 12); /* floor(0.5 * 25) */
    rp_aws_retry_config_free(c);

    c = aws_config("{\"behavior\": \"2026\"}");
    OK(rp_aws_retry_config_params(c, &p));
    assert_null(p.service);
    assert_int_equal(p.max_attempts, 3);
    e.retry_after = "1500";
    OK(rp_aws_decide(c, 1, &e, 0.5, NULL, &d));
    assert_int_equal(d.retry_after_ms, 1500);
    assert_int_equal(d.delay_ms, 1500); /* t = 25; 1500 within [25, 5025] */
    rp_aws_retry_config_free(c);

    /* Legacy mode: DynamoDB's 50 ms * 2^(attempts - 1), unjittered: no draw needed. */
    c = aws_config("{\"mode\": \"legacy\", \"service\": \"dynamodb\"}");
    OK(rp_aws_retry_config_params(c, &p));
    assert_int_equal(p.mode, RP_AWS_MODE_LEGACY);
    assert_int_equal(p.max_attempts, 10);
    e = status_error(500, NULL);
    OK(rp_aws_decide(c, 3, &e, NAN, NULL, &d));
    assert_int_equal(d.delay_ms, 200);
    assert_int_equal(d.ceiling_ms, 200);
    rp_aws_retry_config_free(c);
}

/* The SDKs' loop with the retry quota (classic: 500 tokens, 5 a retry, 10 a timeout's): decide, ask
 * the quota with the decision's cause, and decide again with a refusal. */
static void aws_retries_take_from_the_quota_until_it_refuses(void **state) {
    (void)state;
    rp_budget *quota = NULL;
    const char *doc = "{\"kind\": \"retry_quota\"}";
    const char *low = "{\"kind\": \"retry_quota\", \"balance\": 12}";
    OK(rp_budget_restore(doc, strlen(doc), low, strlen(low), &quota));
    rp_aws_error e = status_error(503, NULL);
    rp_aws_decision d;
    rp_budget_verdict v;
    int retries = 0;
    for (;;) {
        OK(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d));
        assert_int_equal(d.action, RP_AWS_ACTION_RETRY);
        OK(rp_budget_try_retry(quota, 0, d.cause, &v));
        if (!v.permitted) break;
        retries++;
    }
    assert_int_equal(retries, 2); /* 12 -> 7 -> 2, then 2 < 5 */
    assert_int_equal(v.balance, 2);
    OK(rp_aws_decide(NULL, 1, &e, 0.5, &v, &d));
    assert_int_equal(d.action, RP_AWS_ACTION_NO_RETRY);
    assert_string_equal(d.rule, "retry_quota_exhausted");
    assert_int_equal(d.delay_ms, 0);
    assert_true(d.retryable);
    /* A success after a retry refunds what it took: 2 + 5. */
    OK(rp_budget_record(quota, 0, RP_BUDGET_EVENT_SUCCESS, RP_RETRY_CAUSE_ERROR));
    OK(rp_budget_permit(quota, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 7);
    rp_budget_free(quota);
}

static void aws_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_aws_retry_config *c = (rp_aws_retry_config *)0x1;
    FAILS(rp_aws_retry_config_from_json("{\"max_attempts\": 0}", 19, &c), RP_RESULT_OUT_OF_RANGE, "max_attempts");
    FAILS(rp_aws_retry_config_from_json("{\"mode\": \"fast\"}", 16, &c), RP_RESULT_UNKNOWN_NAME, "mode");
    const char *legacy = "{\"mode\": \"legacy\", \"behavior\": \"2026\"}";
    FAILS(rp_aws_retry_config_from_json(legacy, strlen(legacy), &c), RP_RESULT_UNKNOWN_FIELD, "behavior");
    FAILS(rp_aws_retry_config_from_json("{\"version\": 2}", 14, &c), RP_RESULT_UNSUPPORTED_VERSION, "version");
    const char *nul = "{\"service\": \"a\\u0000b\"}";
    FAILS(rp_aws_retry_config_from_json(nul, strlen(nul), &c), RP_RESULT_OUT_OF_RANGE, "service");
    assert_ptr_equal(c, (rp_aws_retry_config *)0x1);

    rp_aws_error e = status_error(500, NULL);
    rp_aws_decision d, untouched;
    memset(&d, 0x5A, sizeof d);
    untouched = d;
    FAILS(rp_aws_decide(NULL, 0, &e, 0.5, NULL, &d), RP_RESULT_OUT_OF_RANGE, "attempts");
    FAILS(rp_aws_decide(NULL, 1, &e, NAN, NULL, &d), RP_RESULT_MISSING_FIELD, "random");
    FAILS(rp_aws_decide(NULL, 1, &e, 1.0, NULL, &d), RP_RESULT_INVALID_RANDOM, "random");
    e.status = 700;
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_OUT_OF_RANGE, "error.status");
    e.status = 70000; /* past uint16_t: still named, never truncated to a valid status */
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_OUT_OF_RANGE, "error.status");
    e = status_error(500, NULL);
    e.connection_error = true;
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_INVALID_TYPE, "error.status");
    e = status_error(400, NULL);
    e.retryable_trait = RP_AWS_RETRYABLE_TRANSIENT;
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_MISSING_FIELD, "error.code");
    e.retryable_trait = 3;
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_INVALID_ENUM, "error.retryable_trait");
    e = status_error(500, "\xfe");
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, NULL, &d), RP_RESULT_INVALID_UTF8, "error.code");
    e = status_error(500, NULL);
    rp_budget_verdict v = {true, RP_BUDGET_KIND_RETRY_QUOTA, RP_BUDGET_RULE_RETRY_QUOTA_EXHAUSTED, NULL, 0};
    FAILS(rp_aws_decide(NULL, 1, &e, 0.5, &v, &d), RP_RESULT_OUT_OF_RANGE, "budget_verdict.permitted");
    FAILS(rp_aws_decide(NULL, 1, NULL, 0.5, NULL, &d), RP_RESULT_NULL_POINTER, "error");
    rp_budget *b = budget_from("{\"kind\": \"retry_quota\"}");
    FAILS(rp_aws_decide((const rp_aws_retry_config *)b, 1, &e, 0.5, NULL, &d), RP_RESULT_INVALID_HANDLE, "config");
    rp_budget_free(b);
    assert_memory_equal(&d, &untouched, sizeof d);
}

/* ---- the adaptive rate limiter ------------------------------------------------------------- */

/* botocore's limiter, created at 0: off (no token needed) until a throttle; the throttle at 0 with
 * nothing measured sets the fill rate to its minimum, 0.5 token/s, capacity 1; the bucket holds no
 * token, so the next attempt waits (1 - 0) / 0.5 = 2 s, and at 2000 the token is there. */
static void the_rate_limiter_turns_on_at_the_first_throttle(void **state) {
    (void)state;
    rp_aws_rate_limiter *l = NULL;
    OK(rp_aws_rate_limiter_from_json("{}", 2, 0, &l));
    rp_aws_acquire_verdict v;
    OK(rp_aws_rate_limiter_acquire(l, 0, &v));
    assert_true(v.acquired);
    assert_string_equal(v.rule, "limiter_off");
    rp_aws_rate_update u;
    OK(rp_aws_rate_limiter_record(l, 0, true, &u));
    assert_true(u.throttled);
    assert_true(u.enabled);
    assert_true(u.measured_rate == 0.0);
    assert_true(u.calculated_rate == 0.0); /* 0.7 * 0 */
    assert_true(u.fill_rate == 0.5);
    assert_true(u.max_capacity == 1.0);
    assert_string_equal(u.rule, "throttle_beta");
    assert_string_equal(u.bound, "raised_to_min_fill_rate"); /* 0 is under 0.5 */
    OK(rp_aws_rate_limiter_acquire(l, 0, &v));
    assert_false(v.acquired);
    assert_int_equal(v.wait_ms, 2000);
    assert_string_equal(v.rule, "wait_for_token");
    assert_non_null(strstr(v.section, "botocore"));
    OK(rp_aws_rate_limiter_acquire(l, 2000, &v));
    assert_true(v.acquired);
    assert_int_equal(v.wait_ms, 0);
    assert_string_equal(v.rule, "token_taken");
    assert_true(v.capacity == 0.0);

    /* Its state leaves as JSON and comes back: the restored limiter waits as long again. */
    char *snap = NULL, *doc = NULL;
    OK(rp_aws_rate_limiter_snapshot(l, &snap));
    assert_non_null(strstr(snap, "\"enabled\":true"));
    assert_non_null(strstr(snap, "\"last_refill_ms\":2000"));
    OK(rp_aws_rate_limiter_document(l, &doc));
    assert_string_equal(doc, "{\"version\":1,\"min_fill_rate\":0.5,\"beta\":0.7,\"scale_constant\":0.4,\"smoothing\":0.8}");
    rp_aws_rate_limiter *back = NULL;
    OK(rp_aws_rate_limiter_restore(doc, strlen(doc), snap, strlen(snap), &back));
    OK(rp_aws_rate_limiter_acquire(back, 2000, &v));
    assert_false(v.acquired);
    assert_int_equal(v.wait_ms, 2000);
    rp_string_free(snap);
    rp_string_free(doc);
    rp_aws_rate_limiter_free(back);
    rp_aws_rate_limiter_free(l);
}

static void rate_limiter_bad_input_is_a_typed_error_naming_the_field(void **state) {
    (void)state;
    rp_aws_rate_limiter *l = (rp_aws_rate_limiter *)0x1;
    FAILS(rp_aws_rate_limiter_from_json("{\"beta\": 1}", 11, 0, &l), RP_RESULT_OUT_OF_RANGE, "beta");
    FAILS(rp_aws_rate_limiter_from_json("{\"betta\": 1}", 12, 0, &l), RP_RESULT_UNKNOWN_FIELD, "betta");
    const char *over = "{\"enabled\": false, \"fill_rate\": 1, \"max_capacity\": 1, \"capacity\": 2,"
                       " \"last_refill_ms\": 0, \"last_max_rate\": 0, \"last_throttle_ms\": 0, \"measured_rate\": 0,"
                       " \"last_bucket_ms\": 0, \"request_count\": 0}";
    FAILS(rp_aws_rate_limiter_restore("{}", 2, over, strlen(over), &l), RP_RESULT_OUT_OF_RANGE, "snapshot.capacity");
    FAILS(rp_aws_rate_limiter_restore("{}", 2, "{}", 2, &l), RP_RESULT_MISSING_FIELD, "snapshot.enabled");
    FAILS(rp_aws_rate_limiter_from_json("{}", 2, 0, NULL), RP_RESULT_NULL_POINTER, "limiter_out");
    assert_ptr_equal(l, (rp_aws_rate_limiter *)0x1);
    rp_aws_acquire_verdict v;
    FAILS(rp_aws_rate_limiter_acquire(NULL, 0, &v), RP_RESULT_NULL_POINTER, "limiter");
    rp_budget *b = budget_from("{\"kind\": \"retry_quota\"}");
    FAILS(rp_aws_rate_limiter_acquire((rp_aws_rate_limiter *)b, 0, &v), RP_RESULT_INVALID_HANDLE, "limiter");
    rp_budget_free(b);
    OK(rp_aws_rate_limiter_from_json("{}", 2, 0, &l));
    rp_aws_rate_limiter_free(l);
    FAILS(rp_aws_rate_limiter_acquire(l, 0, &v), RP_RESULT_INVALID_HANDLE, "limiter"); /* freed */
    rp_aws_rate_limiter_free(l); /* a double free frees nothing and says so */
    assert_string_equal(rp_last_error_field(), "limiter");
}

/* ---- the run machine's grpc and aws rules --------------------------------------------------- */

static rp_run *run_from(const char *config, rp_budget *budget) {
    rp_run *run = NULL;
    if (rp_run_new(config, strlen(config), budget, NULL, &run) != RP_RESULT_OK)
        fail_msg("run %s: %s", config, rp_last_error_message());
    return run;
}

/* A run with A6's policy: UNAVAILABLE waits 100 ms x (0.8 + 0.4 x 0.5) = 100 ms with r = 0.5 (A6's
 * default jitter), then OK. */
static void a_grpc_run_takes_typed_attempts(void **state) {
    (void)state;
    rp_run *run = run_from("{\"rules\": {\"grpc\": {\"retry_policy\": {\"maxAttempts\": 4, \"initialBackoff\": \".1s\","
                           " \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [14]}}},"
                           " \"timeout_ms\": 10000}",
                           NULL);
    rp_run_step step;
    OK(rp_run_start(run, 0, NAN, &step));
    assert_int_equal(step.action, RP_RUN_SEND);
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    OK(rp_run_attempt_ended_grpc(run, &a, 5, 0.5, &step));
    assert_int_equal(step.action, RP_RUN_WAIT);
    assert_int_equal(step.delay_ms, 100);
    assert_string_equal(step.rule, "exponential_backoff");
    assert_false(step.has_decision); /* the decide rules' decision only */
    OK(rp_run_wait_ended(run, 105, NAN, &step));
    assert_int_equal(step.action, RP_RUN_SEND);
    assert_int_equal(step.attempt, 2);
    a = ended(RP_GRPC_CODE_OK);
    OK(rp_run_attempt_ended_grpc(run, &a, 110, NAN, &step));
    assert_int_equal(step.action, RP_RUN_DONE);
    assert_int_equal(step.end, RP_RUN_END_SUCCEEDED);
    rp_run_step untouched = step;
    FAILS(rp_run_attempt_ended_grpc(run, NULL, 111, NAN, &step), RP_RESULT_NULL_POINTER, "attempt");
    a.status = 40;
    FAILS(rp_run_attempt_ended_grpc(run, &a, 111, NAN, &step), RP_RESULT_INVALID_ENUM, "outcome.status");
    assert_int_equal(step.action, untouched.action);
    assert_int_equal(step.end, untouched.end);
    rp_run_free(run);

    /* Another run's rules take no gRPC outcome. */
    run = run_from("{\"rules\": {\"decide\": {\"operation\": {\"service\": \"kv\", \"operation\": \"get\"}}},"
                   " \"timeout_ms\": 1000}",
                   NULL);
    OK(rp_run_start(run, 0, NAN, &step));
    a = ended(RP_GRPC_CODE_UNAVAILABLE);
    FAILS(rp_run_attempt_ended_grpc(run, &a, 5, 0.5, &step), RP_RESULT_OUT_OF_RANGE, "outcome.kind");
    rp_aws_error e = status_error(503, NULL);
    FAILS(rp_run_attempt_ended_aws(run, &e, 5, 0.5, &step), RP_RESULT_OUT_OF_RANGE, "outcome.kind");
    rp_run_free(run);
}

/* A run with aws rules and the retry quota as its budget: a 503 waits floor(0.5 * 1 s) and costs 5
 * tokens of 500, a ThrottlingException floor(0.5 * 2 s); the success refunds the last retry's 5. */
static void an_aws_run_charges_its_quota(void **state) {
    (void)state;
    rp_budget *quota = budget_from("{\"kind\": \"retry_quota\"}");
    rp_run *run = run_from("{\"rules\": {\"aws\": {}}, \"timeout_ms\": 60000}", quota);
    rp_run_step step;
    OK(rp_run_start(run, 0, NAN, &step));
    rp_aws_error e = status_error(503, NULL);
    OK(rp_run_attempt_ended_aws(run, &e, 10, 0.5, &step));
    assert_int_equal(step.delay_ms, 500);
    assert_string_equal(step.rule, "transient_status");
    assert_true(step.has_budget);
    assert_int_equal(step.budget.balance, 495);
    OK(rp_run_wait_ended(run, 510, NAN, &step));
    e = status_error(400, "ThrottlingException");
    OK(rp_run_attempt_ended_aws(run, &e, 520, 0.5, &step));
    assert_int_equal(step.delay_ms, 1000);
    assert_string_equal(step.rule, "throttling_error_code");
    OK(rp_run_wait_ended(run, 1520, NAN, &step));
    rp_outcome success = {0};
    success.kind = RP_OUTCOME_SUCCESS;
    OK(rp_run_attempt_ended(run, &success, 1530, NAN, -1, &step));
    assert_int_equal(step.end, RP_RUN_END_SUCCEEDED);
    rp_budget_verdict v;
    OK(rp_budget_permit(quota, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 495); /* 500 - 5 - 5 + 5 */
    e.status = 70000;
    FAILS(rp_run_attempt_ended_aws(run, &e, 1540, 0.5, &step), RP_RESULT_OUT_OF_RANGE, "outcome.error.status");
    rp_run_free(run);
    rp_budget_free(quota);
}

/* ---- shared handles between threads --------------------------------------------------------- */

#define THREADS 8
#define CALLS 100

static pthread_barrier_t start;

typedef struct {
    const rp_grpc_retry_policy *policy;
    rp_budget *bucket;
    rp_aws_rate_limiter *limiter;
    int retries, failures, acquired, errors;
} worker;

/* CALLS failed calls through rp_grpc_retry on the shared bucket, then CALLS acquires. */
static void *work(void *arg) {
    worker *w = arg;
    rp_grpc_retry_state s = first_attempt();
    rp_grpc_attempt a = ended(RP_GRPC_CODE_UNAVAILABLE);
    pthread_barrier_wait(&start);
    for (int i = 0; i < CALLS; i++) {
        rp_grpc_retry_decision d;
        if (rp_grpc_retry(w->policy, &s, &a, 0.5, RP_GRPC_JITTER_FULL, w->bucket, 0, &d) != RP_RESULT_OK)
            w->errors++;
        else if (d.action == RP_GRPC_ACTION_RETRY)
            w->retries++;
        else
            w->failures++;
    }
    for (int i = 0; i < CALLS; i++) {
        rp_aws_acquire_verdict v;
        if (rp_aws_rate_limiter_acquire(w->limiter, 0, &v) != RP_RESULT_OK)
            w->errors++;
        else
            w->acquired += v.acquired;
    }
    return NULL;
}

/* A bucket of 1000 tokens (A6's largest) loses one per failure and permits while above 500: of the
 * 800 failures, exactly 499 are retried (999 down to 501 tokens), whatever the interleaving. A
 * limiter holding 50 tokens at a time that does not refill gives out exactly 50 of 800. */
static void shared_bucket_and_limiter_give_out_exactly_their_tokens_between_threads(void **state) {
    (void)state;
    rp_grpc_retry_policy *p = retry_policy(A6_RETRY);
    rp_budget *bucket = budget_from("{\"kind\": \"token_bucket\", \"max_tokens\": 1000, \"token_ratio\": 1}");
    const char *full = "{\"enabled\": true, \"fill_rate\": 0.5, \"max_capacity\": 50, \"capacity\": 50,"
                       " \"last_refill_ms\": 0, \"last_max_rate\": 0, \"last_throttle_ms\": 0, \"measured_rate\": 0,"
                       " \"last_bucket_ms\": 0, \"request_count\": 0}";
    rp_aws_rate_limiter *limiter = NULL;
    OK(rp_aws_rate_limiter_restore("{}", 2, full, strlen(full), &limiter));
    pthread_t threads[THREADS];
    worker workers[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){p, bucket, limiter, 0, 0, 0, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
    }
    int retries = 0, failures = 0, acquired = 0;
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        assert_int_equal(workers[t].errors, 0);
        retries += workers[t].retries;
        failures += workers[t].failures;
        acquired += workers[t].acquired;
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(retries, 499);
    assert_int_equal(failures, THREADS * CALLS - 499);
    assert_int_equal(acquired, 50);
    rp_budget_verdict v;
    OK(rp_budget_permit(bucket, 0, RP_RETRY_CAUSE_ERROR, &v));
    assert_int_equal(v.balance, 200000); /* 1000 - 800 tokens, in thousandths */
    rp_aws_rate_limiter_free(limiter);
    rp_budget_free(bucket);
    rp_grpc_retry_policy_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_service_config_matches_the_method_then_the_service_then_the_default),
        cmocka_unit_test(a_service_configs_throttling_is_a6s_token_bucket),
        cmocka_unit_test(an_invalid_service_config_or_policy_is_a_typed_error_naming_the_field),
        cmocka_unit_test(grpc_retries_back_off_exponentially_up_to_max_attempts),
        cmocka_unit_test(grpc_pushback_replaces_the_backoff_or_stops_retries),
        cmocka_unit_test(grpc_commits_transparent_retries_and_statuses_come_first),
        cmocka_unit_test(grpc_retries_stop_when_the_throttling_bucket_is_at_half),
        cmocka_unit_test(grpc_retry_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(a_hedged_call_follows_a6s_schedule),
        cmocka_unit_test(a_fatal_status_a_commit_or_the_bucket_ends_hedging),
        cmocka_unit_test(grpc_hedge_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(aws_standard_mode_retries_transient_errors_with_full_jitter),
        cmocka_unit_test(aws_2026_behaviour_and_its_config),
        cmocka_unit_test(aws_retries_take_from_the_quota_until_it_refuses),
        cmocka_unit_test(aws_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(the_rate_limiter_turns_on_at_the_first_throttle),
        cmocka_unit_test(rate_limiter_bad_input_is_a_typed_error_naming_the_field),
        cmocka_unit_test(a_grpc_run_takes_typed_attempts),
        cmocka_unit_test(an_aws_run_charges_its_quota),
        cmocka_unit_test(shared_bucket_and_limiter_give_out_exactly_their_tokens_between_threads),
    };
    return cmocka_run_group_tests_name("retrypolicy C API, gRPC and AWS", tests, NULL, NULL);
}

#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    /* gRPC: the service config's policy for a method, and its retryThrottling as a shared budget. */
    const char *service_config =
        "{\"methodConfig\": [{\"name\": [{\"service\": \"helloworld.Greeter\"}], \"retryPolicy\": {"
        "\"maxAttempts\": 4, \"initialBackoff\": \".1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
        " \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}], \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}}";
    rp_grpc_service_config *config = NULL;
    rp_grpc_method_policy policy;
    char *bucket_doc = NULL;
    rp_budget *bucket = NULL;
    if (rp_grpc_service_config_from_json(service_config, strlen(service_config), RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP,
                                         &config) != RP_RESULT_OK ||
        rp_grpc_service_config_policy_for(config, "helloworld.Greeter", "SayHello", &policy) != RP_RESULT_OK ||
        rp_grpc_service_config_throttling(config, &bucket_doc) != RP_RESULT_OK ||
        rp_budget_from_json(bucket_doc, strlen(bucket_doc), &bucket) != RP_RESULT_OK)
        return 1;
    rp_string_free(bucket_doc);
    rp_grpc_service_config_free(config);

    /* Two UNAVAILABLE attempts, then OK; each decision's `next` is the state for the next one. */
    const rp_grpc_code statuses[] = {RP_GRPC_CODE_UNAVAILABLE, RP_GRPC_CODE_UNAVAILABLE, RP_GRPC_CODE_OK};
    rp_grpc_retry_state state = {0};
    state.attempts = 1;
    for (int i = 0; i < 3; i++) {
        rp_grpc_attempt attempt = {0};
        attempt.status = statuses[i];
        rp_grpc_retry_decision d;
        /* A6's jitter since 2024-08-29: the bound x (0.8 + 0.4 x the draw); _FULL: its text before. */
        if (rp_grpc_retry(policy.retry, &state, &attempt, 0.5 /* your draw in [0, 1) */,
                          RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT, bucket, 0 /* now_ms */, &d) != RP_RESULT_OK)
            return 1;
        printf("grpc attempt %u: %s after %llu ms (%s)\n", state.attempts,
               d.action == RP_GRPC_ACTION_RETRY ? "retry" : d.action == RP_GRPC_ACTION_FAIL ? "fail" : "succeeded",
               (unsigned long long)d.delay_ms, d.rule);
        if (d.action != RP_GRPC_ACTION_RETRY) break;
        state = d.next;
    }
    rp_grpc_retry_policy_free(policy.retry); /* NULL-safe: also when the method hedges or has no policy */
    rp_budget_free(bucket);

    /* AWS standard mode: decide, ask the retry quota with the decision's cause, decide again if it refuses. */
    rp_budget *quota = NULL;
    rp_aws_rate_limiter *limiter = NULL;
    if (rp_budget_from_json("{\"kind\": \"retry_quota\"}", 23, &quota) != RP_RESULT_OK ||
        rp_aws_rate_limiter_from_json("{}", 2, 0, &limiter) != RP_RESULT_OK)
        return 1;
    rp_aws_error errors[2] = {{0}, {0}};
    errors[0].status = 503;
    errors[1].status = 400;
    errors[1].code = "ThrottlingException";
    for (uint32_t attempts = 1; attempts <= 2; attempts++) {
        rp_aws_decision d;
        rp_budget_verdict v = {0};
        if (rp_aws_decide(NULL /* standard, classic */, attempts, &errors[attempts - 1], 0.5, NULL, &d) != RP_RESULT_OK)
            return 1;
        if (d.action == RP_AWS_ACTION_RETRY) {
            if (rp_budget_try_retry(quota, 0, d.cause, &v) != RP_RESULT_OK) return 1;
            if (!v.permitted && rp_aws_decide(NULL, attempts, &errors[attempts - 1], 0.5, &v, &d) != RP_RESULT_OK)
                return 1;
        }
        /* Adaptive mode: tell the client's rate limiter whether the response was a throttle. */
        rp_aws_rate_update u;
        if (rp_aws_rate_limiter_record(limiter, 100 * attempts, d.throttling, &u) != RP_RESULT_OK) return 1;
        printf("aws attempt %u: %s after %llu ms (%s; quota %llu; limiter %s at %.1f/s)\n", attempts,
               d.action == RP_AWS_ACTION_RETRY ? "retry" : "no retry", (unsigned long long)d.delay_ms, d.rule,
               (unsigned long long)v.balance, u.enabled ? "on" : "off", u.fill_rate);
    }
    rp_aws_acquire_verdict go;
    if (rp_aws_rate_limiter_acquire(limiter, 200, &go) != RP_RESULT_OK) return 1;
    printf("next aws attempt: %s\n", go.acquired ? "send" : "wait");
    if (!go.acquired) printf("  for %llu ms (%s)\n", (unsigned long long)go.wait_ms, go.rule);
    rp_aws_rate_limiter_free(limiter);
    rp_budget_free(quota);
    return 0;
}

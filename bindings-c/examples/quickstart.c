#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    /* Load a policy once (here: the RFC 0049 defaults, spelled out); share it between threads. */
    const char *json = "{\"version\": 1, \"strategy\": \"best_effort\"}";
    rp_policy *policy = NULL;
    if (rp_policy_from_json(json, strlen(json), &policy) != RP_RESULT_OK) return 1;

    /* A KV upsert got status 0x07 (NOT_MY_VBUCKET): classify it ... */
    rp_classification c;
    if (rp_classify_kv(RP_KV_OPERATION_UPSERT, 0x07, NULL, policy, &c) != RP_RESULT_OK || !c.has_reason) {
        rp_policy_free(policy);
        return 1;
    }

    /* ... then decide: 2 s into its 2.5 s timeout, 7 retries so far. */
    rp_request request = {0};
    request.operation.service = RP_SERVICE_KV;
    request.operation.kv_operation = RP_KV_OPERATION_UPSERT;
    request.attempts = 7;
    request.elapsed_ms = 2000;
    request.timeout_ms = 2500;

    /* (No host strategy: NULL, NULL; the policy's strategy decides.) */
    rp_decision decision;
    rp_result rc = rp_decide(&request, c.reason, policy, NULL, NULL, &decision);
    rp_policy_free(policy);
    if (rc != RP_RESULT_OK) {
        fprintf(stderr, "%s: %s\n", rp_result_code_name(rc), rp_last_error_message());
        return 1;
    }

    /* RFC 0049 asks to log every retry and non-retry. */
    char *line = NULL;
    if (rp_decision_format(&decision, &line) == RP_RESULT_OK) puts(line);
    rp_string_free(line);

    if (decision.retry) {
        /* sleep decision.delay_ms, then resend, or time out if decision.then_cancel */
    }
    return 0;
}

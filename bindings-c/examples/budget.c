#include <retrypolicy.h>
#include <stdio.h>
#include <string.h>

/* Prints a decision's log line. */
static void print_decision(const rp_decision *d) {
    char *line = NULL;
    if (rp_decision_format(d, &line) == RP_RESULT_OK) printf("%s\n", line);
    rp_string_free(line);
}

/* The breaker's state-change callback: runs after the call that made the change has let go of the
 * breaker's lock, so it may call the breaker too. */
static void print_change(void *user_data, rp_breaker *breaker, rp_breaker_change change) {
    const char *from = NULL, *to = NULL, *rule = NULL;
    (void)user_data, (void)breaker;
    rp_enum_name(RP_ENUM_BREAKER_STATE, change.from, &from);
    rp_enum_name(RP_ENUM_BREAKER_STATE, change.to, &to);
    rp_enum_name(RP_ENUM_BREAKER_CHANGE_RULE, change.rule, &rule);
    printf("breaker: %s -> %s (%s)\n", from, to, rule);
}

int main(void) {
    /* One budget and one breaker per endpoint, shared by every thread that sends to it. */
    const char *json = "{\"version\": 1, \"kind\": \"token_bucket\", \"max_tokens\": 10, \"token_ratio\": 0.1}";
    rp_budget *budget = NULL;
    rp_breaker *breaker = NULL;
    if (rp_budget_from_json(json, strlen(json), &budget) != RP_RESULT_OK ||
        rp_breaker_from_json("{}", 2, &breaker) != RP_RESULT_OK || /* {}: Couchbase's defaults */
        rp_breaker_on_change(breaker, print_change, NULL) != RP_RESULT_OK)
        return 1;

    rp_request request;
    memset(&request, 0, sizeof request);
    request.operation.service = RP_SERVICE_KV;
    request.operation.kv_operation = RP_KV_OPERATION_GET;
    request.timeout_ms = 2500;

    /* A storm: every attempt fails. Tell the budget, then decide; a retry asks the budget too. */
    for (uint64_t now_ms = 0; now_ms < 500; now_ms += 100) {
        rp_decision d;
        request.elapsed_ms = now_ms;
        if (rp_budget_record(budget, now_ms, RP_BUDGET_EVENT_FAILURE, RP_RETRY_CAUSE_NONE) != RP_RESULT_OK ||
            rp_decide(&request, RP_REASON_KV_TEMPORARY_FAILURE, NULL, NULL, NULL, &d) != RP_RESULT_OK)
            return 1;
        if (d.retry) {
            /* Asks and takes in one locked step: two threads never both get the last retry. */
            rp_budget_verdict v;
            if (rp_budget_try_retry(budget, now_ms, RP_RETRY_CAUSE_ERROR, &v) != RP_RESULT_OK) return 1;
            if (!v.permitted &&
                rp_decide_with_budget(&request, RP_REASON_KV_TEMPORARY_FAILURE, NULL, &v, &d) != RP_RESULT_OK)
                return 1;
        }
        print_decision(&d);
        request.attempts++;
    }

    /* 20 failures trip the breaker: a request is refused with the reason to hand rp_decide. */
    for (int i = 0; i < 20; i++) rp_breaker_record(breaker, 1000, RP_BREAKER_OUTCOME_FAILURE);
    rp_breaker_verdict b;
    if (rp_breaker_permit(breaker, 1001, &b) != RP_RESULT_OK || b.permitted) return 1;
    rp_decision d;
    rp_request fresh = request;
    fresh.attempts = 0;
    fresh.elapsed_ms = 0;
    if (rp_decide(&fresh, b.reason, NULL, NULL, NULL, &d) != RP_RESULT_OK) return 1;
    print_decision(&d);
    /* After the 5 s sleep window, exactly one request goes out as the canary. */
    rp_breaker_verdict first, second;
    rp_breaker_permit(breaker, 6001, &first);
    rp_breaker_permit(breaker, 6002, &second);
    printf("canary: %s, then %s\n", first.canary ? "sent" : "held", second.permitted ? "sent" : "held");

    rp_breaker_free(breaker);
    rp_budget_free(budget);
    return 0;
}

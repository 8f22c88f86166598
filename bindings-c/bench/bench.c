/*
 * ns per rp_decide against rp_decide_noop (same signature, does nothing), through the same
 * library: the cost of a decision on top of the cost of crossing into it. Every function here is
 * called through a volatile function pointer so the loop cannot be hoisted; trials alternate
 * between them (the machine is shared and noisy) and the best of each is kept.
 *
 * Two reference functions show what any rp_decide with this signature costs here:
 * - floor_decide reads what a decision depends on and writes every field of the decision, with no
 *   check, no policy and no rule;
 * - checked_floor adds only what the header promises to check (NULL pointers, every enum in
 *   range, previous_reasons, the random draw) and the three table reads a decision
 *   needs at the least (the operation's idempotency, the outcome for the reason, the delay for the
 *   attempt), from tables that decide nothing. It skips what would cost more: it never reads the
 *   policy (rp_decide does, to pick its table and to refuse a missing draw under jitter) and keeps
 *   no first-call state. It is one way to write the contract's cost, not a proven minimum.
 * The goal (<= 2x the no-op) leaves room for rp_decide's own work only below 2x.
 *
 * `bench decide N` / `bench noop N` / `bench floor N` / `bench checked N` only run the loop, for
 * instruction counts under callgrind.
 */
#define _POSIX_C_SOURCE 199309L
#include <retrypolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LINKAGE
#define LINKAGE "?"
#endif

typedef rp_result (*decide_fn)(const rp_request *, rp_reason, const rp_policy *, rp_decision *);

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Reads the request's fields and writes all nine fields of the decision; decides nothing. */
__attribute__((noinline)) static rp_result floor_decide(const rp_request *r, rp_reason reason, const rp_policy *policy,
                                                        rp_decision *d) {
    (void)policy;
    uint64_t left = r->timeout_ms - r->elapsed_ms;
    uint64_t delay = (uint64_t)1 << (r->attempts & 31);
    d->action = r->has_idempotent ? r->idempotent : r->operation.kv_operation;
    d->delay_ms = delay < left ? delay : left;
    d->capped = delay > left;
    d->then_cancel = delay >= left;
    d->cause = r->has_strategy ? r->strategy : r->operation.method;
    d->rule = r->has_random ? (rp_rule)r->random : r->operation.service;
    d->reason = reason;
    d->attempts = r->attempts;
    d->idempotent = r->has_previous_delay_ms ? r->previous_delay_ms != 0 : r->previous_reasons_len != 0;
    return RP_RESULT_OK;
}

/* The tables checked_floor reads, of the shapes a decision needs. Not static, and main writes one
 * entry from its arguments, so that the compiler cannot fold reads of tables nothing writes. */
typedef struct {
    uint8_t ladder, rule, cause, action;
} outcome;
uint8_t IDEMPOTENT[7][25][8][2];
outcome OUTCOMES[2][20][2][3];
uint64_t LADDERS[3][64];

/* The header's checks, three table reads and the nine stores; see the top of this file. */
__attribute__((noinline)) static rp_result checked_floor(const rp_request *r, rp_reason reason, const rp_policy *policy,
                                                         rp_decision *d) {
    if (!r || !d) return RP_RESULT_NULL_POINTER;
    if (reason > RP_REASON_VIEWS_NO_ACTIVE_PARTITION) return RP_RESULT_INVALID_ENUM;
    const rp_operation *op = &r->operation;
    const uint8_t *idempotent;
    if (op->service == RP_SERVICE_KV) {
        if (op->kv_operation > RP_KV_OPERATION_MUTATE_IN) return RP_RESULT_INVALID_ENUM;
        idempotent = IDEMPOTENT[0][op->kv_operation][0];
    } else if (op->service > RP_SERVICE_MANAGEMENT) {
        return RP_RESULT_INVALID_ENUM;
    } else if (op->service >= RP_SERVICE_CLUSTER_MANAGER) {
        if (op->method > RP_HTTP_METHOD_OPTIONS) return RP_RESULT_INVALID_ENUM;
        idempotent = IDEMPOTENT[op->service][0][op->method];
    } else {
        idempotent = IDEMPOTENT[op->service][0][0] + (op->service <= RP_SERVICE_ANALYTICS && op->readonly);
    }
    if (r->previous_reasons_len && !r->previous_reasons) return RP_RESULT_NULL_POINTER;
    for (size_t i = 0; i < r->previous_reasons_len; i++)
        if (r->previous_reasons[i] > RP_REASON_VIEWS_NO_ACTIVE_PARTITION) return RP_RESULT_INVALID_ENUM;
    unsigned column = 2;
    if (r->has_strategy) {
        if (r->strategy > RP_STRATEGY_FAIL_FAST) return RP_RESULT_INVALID_ENUM;
        column = r->strategy;
    }
    bool idem = r->has_idempotent ? r->idempotent : *idempotent;
    if (r->has_random && !(r->random >= 0.0 && r->random < 1.0)) return RP_RESULT_INVALID_RANDOM;
    uint64_t elapsed = r->elapsed_ms, timeout = r->timeout_ms;
    uint32_t attempts = r->attempts;
    if (elapsed >= timeout || attempts > 63) return RP_RESULT_OTHER_ERROR; /* (rp_decide works these out) */
    outcome o = OUTCOMES[policy != NULL][reason][idem][column];
    uint64_t delay = LADDERS[o.ladder][attempts], left = timeout - elapsed;
    d->action = o.action;
    d->delay_ms = delay < left ? delay : left;
    d->capped = delay > left;
    d->then_cancel = delay >= left;
    d->cause = o.cause;
    d->rule = o.rule;
    d->reason = reason;
    d->attempts = attempts;
    d->idempotent = idem;
    return RP_RESULT_OK;
}

static double ns_per_call(decide_fn volatile *fn, const rp_request *req, rp_reason reason, const rp_policy *policy,
                          long calls) {
    rp_decision d;
    double start = now_ns();
    for (long i = 0; i < calls; i++)
        if ((*fn)(req, reason, policy, &d) != RP_RESULT_OK) abort();
    return (now_ns() - start) / (double)calls;
}

int main(int argc, char **argv) {
    rp_policy *policy = NULL;
    if (rp_policy_new_default(&policy) != RP_RESULT_OK) return 1;
    /* A KV get, 3 retries in, 100 ms into a 2.5 s timeout, KV_LOCKED: best effort with backoff. */
    rp_request req;
    memset(&req, 0, sizeof req);
    req.operation.service = RP_SERVICE_KV;
    req.operation.kv_operation = RP_KV_OPERATION_GET;
    req.attempts = 3;
    req.elapsed_ms = 100;
    req.timeout_ms = 2500;
    decide_fn volatile decide = rp_decide;
    decide_fn volatile noop = rp_decide_noop;
    decide_fn volatile floor = floor_decide;
    decide_fn volatile checked = checked_floor;
    LADDERS[1][argc & 63] = (uint64_t)argc;
    if (argc == 3) {
        decide_fn volatile *fn = &decide;
        if (strcmp(argv[1], "noop") == 0) fn = &noop;
        if (strcmp(argv[1], "floor") == 0) fn = &floor;
        if (strcmp(argv[1], "checked") == 0) fn = &checked;
        ns_per_call(fn, &req, RP_REASON_KV_LOCKED, policy, atol(argv[2]));
        rp_policy_free(policy);
        return 0;
    }
    long calls = argc > 1 ? atol(argv[1]) : 2000000L;
    ns_per_call(&decide, &req, RP_REASON_KV_LOCKED, policy, calls / 10); /* warm-up */
    double d = 1e300, n = 1e300, f = 1e300, c = 1e300;
    for (int trial = 0; trial < 9; trial++) {
        double x = ns_per_call(&decide, &req, RP_REASON_KV_LOCKED, policy, calls);
        double y = ns_per_call(&noop, &req, RP_REASON_KV_LOCKED, policy, calls);
        double z = ns_per_call(&floor, &req, RP_REASON_KV_LOCKED, policy, calls);
        double w = ns_per_call(&checked, &req, RP_REASON_KV_LOCKED, policy, calls);
        if (x < d) d = x;
        if (y < n) n = y;
        if (z < f) f = z;
        if (w < c) c = w;
    }
    printf("%-6s library: rp_decide %6.2f ns/call, no-op export %5.2f ns/call, ratio %.2fx (goal <= 2x); "
           "floor (read the request, write the decision) %.2f ns, %.2fx; checked floor (and the header's checks, "
           "three table reads) %.2f ns, %.2fx\n",
           LINKAGE, d, n, d / n, f, f / n, c, c / n);
    rp_policy_free(policy);
    return 0;
}

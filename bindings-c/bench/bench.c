/*
 * ns per rp_decide against rp_decide_noop (same signature, does nothing), through the same
 * library: the cost of a decision on top of the cost of crossing into it. Both are called through
 * a volatile function pointer so the loop cannot be hoisted; trials alternate between the two
 * (the machine is shared and noisy) and the best of each is kept.
 *
 * A third function, floor_decide, is the reference for what is left: it does the least any
 * rp_decide must do (read what a decision depends on, write every field of the decision) with no
 * validation, no policy and no rule. The goal (<= 2x the no-op) leaves room for the checks and the
 * rules only in the difference between 2x and the floor's ratio.
 *
 * `bench decide N` / `bench noop N` / `bench floor N` only run the loop, for instruction counts
 * under callgrind.
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
    if (argc == 3) {
        decide_fn volatile *fn = strcmp(argv[1], "noop") == 0 ? &noop : strcmp(argv[1], "floor") == 0 ? &floor : &decide;
        ns_per_call(fn, &req, RP_REASON_KV_LOCKED, policy, atol(argv[2]));
        rp_policy_free(policy);
        return 0;
    }
    long calls = argc > 1 ? atol(argv[1]) : 2000000L;
    ns_per_call(&decide, &req, RP_REASON_KV_LOCKED, policy, calls / 10); /* warm-up */
    double d = 1e300, n = 1e300, f = 1e300;
    for (int trial = 0; trial < 9; trial++) {
        double x = ns_per_call(&decide, &req, RP_REASON_KV_LOCKED, policy, calls);
        double y = ns_per_call(&noop, &req, RP_REASON_KV_LOCKED, policy, calls);
        double z = ns_per_call(&floor, &req, RP_REASON_KV_LOCKED, policy, calls);
        if (x < d) d = x;
        if (y < n) n = y;
        if (z < f) f = z;
    }
    printf("%-6s library: rp_decide %6.2f ns/call, no-op export %5.2f ns/call, ratio %.1fx (goal <= 2x); "
           "floor (read the request, write the decision, decide nothing) %.2f ns/call, %.1fx\n",
           LINKAGE, d, n, d / n, f, f / n);
    rp_policy_free(policy);
    return 0;
}

/*
 * The C fixture runner: every spec fixture (spec-fixtures/README.md), through the public C API.
 *
 * Usage: fixtures CORPUS_DIR   (and SPEC_FIXTURES_DIR, when set, is run too)
 * Prints one line per failure, then exactly "N passed, N failed" as the last line; exits 1 when
 * anything failed. Functions with a typed C API run through it; the rest (MongoDB, HTTP,
 * transactions, backoff) through rp_call_json, the core's JSON API. Host strategies (decide_with)
 * are real C strategy functions with the fixed answer as user_data.
 *
 * Each adapter turns a case's JSON input into C values and calls the library. Library failures
 * are reported with rp_result_code_name() and rp_last_error_message(), prefixed with the JSON
 * path being converted (as serde_path_to_error does for the Rust runner). A few inputs cannot be
 * expressed in C at all (a string where a uint32_t goes, -1 for a uint32_t, a key the C struct
 * does not have, a required key left out); the conversion below reports those itself, with the
 * code the core's JSON reader uses for the same mistake (invalid_type, out_of_range,
 * unknown_field, missing_field). Everything else (names, durations, hex statuses, operations,
 * backoffs, policies, error maps, ranges of random draws, ...) is decided by the library.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SAFE_MS 9007199254740991ULL

typedef struct {
    char code[64];
    char message[1024];
} failure;

/* ---- failures ---------------------------------------------------------------------------- */

static int lib_failure(failure *f, rp_result rc, const char *path) {
    const char *code = NULL;
    if (rp_result_code_name(rc, &code) != RP_RESULT_OK) code = "(unknown rp_result)";
    char detail[768];
    size_t n = 0;
    if (rp_last_error_message(detail, sizeof detail, &n) != RP_RESULT_OK) detail[0] = '\0';
    snprintf(f->code, sizeof f->code, "%s", code);
    snprintf(f->message, sizeof f->message, "%s: %s", path, detail);
    return -1;
}

static int conversion_failure(failure *f, const char *code, const char *path, const char *what) {
    snprintf(f->code, sizeof f->code, "%s", code);
    snprintf(f->message, sizeof f->message, "%s: %s", path, what);
    return -1;
}

#define TRY(call, path)                                   \
    do {                                                  \
        rp_result rc_ = (call);                           \
        if (rc_ != RP_RESULT_OK) return lib_failure(f, rc_, (path)); \
    } while (0)

/* ---- JSON -> C conversion ---------------------------------------------------------------- */

static int in_list(const char *key, const char *const *list) {
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0) return 1;
    return 0;
}

/* The object's keys must be among `allowed`; every key in `required` must be there. */
static int check_keys(const cJSON *obj, const char *path, const char *const *allowed,
                      const char *const *required, failure *f) {
    char where[256];
    if (!cJSON_IsObject(obj)) return conversion_failure(f, "invalid_type", path, "expected an object");
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (!in_list(it->string, allowed)) {
            snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", it->string);
            return conversion_failure(f, "unknown_field", where, "unknown field");
        }
    }
    for (; required && *required; required++) {
        if (!cJSON_GetObjectItemCaseSensitive(obj, *required)) {
            snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", *required);
            return conversion_failure(f, "missing_field", where, "missing field");
        }
    }
    return 0;
}

/* A JSON number that must fit an unsigned C integer of at most `max`. */
static int get_uint(const cJSON *v, const char *path, double max, uint64_t *out, failure *f) {
    if (!cJSON_IsNumber(v)) return conversion_failure(f, "invalid_type", path, "expected an integer");
    double d = v->valuedouble;
    if (d != floor(d)) return conversion_failure(f, "invalid_type", path, "expected an integer, got a fraction");
    if (d < 0 || d > max) return conversion_failure(f, "out_of_range", path, "integer out of range for its C type");
    *out = (uint64_t)d;
    return 0;
}

static int get_u32(const cJSON *v, const char *path, uint32_t *out, failure *f) {
    uint64_t x;
    if (get_uint(v, path, 4294967295.0, &x, f)) return -1;
    *out = (uint32_t)x;
    return 0;
}

static int get_u16(const cJSON *v, const char *path, uint16_t *out, failure *f) {
    uint64_t x;
    if (get_uint(v, path, 65535.0, &x, f)) return -1;
    *out = (uint16_t)x;
    return 0;
}

/* A duration: numbers go through rp_duration_ms_from_int64/_double, strings _from_string. */
static int get_duration(const cJSON *v, const char *path, uint64_t *out, failure *f) {
    if (cJSON_IsString(v)) {
        TRY(rp_duration_ms_from_string(v->valuestring, out), path);
        return 0;
    }
    if (!cJSON_IsNumber(v)) return conversion_failure(f, "invalid_type", path, "expected milliseconds");
    double d = v->valuedouble;
    if (d == floor(d) && fabs(d) < 9.2e18) {
        TRY(rp_duration_ms_from_int64((int64_t)d, out), path);
    } else {
        TRY(rp_duration_ms_from_double(d, out), path);
    }
    return 0;
}

static int get_string(const cJSON *v, const char *path, const char **out, failure *f) {
    if (!cJSON_IsString(v)) return conversion_failure(f, "invalid_type", path, "expected a string");
    *out = v->valuestring;
    return 0;
}

static int get_bool(const cJSON *v, const char *path, bool *out, failure *f) {
    if (!cJSON_IsBool(v)) return conversion_failure(f, "invalid_type", path, "expected a boolean");
    *out = cJSON_IsTrue(v);
    return 0;
}

static int get_number(const cJSON *v, const char *path, double *out, failure *f) {
    if (!cJSON_IsNumber(v)) return conversion_failure(f, "invalid_type", path, "expected a number");
    *out = v->valuedouble;
    return 0;
}

/* A compat object as the policy `{"compat": <v>}`, read by rp_policy_from_json (the core checks it). */
static int get_compat(const cJSON *v, rp_policy **out, failure *f) {
    cJSON *wrap = cJSON_CreateObject();
    cJSON_AddItemToObject(wrap, "compat", cJSON_Duplicate(v, 1));
    char *text = cJSON_PrintUnformatted(wrap);
    cJSON_Delete(wrap);
    rp_result rc = rp_policy_from_json(text, strlen(text), out);
    cJSON_free(text);
    return rc == RP_RESULT_OK ? 0 : lib_failure(f, rc, "compat");
}

static int get_policy(const cJSON *v, rp_policy **out, failure *f) {
    char *text = cJSON_PrintUnformatted(v);
    rp_result rc = rp_policy_from_json(text, strlen(text), out);
    cJSON_free(text);
    return rc == RP_RESULT_OK ? 0 : lib_failure(f, rc, "policy");
}

/* ---- C -> JSON output -------------------------------------------------------------------- */

static void add_ms(cJSON *obj, const char *key, uint64_t v) {
    if (v > MAX_SAFE_MS) {
        char text[32];
        snprintf(text, sizeof text, "%" PRIu64, v);
        cJSON_AddStringToObject(obj, key, text);
    } else {
        cJSON_AddNumberToObject(obj, key, (double)v);
    }
}

/* key: name when the lookup succeeded and gave one, else JSON null. */
static void add_looked_up(cJSON *obj, const char *key, rp_result rc, const char *name) {
    if (rc == RP_RESULT_OK && name)
        cJSON_AddStringToObject(obj, key, name);
    else
        cJSON_AddNullToObject(obj, key);
}

static void add_reason(cJSON *obj, const char *key, rp_reason reason) {
    const char *name = NULL;
    rp_result rc = rp_reason_name(reason, &name);
    add_looked_up(obj, key, rc, name);
}

static cJSON *classification_json(const rp_classification *c) {
    cJSON *out = cJSON_CreateObject();
    if (c->has_reason)
        add_reason(out, "reason", c->reason);
    else
        cJSON_AddNullToObject(out, "reason");
    cJSON_AddStringToObject(out, "rule", c->rule);
    cJSON_AddStringToObject(out, "section", c->section);
    if (c->surface_as) cJSON_AddStringToObject(out, "surface_as", c->surface_as);
    return out;
}

static cJSON *decision_json(const rp_decision *d) {
    cJSON *out = cJSON_CreateObject();
    const char *name = NULL;
    rp_result rc;
    int retry = d->action == RP_ACTION_RETRY;
    cJSON_AddStringToObject(out, "action", retry ? "retry" : "no_retry");
    if (retry) {
        add_ms(out, "delay_ms", d->delay_ms);
        cJSON_AddBoolToObject(out, "capped", d->capped);
        cJSON_AddBoolToObject(out, "then_cancel", d->then_cancel);
    } else {
        rc = rp_no_retry_cause_name(d->cause, &name);
        add_looked_up(out, "cause", rc, name);
    }
    add_reason(out, "reason", d->reason);
    rc = rp_rule_name(d->rule, &name);
    add_looked_up(out, "rule", rc, name);
    rc = rp_rule_section(d->rule, &name);
    add_looked_up(out, "section", rc, name);
    cJSON_AddNumberToObject(out, "attempts", d->attempts);
    cJSON_AddBoolToObject(out, "idempotent", d->idempotent);
    return out;
}

/* ---- adapters: input -> output object, or -1 with *f set ------------------------------- */

typedef int (*adapter)(const cJSON *in, cJSON **out, failure *f);

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ITEM(name) cJSON_GetObjectItemCaseSensitive(in, name)

static int reason_flags(const cJSON *in, cJSON **out, failure *f) {
    const char *text, *name;
    rp_reason r;
    bool allows, always;
    if (check_keys(in, "", KEYS("reason"), KEYS("reason"), f)) return -1;
    if (get_string(ITEM("reason"), "reason", &text, f)) return -1;
    TRY(rp_reason_from_name(text, &r), "reason");
    TRY(rp_reason_name(r, &name), "reason");
    TRY(rp_reason_allows_non_idempotent_retry(r, &allows), "reason");
    TRY(rp_reason_always_retry(r, &always), "reason");
    *out = cJSON_CreateObject();
    cJSON_AddStringToObject(*out, "name", name);
    cJSON_AddBoolToObject(*out, "allows_non_idempotent_retry", allows);
    cJSON_AddBoolToObject(*out, "always_retry", always);
    return 0;
}

static int is_idempotent(const cJSON *in, cJSON **out, failure *f) {
    rp_operation op;
    bool idempotent;
    char *text = cJSON_PrintUnformatted(in);
    rp_result rc = rp_operation_from_json(text, strlen(text), &op);
    cJSON_free(text);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "operation");
    TRY(rp_operation_is_idempotent(&op, &idempotent), "operation");
    *out = cJSON_CreateObject();
    cJSON_AddBoolToObject(*out, "idempotent", idempotent);
    return 0;
}

static int classify_kv(const cJSON *in, cJSON **out, failure *f) {
    const char *name;
    rp_kv_operation op;
    uint16_t status;
    rp_policy *compat = NULL;
    rp_error_map *map = NULL;
    rp_classification c;
    if (check_keys(in, "", KEYS("operation", "status", "error_map", "compat"), KEYS("operation", "status"), f))
        return -1;
    if (get_string(ITEM("operation"), "operation", &name, f)) return -1;
    TRY(rp_kv_operation_from_name(name, &op), "operation");
    const cJSON *s = ITEM("status");
    if (cJSON_IsString(s)) {
        TRY(rp_kv_status_from_string(s->valuestring, &status), "status");
    } else if (get_u16(s, "status", &status, f)) {
        return -1;
    }
    if (ITEM("compat") && get_compat(ITEM("compat"), &compat, f)) return -1;
    const cJSON *m = ITEM("error_map");
    if (m && !cJSON_IsNull(m)) {
        char *text = cJSON_PrintUnformatted(m);
        rp_result rc = rp_error_map_from_json(text, strlen(text), &map);
        cJSON_free(text);
        if (rc != RP_RESULT_OK) {
            rp_policy_free(compat);
            return lib_failure(f, rc, "error_map");
        }
    }
    rp_result rc = rp_classify_kv(op, status, map, compat, &c);
    rp_error_map_free(map);
    rp_policy_free(compat);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "classify_kv");
    *out = classification_json(&c);
    return 0;
}

static int classify_query(const cJSON *in, cJSON **out, failure *f) {
    uint32_t code;
    const char *message = "";
    rp_policy *compat = NULL;
    rp_classification c;
    if (check_keys(in, "", KEYS("code", "message", "compat"), KEYS("code"), f)) return -1;
    if (get_u32(ITEM("code"), "code", &code, f)) return -1;
    if (ITEM("message") && get_string(ITEM("message"), "message", &message, f)) return -1;
    if (ITEM("compat") && get_compat(ITEM("compat"), &compat, f)) return -1;
    rp_result rc = rp_classify_query(code, message, strlen(message), compat, &c);
    rp_policy_free(compat);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "classify_query");
    *out = classification_json(&c);
    return 0;
}

static int classify_analytics(const cJSON *in, cJSON **out, failure *f) {
    uint32_t code;
    rp_classification c;
    if (check_keys(in, "", KEYS("code"), KEYS("code"), f)) return -1;
    if (get_u32(ITEM("code"), "code", &code, f)) return -1;
    TRY(rp_classify_analytics(code, &c), "classify_analytics");
    *out = classification_json(&c);
    return 0;
}

static int http_input(const cJSON *in, uint16_t *status, const char **body, failure *f) {
    if (check_keys(in, "", KEYS("http_status", "body"), KEYS("http_status"), f)) return -1;
    if (get_u16(ITEM("http_status"), "http_status", status, f)) return -1;
    *body = "";
    if (ITEM("body") && get_string(ITEM("body"), "body", body, f)) return -1;
    return 0;
}

static int classify_search(const cJSON *in, cJSON **out, failure *f) {
    uint16_t status;
    const char *body;
    rp_classification c;
    if (http_input(in, &status, &body, f)) return -1;
    TRY(rp_classify_search(status, &c), "classify_search");
    *out = classification_json(&c);
    return 0;
}

static int classify_views(const cJSON *in, cJSON **out, failure *f) {
    uint16_t status;
    const char *body;
    rp_classification c;
    if (http_input(in, &status, &body, f)) return -1;
    TRY(rp_classify_views(status, body, strlen(body), &c), "classify_views");
    *out = classification_json(&c);
    return 0;
}

static int classify_dispatch(const cJSON *in, cJSON **out, failure *f) {
    const char *name;
    rp_dispatch_failure failure_kind;
    rp_classification c;
    if (check_keys(in, "", KEYS("failure"), KEYS("failure"), f)) return -1;
    if (get_string(ITEM("failure"), "failure", &name, f)) return -1;
    TRY(rp_dispatch_failure_from_name(name, &failure_kind), "failure");
    TRY(rp_classify_dispatch(failure_kind, &c), "classify_dispatch");
    *out = classification_json(&c);
    return 0;
}

static int controlled_backoff(const cJSON *in, cJSON **out, failure *f) {
    uint32_t attempt;
    uint64_t delay;
    if (check_keys(in, "", KEYS("attempt"), KEYS("attempt"), f)) return -1;
    if (get_u32(ITEM("attempt"), "attempt", &attempt, f)) return -1;
    TRY(rp_controlled_backoff(attempt, &delay), "controlled_backoff");
    *out = cJSON_CreateObject();
    add_ms(*out, "delay_ms", delay);
    return 0;
}

#define MAX_PREVIOUS 64

/* The inputs every decide function shares: the request, the reason, and the policy if any. */
typedef struct {
    rp_request request;
    rp_reason previous[MAX_PREVIOUS];
    rp_reason reason;
    rp_policy *policy;
} decide_input;

/* Reads `in` (its keys: request, reason, policy, and `extra`, the function's own) into *d. */
static int read_decide_input(const cJSON *in, const char *extra, decide_input *d, failure *f) {
    static const char *const operation_keys[] = {"service", "operation", "readonly", "method", NULL};
    rp_request *req = &d->request;
    const char *name;
    char path[128];
    memset(d, 0, sizeof *d);
    if (check_keys(in, "", KEYS("request", "reason", "policy", extra), KEYS("request", "reason"), f)) return -1;
    const cJSON *r = ITEM("request");
    if (check_keys(r, "request",
                   KEYS("service", "operation", "readonly", "method", "idempotent", "attempts", "elapsed_ms",
                        "timeout_ms", "previous_reasons", "strategy", "random", "previous_delay_ms"),
                   KEYS("attempts", "elapsed_ms", "timeout_ms"), f))
        return -1;
    /* The operation's fields go to rp_operation_from_json, which applies the core's rules. */
    cJSON *op = cJSON_CreateObject();
    for (const char *const *k = operation_keys; *k; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, *k);
        if (v) cJSON_AddItemToObject(op, *k, cJSON_Duplicate(v, 1));
    }
    char *text = cJSON_PrintUnformatted(op);
    cJSON_Delete(op);
    rp_result rc = rp_operation_from_json(text, strlen(text), &req->operation);
    cJSON_free(text);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "request");
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "idempotent")) && !cJSON_IsNull(v)) {
        if (get_bool(v, "request.idempotent", &req->idempotent, f)) return -1;
        req->has_idempotent = true;
    }
    if (get_u32(cJSON_GetObjectItemCaseSensitive(r, "attempts"), "request.attempts", &req->attempts, f)) return -1;
    if (get_duration(cJSON_GetObjectItemCaseSensitive(r, "elapsed_ms"), "request.elapsed_ms", &req->elapsed_ms, f))
        return -1;
    if (get_duration(cJSON_GetObjectItemCaseSensitive(r, "timeout_ms"), "request.timeout_ms", &req->timeout_ms, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "previous_reasons"))) {
        if (!cJSON_IsArray(v))
            return conversion_failure(f, "invalid_type", "request.previous_reasons", "expected an array");
        size_t i = 0;
        for (const cJSON *e = v->child; e; e = e->next, i++) {
            snprintf(path, sizeof path, "request.previous_reasons[%zu]", i);
            if (i >= MAX_PREVIOUS) return conversion_failure(f, "out_of_range", path, "too many for this runner");
            if (get_string(e, path, &name, f)) return -1;
            TRY(rp_reason_from_name(name, &d->previous[i]), path);
        }
        req->previous_reasons = d->previous;
        req->previous_reasons_len = i;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "strategy")) && !cJSON_IsNull(v)) {
        if (get_string(v, "request.strategy", &name, f)) return -1;
        TRY(rp_strategy_from_name(name, &req->strategy), "request.strategy");
        req->has_strategy = true;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "random")) && !cJSON_IsNull(v)) {
        if (get_number(v, "request.random", &req->random, f)) return -1;
        req->has_random = true;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "previous_delay_ms")) && !cJSON_IsNull(v)) {
        if (get_duration(v, "request.previous_delay_ms", &req->previous_delay_ms, f)) return -1;
        req->has_previous_delay_ms = true;
    }
    if (get_string(ITEM("reason"), "reason", &name, f)) return -1;
    TRY(rp_reason_from_name(name, &d->reason), "reason");
    if (ITEM("policy") && get_policy(ITEM("policy"), &d->policy, f)) return -1;
    return 0;
}

/* The call's decision (or rc's failure, reported as `path`), after freeing the policy. */
static int decided(decide_input *d, rp_result rc, const char *path, const rp_decision *decision, cJSON **out,
                   failure *f) {
    rp_policy_free(d->policy);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, path);
    *out = decision_json(decision);
    return 0;
}

static int decide(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    rp_decision decision;
    if (read_decide_input(in, NULL, &d, f)) return -1;
    return decided(&d, rp_decide(&d.request, d.reason, d.policy, &decision), "decide", &decision, out, f);
}

/* A host strategy's fixed answer, the user_data of fixed_strategy. */
typedef struct {
    bool retry;
    uint64_t delay_ms;
} fixed_answer;

/* The fixtures' host strategy ({"retry_after_ms": N or null}) as a C strategy function. */
static bool fixed_strategy(void *user_data, const rp_request *request, rp_reason reason, uint64_t *delay_ms) {
    const fixed_answer *answer = user_data;
    (void)request, (void)reason;
    *delay_ms = answer->delay_ms;
    return answer->retry;
}

/* The answer `v` holds (N: retry after N ms; null: do not retry), read as the duration at `path`. */
static int get_answer(const cJSON *v, const char *path, fixed_answer *answer, failure *f) {
    answer->retry = !cJSON_IsNull(v);
    answer->delay_ms = 0;
    return answer->retry ? get_duration(v, path, &answer->delay_ms, f) : 0;
}

/* With `host`, through rp_decide_with_strategy and a real C strategy function; without, rp_decide. */
static int decide_with(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    fixed_answer answer;
    rp_decision decision;
    if (read_decide_input(in, "host", &d, f)) return -1;
    const cJSON *host = ITEM("host");
    if (!host) return decided(&d, rp_decide(&d.request, d.reason, d.policy, &decision), "decide", &decision, out, f);
    if (check_keys(host, "host", KEYS("retry_after_ms"), KEYS("retry_after_ms"), f) ||
        get_answer(cJSON_GetObjectItemCaseSensitive(host, "retry_after_ms"), "host.retry_after_ms", &answer, f)) {
        rp_policy_free(d.policy);
        return -1;
    }
    rp_result rc = rp_decide_with_strategy(&d.request, d.reason, d.policy, fixed_strategy, &answer, &decision);
    return decided(&d, rc, "decide_with", &decision, out, f);
}

static int decide_before_strategy(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    rp_decision decision;
    bool done = false;
    if (read_decide_input(in, NULL, &d, f)) return -1;
    rp_result rc = rp_decide_before_strategy(&d.request, d.reason, d.policy, &done, &decision);
    rp_policy_free(d.policy);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "decide_before_strategy");
    *out = cJSON_CreateObject();
    cJSON_AddItemToObject(*out, "decision", done ? decision_json(&decision) : cJSON_CreateNull());
    return 0;
}

static int decide_after_strategy(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    fixed_answer answer;
    rp_decision decision;
    if (read_decide_input(in, "retry_after_ms", &d, f)) return -1;
    rp_policy_free(d.policy); /* (the core's after-strategy step reads no policy) */
    d.policy = NULL;
    const cJSON *answer_json = ITEM("retry_after_ms");
    if (!answer_json) return conversion_failure(f, "missing_field", "retry_after_ms", "missing field");
    if (get_answer(answer_json, "retry_after_ms", &answer, f)) return -1;
    rp_result rc = rp_decide_after_strategy(&d.request, d.reason, answer.retry, answer.delay_ms, &decision);
    return decided(&d, rc, "decide_after_strategy", &decision, out, f);
}

static int parse_policy(const cJSON *in, cJSON **out, failure *f) {
    const char *json;
    rp_policy *policy = NULL;
    char *normalized = NULL;
    if (check_keys(in, "", KEYS("json"), KEYS("json"), f)) return -1;
    if (get_string(ITEM("json"), "json", &json, f)) return -1;
    TRY(rp_policy_from_json(json, strlen(json), &policy), "json");
    rp_result rc = rp_policy_to_json(policy, &normalized);
    rp_policy_free(policy);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "policy");
    cJSON *doc = cJSON_Parse(normalized);
    rp_string_free(normalized);
    if (!doc) return conversion_failure(f, "malformed_json", "policy", "rp_policy_to_json wrote invalid JSON");
    *out = cJSON_CreateObject();
    cJSON_AddItemToObject(*out, "policy", doc);
    return 0;
}

/* Functions without a typed C API (MongoDB, HTTP, transactions) go through rp_call_json. */
static const char *current_function = "";

static int json_api(const cJSON *in, cJSON **out, failure *f) {
    char *input = cJSON_PrintUnformatted(in);
    char *result = NULL;
    rp_result rc = rp_call_json(current_function, input, strlen(input), &result);
    cJSON_free(input);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, current_function);
    *out = cJSON_Parse(result);
    rp_string_free(result);
    if (!*out) return conversion_failure(f, "malformed_json", current_function, "rp_call_json wrote invalid JSON");
    return 0;
}

static const struct {
    const char *function;
    adapter run;
} ADAPTERS[] = {
    {"reason_flags", reason_flags},
    {"is_idempotent", is_idempotent},
    {"classify_kv", classify_kv},
    {"classify_query", classify_query},
    {"classify_analytics", classify_analytics},
    {"classify_search", classify_search},
    {"classify_views", classify_views},
    {"classify_dispatch", classify_dispatch},
    {"controlled_backoff", controlled_backoff},
    {"decide", decide},
    {"decide_with", decide_with},
    {"decide_before_strategy", decide_before_strategy},
    {"decide_after_strategy", decide_after_strategy},
    {"parse_policy", parse_policy},
};

/* ---- comparison and the run loop --------------------------------------------------------- */

static int json_eq(const cJSON *a, const cJSON *b) {
    if (!a || cJSON_IsNull(a)) return !b || cJSON_IsNull(b);
    if (!b) return 0;
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a) && cJSON_IsString(b)) return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsBool(a) && cJSON_IsBool(b)) return cJSON_IsTrue(a) == cJSON_IsTrue(b);
    if (cJSON_IsArray(a) && cJSON_IsArray(b)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return 0;
        for (const cJSON *x = a->child, *y = b->child; x && y; x = x->next, y = y->next)
            if (!json_eq(x, y)) return 0;
        return 1;
    }
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return 0;
        for (const cJSON *x = a->child; x; x = x->next)
            if (!json_eq(x, cJSON_GetObjectItemCaseSensitive(b, x->string))) return 0;
        return 1;
    }
    return 0;
}

typedef struct {
    long passed, failed;
} tally;

static void print_json(const cJSON *v, FILE *out) {
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    fputs(text ? text : "null", out);
    cJSON_free(text);
}

/* 0 = pass; otherwise prints why. */
static int check_case(const char *file, const char *id, adapter run, const cJSON *c) {
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(c, "input");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    const cJSON *expect_error = cJSON_GetObjectItemCaseSensitive(c, "expect_error");
    const cJSON *error_field = cJSON_GetObjectItemCaseSensitive(c, "error_field");
    failure f = {{0}, {0}};
    cJSON *out = NULL;
    int ok = 0;
    if (!input) {
        printf("FAIL %s: %s: case has no input\n", file, id);
        return 1;
    }
    if (run(input, &out, &f) != 0) {
        if (!cJSON_IsString(expect_error)) {
            printf("FAIL %s: %s: unexpected error %s (%s)\n", file, id, f.code, f.message);
        } else if (strcmp(expect_error->valuestring, f.code) != 0) {
            printf("FAIL %s: %s: expected error %s, got %s (%s)\n", file, id, expect_error->valuestring, f.code,
                   f.message);
        } else if (cJSON_IsString(error_field) && !strstr(f.message, error_field->valuestring)) {
            printf("FAIL %s: %s: error message does not name \"%s\": %s\n", file, id, error_field->valuestring,
                   f.message);
        } else {
            ok = 1;
        }
    } else if (expect_error) {
        printf("FAIL %s: %s: expected error ", file, id);
        print_json(expect_error, stdout);
        printf(", got output ");
        print_json(out, stdout);
        printf("\n");
    } else if (!cJSON_IsObject(expect)) {
        printf("FAIL %s: %s: case needs an expect object or an expect_error string\n", file, id);
    } else {
        ok = 1;
        for (const cJSON *k = expect->child; k && ok; k = k->next) {
            const cJSON *got = cJSON_GetObjectItemCaseSensitive(out, k->string);
            if (!json_eq(k, got)) {
                ok = 0;
                printf("FAIL %s: %s: %s: expected ", file, id, k->string);
                print_json(k, stdout);
                printf(", got ");
                print_json(got, stdout);
                printf(" (whole output ");
                print_json(out, stdout);
                printf(")\n");
            }
        }
    }
    cJSON_Delete(out);
    return !ok;
}

static char *read_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = NULL;
    long n = -1;
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        if (buf) buf[n] = '\0';
    }
    fclose(fp);
    return buf;
}

static void run_file(const char *file, tally *t) {
    char *text = read_file(file);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!doc) {
        printf("FAIL %s: unreadable or not JSON\n", file);
        t->failed++;
        return;
    }
    const cJSON *function = cJSON_GetObjectItemCaseSensitive(doc, "function");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const char *name = cJSON_IsString(function) ? function->valuestring : "";
    if (!cJSON_IsArray(cases)) {
        printf("FAIL %s: no cases array\n", file);
        t->failed++;
        cJSON_Delete(doc);
        return;
    }
    adapter run = NULL;
    for (size_t i = 0; i < sizeof ADAPTERS / sizeof ADAPTERS[0]; i++)
        if (strcmp(ADAPTERS[i].function, name) == 0) run = ADAPTERS[i].run;
    if (!run) {
        current_function = name;
        run = json_api;
    }
    for (const cJSON *c = cases->child; c; c = c->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (check_case(file, cJSON_IsString(id) ? id->valuestring : "<no id>", run, c))
            t->failed++;
        else
            t->passed++;
    }
    cJSON_Delete(doc);
}

typedef struct {
    char **paths;
    size_t len, cap;
} path_list;

static void collect(const char *dir, path_list *out) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            collect(p, out);
            free(p);
        } else if (strlen(e->d_name) > 5 && strcmp(e->d_name + strlen(e->d_name) - 5, ".json") == 0) {
            if (out->len == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 64;
                out->paths = realloc(out->paths, out->cap * sizeof *out->paths);
            }
            out->paths[out->len++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_dir(const char *dir, tally *t) {
    path_list files = {0};
    collect(dir, &files);
    qsort(files.paths, files.len, sizeof *files.paths, by_name);
    for (size_t i = 0; i < files.len; i++) {
        run_file(files.paths[i], t);
        free(files.paths[i]);
    }
    free(files.paths);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv) {
    tally t = {0, 0};
    if (argc != 2 || !is_dir(argv[1])) {
        printf("usage: %s CORPUS_DIR (a folder of fixture files)\n", argv[0]);
        t.failed++;
    } else {
        run_dir(argv[1], &t);
    }
    const char *extra = getenv("SPEC_FIXTURES_DIR");
    if (extra) {
        if (!is_dir(extra)) {
            printf("FAIL SPEC_FIXTURES_DIR %s is not a folder\n", extra);
            t.failed++;
        } else {
            run_dir(extra, &t);
        }
    }
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed > 0 ? 1 : 0;
}

/*
 * The C fixture runner: every spec fixture (spec-fixtures/README.md), through the public C API.
 *
 * Usage: fixtures CORPUS_DIR   (and SPEC_FIXTURES_DIR, when set, is run too)
 * FIXTURES_SKIP_IDS, when set, is a comma-separated list of case ids not to run (the Makefile's slow
 * cases under valgrind and ASan on the Rust side); naming an id no case has is a failure.
 * Prints one line per failure, then a line on the typed runs, then exactly "N passed, N failed" as
 * the last line; exits 1 when anything failed.
 *
 * Every case runs through rp_call_json, the core's JSON API by function name. Cases of functions
 * with a typed C API (classification, the decision functions, policies) also run through it, and
 * both answers must meet the expectation: the runner turns the case's JSON input into C values
 * (names through rp_enum_from_name, policies and error maps through their *_from_json), calls the
 * C function, and turns its output back into JSON. decide_with's host strategy is a real C
 * strategy function with the fixed answer as user_data. budget_run and breaker_run replay their
 * events through rp_budget and rp_breaker handles (tests/fixtures_budget.h), and run through an
 * rp_run handle (tests/fixtures_run.h). gRPC's functions go through the rp_grpc_* handles and
 * decisions (tests/fixtures_grpc.h), the AWS ones through rp_aws_decide, an rp_budget quota and an
 * rp_aws_rate_limiter (tests/fixtures_aws.h).
 *
 * The runner decides no error itself. An input C cannot express at all (a string where a uint32_t
 * goes, -1 for a uint64_t, a key the C struct does not have, a required key left out) has no typed
 * run: the JSON API's answer is the case's, and such an input must be an error case (a valid input
 * the runner cannot convert is a failure). Library failures are reported with
 * rp_result_code_name() and rp_last_error_message(), prefixed with the JSON path being converted.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <retrypolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SAFE_MS 9007199254740991ULL

/* Numbers printed exactly, in place: cJSON keeps numbers as doubles and prints an integral one of
 * 15 or more digits in exponent form (9007199254740990 as 9.00719925474099e+15), which the library
 * would read as a float where a whole number belongs, and any other with 15 significant digits,
 * which it takes as round-tripping when it is within an epsilon (0.8824659495960668 came out as
 * 0.882465949596067). Integral ones are whole digits; others the fewest digits strtod reads back
 * to the same double. */
static void exact_numbers(cJSON *v) {
    for (cJSON *c = v ? v->child : NULL; c; c = c->next) exact_numbers(c);
    if (!v || !cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return;
    double d = v->valuedouble;
    char digits[40];
    if (d == floor(d) && fabs(d) >= 1e15 && fabs(d) < 1.8446744073709552e19) {
        snprintf(digits, sizeof digits, "%.0f", d);
    } else if (d != floor(d)) {
        for (int precision = 15; precision <= 17; precision++) {
            snprintf(digits, sizeof digits, "%.*g", precision, d);
            if (strtod(digits, NULL) == d) break;
        }
    } else {
        return;
    }
    char *raw = strdup(digits);
    if (!raw) return;
    v->type = cJSON_Raw;
    v->valuestring = raw;
}

/* `cJSON_PrintUnformatted` of `v` with its integral numbers in whole digits (a copy is changed). */
static char *print_exact(const cJSON *v) {
    cJSON *copy = cJSON_Duplicate(v, true);
    if (!copy) return NULL;
    exact_numbers(copy);
    char *text = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}

typedef struct {
    int inexpressible; /* the input has no C form: no typed run (HOST_STRATEGY_GAP: see below) */
    char code[64];
    char message[1024];
} failure;

/* ---- failures ---------------------------------------------------------------------------- */

static int lib_failure(failure *f, rp_result rc, const char *path) {
    const char *code = rp_result_code_name(rc);
    snprintf(f->code, sizeof f->code, "%s", code ? code : "(unknown rp_result)");
    snprintf(f->message, sizeof f->message, "%s: %s", path, rp_last_error_message());
    return -1;
}

/* `inexpressible` for a run with a host strategy: the one valid input the typed C API cannot
 * express (rp_run takes no strategy callback; rp_decide does), counted apart and never a failure. */
#define HOST_STRATEGY_GAP 2

static int cannot_express(failure *f, const char *path, const char *what) {
    f->inexpressible = 1;
    snprintf(f->code, sizeof f->code, "(no C form)");
    snprintf(f->message, sizeof f->message, "%s: %s", path, what);
    return -1;
}

#define TRY(call, path)                                              \
    do {                                                             \
        rp_result rc_ = (call);                                      \
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
    if (!cJSON_IsObject(obj)) return cannot_express(f, path, "not an object");
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (!in_list(it->string, allowed)) {
            snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", it->string);
            return cannot_express(f, where, "a key the C API does not have");
        }
    }
    for (; required && *required; required++) {
        if (!cJSON_GetObjectItemCaseSensitive(obj, *required)) {
            snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", *required);
            return cannot_express(f, where, "missing");
        }
    }
    return 0;
}

/* A JSON number that is a whole number in [0, max]. */
static int get_uint(const cJSON *v, const char *path, double max, uint64_t *out, failure *f) {
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > max)
        return cannot_express(f, path, "not an unsigned integer of its C type");
    *out = (uint64_t)v->valuedouble;
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

/* Digits only, as a uint64_t in `base` (10, or 16 after "0x"), no larger than `max`. */
static int parse_digits(const char *text, int base, uint64_t max, uint64_t *out) {
    if (!*text) return -1;
    for (const char *c = text; *c; c++)
        if (base == 10 ? !isdigit((unsigned char)*c) : !isxdigit((unsigned char)*c)) return -1;
    errno = 0;
    unsigned long long x = strtoull(text, NULL, base);
    if (errno || x > max) return -1;
    *out = x;
    return 0;
}

/* Milliseconds in the C API's uint64_t: a whole JSON number (at most 2^53-1) or a decimal string. */
static int get_ms(const cJSON *v, const char *path, uint64_t *out, failure *f) {
    if (cJSON_IsString(v) && parse_digits(v->valuestring, 10, UINT64_MAX, out) == 0) return 0;
    if (cJSON_IsString(v)) return cannot_express(f, path, "not a decimal uint64_t");
    return get_uint(v, path, (double)MAX_SAFE_MS, out, f);
}

/* A KV status: a number, or hex text "0x..." (the fixtures' form), as the C API's uint16_t. */
static int get_status(const cJSON *v, const char *path, uint16_t *out, failure *f) {
    uint64_t x;
    if (!cJSON_IsString(v)) return get_u16(v, path, out, f);
    const char *t = v->valuestring;
    if ((strncmp(t, "0x", 2) != 0 && strncmp(t, "0X", 2) != 0) || parse_digits(t + 2, 16, 0xffff, &x) != 0)
        return cannot_express(f, path, "not a uint16_t in hex");
    *out = (uint16_t)x;
    return 0;
}

static int get_string(const cJSON *v, const char *path, const char **out, failure *f) {
    if (!cJSON_IsString(v)) return cannot_express(f, path, "not a string");
    *out = v->valuestring;
    return 0;
}

static int get_bool(const cJSON *v, const char *path, bool *out, failure *f) {
    if (!cJSON_IsBool(v)) return cannot_express(f, path, "not a boolean");
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A name, turned into its C constant by the library (rp_enum_from_name decides unknown names). */
static int get_name(rp_enum kind, const cJSON *v, const char *path, uint32_t *out, failure *f) {
    const char *name;
    if (get_string(v, path, &name, f)) return -1;
    TRY(rp_enum_from_name(kind, name, out), path);
    return 0;
}

/* A JSON value, printed and read by `read` (rp_policy_from_json, rp_error_map_from_json). */
#define READ_DOCUMENT(read, value, out, path)                        \
    do {                                                             \
        char *text_ = print_exact(value);                 \
        rp_result rc_ = read(text_, strlen(text_), (out));           \
        cJSON_free(text_);                                           \
        if (rc_ != RP_RESULT_OK) return lib_failure(f, rc_, (path)); \
    } while (0)

/* A compat object as the policy {"compat": <v>}, read by rp_policy_from_json (the core checks it). */
static int get_compat(const cJSON *v, rp_policy **out, failure *f) {
    cJSON *wrap = cJSON_CreateObject();
    cJSON_AddItemToObject(wrap, "compat", cJSON_Duplicate(v, 1));
    char *text = print_exact(wrap);
    cJSON_Delete(wrap);
    rp_result rc = rp_policy_from_json(text, strlen(text), out);
    cJSON_free(text);
    return rc == RP_RESULT_OK ? 0 : lib_failure(f, rc, "compat");
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

/* key: the name of `value` of `kind` when it has one, else JSON null. */
static void add_name(cJSON *obj, const char *key, rp_enum kind, uint32_t value) {
    const char *name = NULL;
    if (rp_enum_name(kind, value, &name) == RP_RESULT_OK && name)
        cJSON_AddStringToObject(obj, key, name);
    else
        cJSON_AddNullToObject(obj, key);
}

static cJSON *classification_json(const rp_classification *c) {
    cJSON *out = cJSON_CreateObject();
    if (c->has_reason)
        add_name(out, "reason", RP_ENUM_REASON, c->reason);
    else
        cJSON_AddNullToObject(out, "reason");
    cJSON_AddStringToObject(out, "rule", c->rule);
    cJSON_AddStringToObject(out, "section", c->section);
    if (c->surface_as) cJSON_AddStringToObject(out, "surface_as", c->surface_as);
    return out;
}

static cJSON *decision_json(const rp_decision *d) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "action", d->retry ? "retry" : "no_retry");
    if (d->retry) {
        add_ms(out, "delay_ms", d->delay_ms);
        cJSON_AddBoolToObject(out, "capped", d->capped);
        cJSON_AddBoolToObject(out, "then_cancel", d->then_cancel);
    } else {
        add_name(out, "cause", RP_ENUM_NO_RETRY_CAUSE, d->cause);
    }
    add_name(out, "reason", RP_ENUM_REASON, d->reason);
    add_name(out, "rule", RP_ENUM_RULE, d->rule);
    const char *section = NULL;
    if (rp_rule_section(d->rule, &section) == RP_RESULT_OK)
        cJSON_AddStringToObject(out, "section", section);
    else
        cJSON_AddNullToObject(out, "section");
    cJSON_AddNumberToObject(out, "attempts", d->attempts);
    cJSON_AddBoolToObject(out, "idempotent", d->idempotent);
    return out;
}

/* ---- typed adapters: input -> output object (NULL: nothing to compare), or -1 with *f set ---- */

typedef int (*adapter)(const cJSON *in, cJSON **out, failure *f);

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ITEM(name) cJSON_GetObjectItemCaseSensitive(in, name)
/* An optional argument: absent when missing or null (the fixtures' input contract), so the C call
 * gets its default (an empty text, false, no policy). */
#define OPT(name) (cJSON_IsNull(ITEM(name)) ? NULL : ITEM(name))

static int classified(rp_result rc, const rp_classification *c, const char *path, cJSON **out, failure *f) {
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, path);
    *out = classification_json(c);
    return 0;
}

static int classify_kv(const cJSON *in, cJSON **out, failure *f) {
    uint32_t op = 0;
    uint16_t status = 0;
    rp_policy *compat = NULL;
    rp_error_map *map = NULL;
    rp_classification c;
    if (check_keys(in, "", KEYS("operation", "status", "error_map", "compat"), KEYS("operation", "status"), f) ||
        get_name(RP_ENUM_KV_OPERATION, ITEM("operation"), "operation", &op, f) ||
        get_status(ITEM("status"), "status", &status, f))
        return -1;
    const cJSON *m = ITEM("error_map");
    if (m && !cJSON_IsNull(m)) READ_DOCUMENT(rp_error_map_from_json, m, &map, "error_map");
    if (ITEM("compat") && get_compat(ITEM("compat"), &compat, f)) {
        rp_error_map_free(map);
        return -1;
    }
    rp_result rc = rp_classify_kv(op, status, map, compat, &c);
    rp_error_map_free(map);
    rp_policy_free(compat);
    return classified(rc, &c, "classify_kv", out, f);
}

static int classify_query(const cJSON *in, cJSON **out, failure *f) {
    uint32_t code;
    const char *message = "";
    bool retry = false;
    rp_policy *compat = NULL;
    rp_classification c;
    if (check_keys(in, "", KEYS("code", "message", "retry", "compat"), KEYS("code"), f) ||
        get_u32(ITEM("code"), "code", &code, f) ||
        (OPT("message") && get_string(ITEM("message"), "message", &message, f)) ||
        (OPT("retry") && get_bool(ITEM("retry"), "retry", &retry, f)) ||
        (OPT("compat") && get_compat(ITEM("compat"), &compat, f)))
        return -1;
    rp_result rc = rp_classify_query(code, message, strlen(message), retry, compat, &c);
    rp_policy_free(compat);
    return classified(rc, &c, "classify_query", out, f);
}

static int classify_analytics(const cJSON *in, cJSON **out, failure *f) {
    uint32_t code;
    rp_classification c;
    if (check_keys(in, "", KEYS("code"), KEYS("code"), f) || get_u32(ITEM("code"), "code", &code, f)) return -1;
    return classified(rp_classify_analytics(code, &c), &c, "classify_analytics", out, f);
}

/* Search and views read {http_status, body?}; search's classification looks at the status only. */
static int http_input(const cJSON *in, uint16_t *status, const char **body, failure *f) {
    *body = "";
    if (check_keys(in, "", KEYS("http_status", "body"), KEYS("http_status"), f) ||
        get_u16(ITEM("http_status"), "http_status", status, f) ||
        (OPT("body") && get_string(ITEM("body"), "body", body, f)))
        return -1;
    return 0;
}

static int classify_search(const cJSON *in, cJSON **out, failure *f) {
    uint16_t status = 0;
    const char *body;
    rp_classification c;
    if (http_input(in, &status, &body, f)) return -1;
    return classified(rp_classify_search(status, &c), &c, "classify_search", out, f);
}

static int classify_views(const cJSON *in, cJSON **out, failure *f) {
    uint16_t status = 0;
    const char *body;
    rp_classification c;
    if (http_input(in, &status, &body, f)) return -1;
    return classified(rp_classify_views(status, body, strlen(body), &c), &c, "classify_views", out, f);
}

#define MAX_PREVIOUS 64

/* The inputs every decide function shares: the request, the reason, and the policy if any. */
typedef struct {
    rp_request request;
    rp_reason previous[MAX_PREVIOUS];
    rp_reason reason;
    rp_policy *policy;
} decide_input;

/* The operation's fields of request `r` into `op`: only those its service reads may be there. */
static int read_operation(const cJSON *r, rp_operation *op, failure *f) {
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(r, "operation");
    const cJSON *readonly = cJSON_GetObjectItemCaseSensitive(r, "readonly");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(r, "method");
    if (get_name(RP_ENUM_SERVICE, cJSON_GetObjectItemCaseSensitive(r, "service"), "request.service", &op->service, f))
        return -1;
    int is_kv = op->service == RP_SERVICE_KV;
    int has_readonly = op->service == RP_SERVICE_QUERY || op->service == RP_SERVICE_ANALYTICS;
    int has_method = op->service == RP_SERVICE_CLUSTER_MANAGER || op->service == RP_SERVICE_MANAGEMENT;
    if ((kv != NULL) != is_kv || (method != NULL) != has_method || (readonly && !has_readonly))
        return cannot_express(f, "request", "operation fields that do not match the service");
    if (kv && get_name(RP_ENUM_KV_OPERATION, kv, "request.operation", &op->kv_operation, f)) return -1;
    if (method && get_name(RP_ENUM_HTTP_METHOD, method, "request.method", &op->method, f)) return -1;
    if (readonly && !cJSON_IsNull(readonly) && get_bool(readonly, "request.readonly", &op->readonly, f)) return -1;
    return 0;
}

static int read_request(const cJSON *r, decide_input *d, failure *f) {
    rp_request *req = &d->request;
    const cJSON *v;
    char path[128];
    if (check_keys(r, "request",
                   KEYS("service", "operation", "readonly", "method", "idempotent", "attempts", "elapsed_ms",
                        "timeout_ms", "previous_reasons", "strategy", "random", "previous_delay_ms"),
                   KEYS("service", "timeout_ms"), f) ||
        read_operation(r, &req->operation, f) ||
        get_ms(cJSON_GetObjectItemCaseSensitive(r, "timeout_ms"), "request.timeout_ms", &req->timeout_ms, f))
        return -1;
    /* attempts and elapsed_ms default to 0, as in the request's JSON form. */
    req->attempts = 0;
    req->elapsed_ms = 0;
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "attempts")) && !cJSON_IsNull(v) &&
        get_u32(v, "request.attempts", &req->attempts, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "elapsed_ms")) && !cJSON_IsNull(v) &&
        get_ms(v, "request.elapsed_ms", &req->elapsed_ms, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "idempotent")) && !cJSON_IsNull(v)) {
        if (get_bool(v, "request.idempotent", &req->idempotent, f)) return -1;
        req->has_idempotent = true;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "previous_reasons"))) {
        if (!cJSON_IsArray(v)) return cannot_express(f, "request.previous_reasons", "not an array");
        size_t i = 0;
        for (const cJSON *e = v->child; e; e = e->next, i++) {
            snprintf(path, sizeof path, "request.previous_reasons[%zu]", i);
            if (i >= MAX_PREVIOUS) return cannot_express(f, path, "too many for this runner");
            if (get_name(RP_ENUM_REASON, e, path, &d->previous[i], f)) return -1;
        }
        req->previous_reasons = d->previous;
        req->previous_reasons_len = i;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "strategy")) && !cJSON_IsNull(v)) {
        if (get_name(RP_ENUM_STRATEGY, v, "request.strategy", &req->strategy, f)) return -1;
        req->has_strategy = true;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "random")) && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v)) return cannot_express(f, "request.random", "not a number");
        req->random = v->valuedouble; /* the library checks the range */
        req->has_random = true;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(r, "previous_delay_ms")) && !cJSON_IsNull(v)) {
        if (get_ms(v, "request.previous_delay_ms", &req->previous_delay_ms, f)) return -1;
        req->has_previous_delay_ms = true;
    }
    return 0;
}

/* Reads `in` (its keys: request, reason, and `extra`, the function's own) into *d, and the policy
 * when `with_policy`. */
static int read_decide_input(const cJSON *in, const char *extra, int with_policy, decide_input *d, failure *f) {
    memset(d, 0, sizeof *d);
    if (check_keys(in, "", KEYS("request", "reason", with_policy ? "policy" : "request", extra ? extra : "request"),
                   KEYS("request", "reason"), f) ||
        read_request(ITEM("request"), d, f) || get_name(RP_ENUM_REASON, ITEM("reason"), "reason", &d->reason, f))
        return -1;
    if (with_policy && ITEM("policy")) READ_DOCUMENT(rp_policy_from_json, ITEM("policy"), &d->policy, "policy");
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
    if (read_decide_input(in, NULL, 1, &d, f)) return -1;
    rp_result rc = rp_decide(&d.request, d.reason, d.policy, NULL, NULL, &decision);
    return decided(&d, rc, "decide", &decision, out, f);
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

/* The answer `v` holds (N: retry after N ms; null or absent: do not retry). */
static int get_answer(const cJSON *v, const char *path, fixed_answer *answer, failure *f) {
    answer->retry = v && !cJSON_IsNull(v);
    answer->delay_ms = 0;
    return answer->retry ? get_ms(v, path, &answer->delay_ms, f) : 0;
}

/* With `host`, through rp_decide and a real C strategy function; without, the policy's strategy. */
static int decide_with(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    fixed_answer answer;
    rp_decision decision;
    const cJSON *host = ITEM("host");
    if (host && (check_keys(host, "host", KEYS("retry_after_ms"), KEYS("retry_after_ms"), f) ||
                 get_answer(cJSON_GetObjectItemCaseSensitive(host, "retry_after_ms"), "host.retry_after_ms", &answer,
                            f)))
        return -1;
    if (read_decide_input(in, "host", 1, &d, f)) return -1;
    rp_result rc = rp_decide(&d.request, d.reason, d.policy, host ? fixed_strategy : NULL, &answer, &decision);
    return decided(&d, rc, "decide_with", &decision, out, f);
}

static int decide_before_strategy(const cJSON *in, cJSON **out, failure *f) {
    decide_input d;
    rp_decision decision;
    bool done = false;
    if (read_decide_input(in, NULL, 1, &d, f)) return -1;
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
    if (read_decide_input(in, "retry_after_ms", 0, &d, f) ||
        get_answer(ITEM("retry_after_ms"), "retry_after_ms", &answer, f))
        return -1;
    rp_result rc = rp_decide_after_strategy(&d.request, d.reason, answer.retry, answer.delay_ms, &decision);
    return decided(&d, rc, "decide_after_strategy", &decision, out, f);
}

/* The typed policy reader: its verdict on the document (the normalized form is the JSON API's). */
static int parse_policy(const cJSON *in, cJSON **out, failure *f) {
    const char *json;
    rp_policy *policy = NULL;
    if (check_keys(in, "", KEYS("json"), KEYS("json"), f) || get_string(ITEM("json"), "json", &json, f)) return -1;
    TRY(rp_policy_from_json(json, strlen(json), &policy), "json");
    rp_policy_free(policy);
    *out = NULL;
    return 0;
}

#include "fixtures_budget.h"
#include "fixtures_grpc.h"
#include "fixtures_aws.h"
#include "fixtures_run.h"

/* Every function through rp_call_json, the core's JSON API. */
static int json_api(const char *function, const cJSON *in, cJSON **out, failure *f) {
    char *input = print_exact(in);
    char *result = NULL;
    rp_result rc = rp_call_json(function, input, strlen(input), &result);
    cJSON_free(input);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, function);
    *out = cJSON_Parse(result);
    rp_string_free(result);
    if (!*out) return cannot_express(f, function, "rp_call_json wrote invalid JSON");
    return 0;
}

static const struct {
    const char *function;
    adapter run;
} TYPED[] = {
    {"classify_kv", classify_kv},
    {"classify_query", classify_query},
    {"classify_analytics", classify_analytics},
    {"classify_search", classify_search},
    {"classify_views", classify_views},
    {"decide", decide},
    {"decide_with", decide_with},
    {"decide_before_strategy", decide_before_strategy},
    {"decide_after_strategy", decide_after_strategy},
    {"parse_policy", parse_policy},
    {"budget_run", budget_run},
    {"breaker_run", breaker_run},
    {"run", run_machine},
    {"grpc_service_config", grpc_service_config},
    {"grpc_retry", grpc_retry},
    {"grpc_hedge", grpc_hedge},
    {"aws_retry", aws_retry},
    {"aws_retry_run", aws_retry_run},
    {"aws_rate_limiter_run", aws_rate_limiter_run},
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
    long typed, no_c_form; /* typed runs; error cases whose input has no C form */
    long host_gap;         /* valid runs with a host strategy, which rp_run does not take */
    long skipped;          /* cases named by FIXTURES_SKIP_IDS */
} tally;

/* FIXTURES_SKIP_IDS, split: the ids, and whether a case had each. */
#define MAX_SKIPPED 16
static char *skip_ids[MAX_SKIPPED];
static int skip_seen[MAX_SKIPPED];
static int skip_len;

/* Reads FIXTURES_SKIP_IDS; 0 when it names more ids than the runner keeps. */
static int read_skip_ids(void) {
    const char *env = getenv("FIXTURES_SKIP_IDS");
    if (!env || !*env) return 1;
    char *list = strdup(env);
    for (char *save = NULL, *id = strtok_r(list, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
        if (skip_len == MAX_SKIPPED) {
            free(list);
            return 0;
        }
        skip_ids[skip_len++] = strdup(id);
    }
    free(list);
    return 1;
}

/* 1 when FIXTURES_SKIP_IDS names `id` (and notes that a case had it). */
static int skipped(const char *id) {
    for (int i = 0; i < skip_len; i++)
        if (strcmp(skip_ids[i], id) == 0) return skip_seen[i] = 1;
    return 0;
}

static void print_json(const cJSON *v, FILE *out) {
    char *text = v ? print_exact(v) : NULL;
    fputs(text ? text : "null", out);
    cJSON_free(text);
}

/* 1 when one run's answer (`rc` 0: `out`, NULL for "accepted, nothing to compare"; else `f`)
 * meets the case's expectation; otherwise prints why, naming the run (`via`). */
static int meets(const char *file, const char *id, const char *via, const cJSON *c, int rc, const cJSON *out,
                 const failure *f) {
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    const cJSON *expect_error = cJSON_GetObjectItemCaseSensitive(c, "expect_error");
    const cJSON *error_field = cJSON_GetObjectItemCaseSensitive(c, "error_field");
    if (rc != 0) {
        if (!cJSON_IsString(expect_error))
            printf("FAIL %s: %s (%s): unexpected error %s (%s)\n", file, id, via, f->code, f->message);
        else if (strcmp(expect_error->valuestring, f->code) != 0)
            printf("FAIL %s: %s (%s): expected error %s, got %s (%s)\n", file, id, via, expect_error->valuestring,
                   f->code, f->message);
        else if (cJSON_IsString(error_field) && !strstr(f->message, error_field->valuestring))
            printf("FAIL %s: %s (%s): error message does not name \"%s\": %s\n", file, id, via,
                   error_field->valuestring, f->message);
        else
            return 1;
        return 0;
    }
    if (expect_error) {
        printf("FAIL %s: %s (%s): expected error ", file, id, via);
        print_json(expect_error, stdout);
        printf(", got output ");
        print_json(out, stdout);
        printf("\n");
        return 0;
    }
    if (!cJSON_IsObject(expect)) {
        printf("FAIL %s: %s: case needs an expect object or an expect_error string\n", file, id);
        return 0;
    }
    if (!out) return 1;
    int ok = 1;
    for (const cJSON *k = expect->child; k && ok; k = k->next) {
        const cJSON *got = cJSON_GetObjectItemCaseSensitive(out, k->string);
        if (!json_eq(k, got)) {
            ok = 0;
            printf("FAIL %s: %s (%s): %s: expected ", file, id, via, k->string);
            print_json(k, stdout);
            printf(", got ");
            print_json(got, stdout);
            printf(" (whole output ");
            print_json(out, stdout);
            printf(")\n");
        }
    }
    return ok;
}

/* 0 = pass: the JSON API's answer, and the typed C API's when `typed` is set, meet the expectation. */
static int check_case(const char *file, const char *id, const char *function, adapter typed, const cJSON *c,
                      tally *t) {
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(c, "input");
    if (!input) {
        printf("FAIL %s: %s: case has no input\n", file, id);
        return 1;
    }
    failure f = {0, {0}, {0}};
    cJSON *out = NULL;
    int json_rc = json_api(function, input, &out, &f);
    int ok = meets(file, id, "rp_call_json", c, json_rc, out, &f);
    cJSON_Delete(out);
    if (!typed) return !ok;
    failure g = {0, {0}, {0}};
    out = NULL;
    int rc = typed(input, &out, &g);
    if (rc != 0 && g.inexpressible == HOST_STRATEGY_GAP && json_rc == 0) {
        t->host_gap++;
        /* the id last on the line: a failure names its id followed by ":" or " (" */
        printf("SKIP (typed C API: %s) %s %s\n", g.message, file, id);
    } else if (rc != 0 && g.inexpressible) {
        if (json_rc != 0) {
            t->no_c_form++;
        } else {
            printf("FAIL %s: %s (typed): the runner has no C form for a valid input: %s\n", file, id, g.message);
            ok = 0;
        }
    } else {
        t->typed++;
        ok = meets(file, id, "typed C API", c, rc, out, &g) && ok;
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
    adapter typed = NULL;
    for (size_t i = 0; i < sizeof TYPED / sizeof TYPED[0]; i++)
        if (strcmp(TYPED[i].function, name) == 0) typed = TYPED[i].run;
    for (const cJSON *c = cases->child; c; c = c->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(id) && skipped(id->valuestring)) {
            t->skipped++;
            continue;
        }
        if (check_case(file, cJSON_IsString(id) ? id->valuestring : "<no id>", name, typed, c, t))
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
    if (files.len) qsort(files.paths, files.len, sizeof *files.paths, by_name); /* NULL with 0 is UB */
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
    tally t = {0, 0, 0, 0, 0, 0};
    if (!read_skip_ids()) {
        printf("FAIL FIXTURES_SKIP_IDS names more than %d ids\n", MAX_SKIPPED);
        t.failed++;
    }
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
    printf("typed C API: %ld cases run, %ld error cases whose input has no C form (rp_call_json's answer only), "
           "%ld runs with a host strategy (rp_run takes none; rp_call_json's answer only)\n",
           t.typed, t.no_c_form, t.host_gap);
    for (int i = 0; i < skip_len; i++) {
        if (!skip_seen[i]) {
            printf("FAIL FIXTURES_SKIP_IDS names %s, which no case has\n", skip_ids[i]);
            t.failed++;
        }
        free(skip_ids[i]);
    }
    if (t.skipped) printf("skipped %ld cases named by FIXTURES_SKIP_IDS\n", t.skipped);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed > 0 ? 1 : 0;
}

/*
 * Part of fixtures.c, included after fixtures_budget.h: the typed adapters of gRPC's functions (gRFC A6),
 * through the C API's gRPC handles and decisions.
 * - grpc_service_config: rp_grpc_service_config_from_json, then rp_grpc_service_config_policy_for
 *   (the matched name, the policy from rp_grpc_retry_policy_params / rp_grpc_hedging_policy_params)
 *   and rp_grpc_service_config_throttling (the bucket's budget document).
 * - grpc_retry: rp_grpc_retry_policy_from_json and one rp_grpc_retry; a case's retry_throttling is the
 *   bucket a service config with that retryThrottling gives (rp_budget_from_json of
 *   rp_grpc_service_config_throttling's document, or rp_budget_restore with throttling_state), and
 *   throttling_state after the call is rp_budget_snapshot.
 * - grpc_hedge: rp_grpc_hedging_policy_from_json, then one rp_grpc_hedge per event, each step's state
 *   passed to the next, the bucket as for grpc_retry.
 * A throttling_state without retry_throttling, an attempt on an event other than attempt_ended (or
 * none on one), and a negative draw have no C form.
 */
#ifndef RP_FIXTURES_GRPC_H
#define RP_FIXTURES_GRPC_H

/* A gRPC status code: a name (read by the library in any case) or its number (C's number). A
 * number naming no code (17, -1, 14.5) has no C form: an rp_grpc_code holding it is C's own
 * `invalid_enum`, where the JSON API answers `out_of_range`. */
static int get_grpc_code(const cJSON *v, const char *path, rp_grpc_code *out, failure *f) {
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d != floor(d) || d < RP_GRPC_CODE_OK || d > RP_GRPC_CODE_UNAUTHENTICATED)
            return cannot_express(f, path, "a number naming no rp_grpc_code");
        return get_u32(v, path, out, f);
    }
    return get_name(RP_ENUM_GRPC_CODE, v, path, out, f);
}

/* A set of codes (C's bit set) as the JSON API writes it: the codes' names, by number. */
static cJSON *grpc_codes_json(uint32_t bits) {
    cJSON *out = cJSON_CreateArray();
    for (uint32_t code = 0; code < 32; code++) {
        const char *name = NULL;
        if (!(bits & (1u << code))) continue;
        if (rp_enum_name(RP_ENUM_GRPC_CODE, code, &name) == RP_RESULT_OK && name)
            cJSON_AddItemToArray(out, cJSON_CreateString(name));
        else
            cJSON_AddItemToArray(out, cJSON_CreateNumber(code)); /* no such code: the comparison fails */
    }
    return out;
}

/* A JSON value, or null for NULL. */
static cJSON *or_null(cJSON *v) { return v ? v : cJSON_CreateNull(); }

/* key: `v` ms when `has`, else JSON null. */
static void add_ms_if(cJSON *obj, const char *key, bool has, uint64_t v) {
    if (has)
        add_ms(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* A C "-1 is none" duration as JSON: the number, or null. */
static void add_optional_ms(cJSON *obj, const char *key, int64_t v) { add_ms_if(obj, key, v >= 0, (uint64_t)v); }

/* key: the name of `value` of `kind` when `has`, else JSON null. */
static void add_name_if(cJSON *obj, const char *key, bool has, rp_enum kind, uint32_t value) {
    if (has)
        add_name(obj, key, kind, value);
    else
        cJSON_AddNullToObject(obj, key);
}

/* `rc`, after deleting *out when it is a failure (a typed adapter's last step). */
static int finished(cJSON **out, int rc) {
    if (rc != 0) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

/* A failure of reading a document the case holds at `at`: the library names the field inside it,
 * except the cap, which is its own argument. */
static int document_failure(failure *f, rp_result rc, const char *at) {
    if (strcmp(rp_last_error_field(), "max_attempts_cap") == 0) return lib_failure(f, rc, "max_attempts_cap");
    return failure_at(f, rc, at, "");
}

/* The case's max_attempts_cap (RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP when absent). */
static int read_cap(const cJSON *in, uint32_t *cap, failure *f) {
    *cap = RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP;
    return OPT("max_attempts_cap") ? get_u32(ITEM("max_attempts_cap"), "max_attempts_cap", cap, f) : 0;
}

/* A policy document (`value`, at `at`) through `read` (rp_grpc_*_policy_from_json) with the cap. */
#define READ_POLICY(read, value, cap, out, at)                       \
    do {                                                             \
        char *text_ = print_exact(value);                            \
        rp_result rc_ = read(text_, strlen(text_), (cap), (out));    \
        cJSON_free(text_);                                           \
        if (rc_ != RP_RESULT_OK) return document_failure(f, rc_, (at)); \
    } while (0)

static cJSON *retry_policy_json(const rp_grpc_retry_params *p) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", "retry");
    cJSON_AddNumberToObject(out, "max_attempts", p->max_attempts);
    add_ms(out, "initial_backoff_ns", p->initial_backoff_ns);
    add_ms(out, "max_backoff_ns", p->max_backoff_ns);
    cJSON_AddNumberToObject(out, "backoff_multiplier", p->backoff_multiplier);
    cJSON_AddItemToObject(out, "retryable_status_codes", grpc_codes_json(p->retryable_status_codes));
    return out;
}

static cJSON *hedging_policy_json(const rp_grpc_hedging_params *p) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", "hedging");
    cJSON_AddNumberToObject(out, "max_attempts", p->max_attempts);
    add_ms(out, "hedging_delay_ns", p->hedging_delay_ns);
    cJSON_AddItemToObject(out, "non_fatal_status_codes", grpc_codes_json(p->non_fatal_status_codes));
    return out;
}

/* The method's policy as the JSON API writes it ({"kind": "none"} without one); frees the handles. */
static int method_policy_json(rp_grpc_method_policy *m, cJSON **out, failure *f) {
    rp_result rc = RP_RESULT_OK;
    if (m->retry) {
        rp_grpc_retry_params p;
        if ((rc = rp_grpc_retry_policy_params(m->retry, &p)) == RP_RESULT_OK) *out = retry_policy_json(&p);
    } else if (m->hedging) {
        rp_grpc_hedging_params p;
        if ((rc = rp_grpc_hedging_policy_params(m->hedging, &p)) == RP_RESULT_OK) *out = hedging_policy_json(&p);
    } else {
        *out = cJSON_CreateObject();
        cJSON_AddStringToObject(*out, "kind", "none");
    }
    rp_grpc_retry_policy_free(m->retry);
    rp_grpc_hedging_policy_free(m->hedging);
    return rc == RP_RESULT_OK ? 0 : lib_failure(f, rc, "policy");
}

static int grpc_service_config(const cJSON *in, cJSON **out, failure *f) {
    uint32_t cap;
    const char *service = "", *method = "";
    rp_grpc_service_config *config = NULL;
    if (check_keys(in, "", KEYS("service_config", "service", "method", "max_attempts_cap"), KEYS("service_config"),
                   f) ||
        read_cap(in, &cap, f) || (OPT("service") && get_string(ITEM("service"), "service", &service, f)) ||
        (OPT("method") && get_string(ITEM("method"), "method", &method, f)))
        return -1;
    READ_POLICY(rp_grpc_service_config_from_json, ITEM("service_config"), cap, &config, "service_config");
    rp_grpc_method_policy m = {RP_GRPC_MATCH_NONE, NULL, NULL};
    char *throttling = NULL;
    rp_result rc = rp_grpc_service_config_policy_for(config, service, method, &m);
    if (rc == RP_RESULT_OK) rc = rp_grpc_service_config_throttling(config, &throttling);
    rp_grpc_service_config_free(config);
    if (rc != RP_RESULT_OK) {
        rp_grpc_retry_policy_free(m.retry);
        rp_grpc_hedging_policy_free(m.hedging);
        return lib_failure(f, rc, "service_config");
    }
    cJSON *policy = NULL;
    if (method_policy_json(&m, &policy, f)) {
        rp_string_free(throttling);
        return -1;
    }
    *out = cJSON_CreateObject();
    add_name(*out, "matched", RP_ENUM_GRPC_MATCH, m.matched);
    cJSON_AddItemToObject(*out, "policy", policy);
    cJSON_AddItemToObject(*out, "throttling", or_null(parsed(throttling)));
    return 0;
}

/* The case's throttling bucket (`retry_throttling`, `throttling_state`): NULL without one. Through the
 * C API's own path: a service config holding that retryThrottling, its budget document, a budget. */
static int open_throttling(const cJSON *in, rp_budget **bucket, failure *f) {
    const cJSON *doc = OPT("retry_throttling"), *state = OPT("throttling_state");
    *bucket = NULL;
    if (!doc) return state ? cannot_express(f, "throttling_state", "a bucket's state without its retryThrottling") : 0;
    cJSON *wrap = cJSON_CreateObject();
    cJSON_AddItemToObject(wrap, "retryThrottling", cJSON_Duplicate(doc, 1));
    char *text = print_exact(wrap);
    cJSON_Delete(wrap);
    rp_grpc_service_config *config = NULL;
    rp_result rc = rp_grpc_service_config_from_json(text, strlen(text), RP_GRPC_DEFAULT_MAX_ATTEMPTS_CAP, &config);
    cJSON_free(text);
    if (rc != RP_RESULT_OK) return failure_at(f, rc, "retry_throttling", "retryThrottling");
    char *budget_doc = NULL;
    rc = rp_grpc_service_config_throttling(config, &budget_doc);
    rp_grpc_service_config_free(config);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "retry_throttling");
    char *snap = state ? print_exact(state) : NULL;
    rc = snap ? rp_budget_restore(budget_doc, strlen(budget_doc), snap, strlen(snap), bucket)
              : rp_budget_from_json(budget_doc, strlen(budget_doc), bucket);
    cJSON_free(snap);
    rp_string_free(budget_doc);
    return rc == RP_RESULT_OK ? 0 : failure_at(f, rc, "throttling_state", "snapshot");
}

/* The bucket's state as the JSON API's throttling_state (null without a bucket); frees the bucket. */
static int close_throttling(rp_budget *bucket, cJSON *out, failure *f) {
    char *text = NULL;
    rp_result rc = bucket ? rp_budget_snapshot(bucket, &text) : RP_RESULT_OK;
    rp_budget_free(bucket);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "throttling_state");
    cJSON_AddItemToObject(out, "throttling_state", or_null(parsed(text)));
    return 0;
}

#define MAX_PUSHBACK 8

/* An attempt object (at `path`) as an rp_grpc_attempt; `values` holds the pushback pointers. */
static int read_grpc_attempt(const cJSON *a, const char *path, rp_grpc_attempt *out, const char **values,
                             failure *f) {
    char where[160];
    const cJSON *v;
    memset(out, 0, sizeof *out);
#define FIELD(name) (snprintf(where, sizeof where, "%s.%s", path, name), cJSON_GetObjectItemCaseSensitive(a, name))
    if (check_keys(a, path, KEYS("status", "pushback", "committed", "reach"), KEYS("status"), f) ||
        get_grpc_code(FIELD("status"), where, &out->status, f))
        return -1;
    if ((v = FIELD("pushback")) && !cJSON_IsNull(v)) {
        if (!cJSON_IsArray(v)) return cannot_express(f, where, "not an array");
        size_t i = 0;
        for (const cJSON *e = v->child; e; e = e->next, i++) {
            snprintf(where, sizeof where, "%s.pushback[%zu]", path, i);
            if (i >= MAX_PUSHBACK) return cannot_express(f, where, "more values than this runner keeps");
            if (get_string(e, where, &values[i], f)) return -1;
        }
        out->pushback = values;
        out->pushback_len = i;
    }
    if ((v = FIELD("committed")) && !cJSON_IsNull(v) && get_bool(v, where, &out->committed, f)) return -1;
    if ((v = FIELD("reach")) && !cJSON_IsNull(v) && get_name(RP_ENUM_GRPC_REACH, v, where, &out->reach, f))
        return -1;
    return 0;
#undef FIELD
}

static int read_retry_state(const cJSON *s, rp_grpc_retry_state *out, failure *f) {
    const cJSON *v;
    memset(out, 0, sizeof *out);
    if (check_keys(s, "state", KEYS("attempts", "retries", "retries_since_pushback", "elapsed_ms", "deadline_ms"),
                   KEYS("attempts"), f) ||
        get_u32(cJSON_GetObjectItemCaseSensitive(s, "attempts"), "state.attempts", &out->attempts, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "retries")) && get_u32(v, "state.retries", &out->retries, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "retries_since_pushback")) &&
        get_u32(v, "state.retries_since_pushback", &out->retries_since_pushback, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "elapsed_ms")) && get_ms(v, "state.elapsed_ms", &out->elapsed_ms, f))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "deadline_ms")) && !cJSON_IsNull(v)) {
        if (get_ms(v, "state.deadline_ms", &out->deadline_ms, f)) return -1;
        out->has_deadline = true;
    }
    return 0;
}

static cJSON *retry_state_json(const rp_grpc_retry_state *s) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "attempts", s->attempts);
    cJSON_AddNumberToObject(out, "retries", s->retries);
    cJSON_AddNumberToObject(out, "retries_since_pushback", s->retries_since_pushback);
    add_ms(out, "elapsed_ms", s->elapsed_ms);
    add_ms_if(out, "deadline_ms", s->has_deadline, s->deadline_ms);
    return out;
}

static cJSON *grpc_decision_json(const rp_grpc_retry_decision *d) {
    cJSON *out = cJSON_CreateObject();
    add_name(out, "action", RP_ENUM_GRPC_ACTION, d->action);
    add_ms_if(out, "delay_ms", d->action == RP_GRPC_ACTION_RETRY, d->delay_ms);
    cJSON_AddBoolToObject(out, "transparent", d->transparent);
    add_optional_ms(out, "pushback_ms", d->pushback_ms);
    add_name(out, "throttle", RP_ENUM_GRPC_THROTTLE, d->throttle);
    cJSON_AddItemToObject(out, "budget", d->has_budget ? budget_verdict_json(&d->budget) : cJSON_CreateNull());
    cJSON_AddItemToObject(out, "next", d->has_next ? retry_state_json(&d->next) : cJSON_CreateNull());
    cJSON_AddStringToObject(out, "rule", d->rule);
    cJSON_AddStringToObject(out, "section", d->section);
    return out;
}

/* The case's draw (C's none: NaN; a negative draw has no C form). */
static int read_draw(const cJSON *v, const char *path, double *random, failure *f) {
    *random = NAN;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0) return cannot_express(f, path, "not a draw C can pass");
    *random = v->valuedouble;
    return 0;
}

static int grpc_retry(const cJSON *in, cJSON **out, failure *f) {
    uint32_t cap;
    uint64_t now_ms = 0;
    double random;
    rp_grpc_jitter jitter = RP_GRPC_JITTER_PLUS_MINUS_20_PERCENT;
    rp_grpc_retry_state state;
    rp_grpc_attempt attempt;
    const char *pushback[MAX_PUSHBACK];
    rp_grpc_retry_policy *policy = NULL;
    rp_budget *bucket = NULL;
    if (check_keys(in, "",
                   KEYS("retry_policy", "max_attempts_cap", "state", "attempt", "random", "jitter", "retry_throttling",
                        "throttling_state", "now_ms"),
                   KEYS("state", "attempt"), f) ||
        read_cap(in, &cap, f) || read_retry_state(ITEM("state"), &state, f) ||
        read_grpc_attempt(ITEM("attempt"), "attempt", &attempt, pushback, f) ||
        read_draw(ITEM("random"), "random", &random, f) ||
        (OPT("jitter") && get_name(RP_ENUM_GRPC_JITTER, ITEM("jitter"), "jitter", &jitter, f)) ||
        (OPT("now_ms") && get_ms(ITEM("now_ms"), "now_ms", &now_ms, f)))
        return -1;
    if (OPT("retry_policy")) READ_POLICY(rp_grpc_retry_policy_from_json, ITEM("retry_policy"), cap, &policy, "retry_policy");
    if (open_throttling(in, &bucket, f)) {
        rp_grpc_retry_policy_free(policy);
        return -1;
    }
    rp_grpc_retry_decision d;
    rp_result rc = rp_grpc_retry(policy, &state, &attempt, random, jitter, bucket, now_ms, &d);
    rp_grpc_retry_policy_free(policy);
    if (rc != RP_RESULT_OK) {
        rp_budget_free(bucket);
        return lib_failure(f, rc, "grpc_retry");
    }
    *out = grpc_decision_json(&d);
    return finished(out, close_throttling(bucket, *out, f));
}

static cJSON *hedge_state_json(const rp_grpc_hedge_state *s) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "sent", s->sent);
    cJSON_AddNumberToObject(out, "outstanding", s->outstanding);
    cJSON_AddBoolToObject(out, "stopped", s->stopped);
    cJSON_AddBoolToObject(out, "done", s->done);
    if (s->has_last_status) add_name(out, "last_status", RP_ENUM_GRPC_CODE, s->last_status);
    return out;
}

static cJSON *hedge_step_json(const rp_grpc_hedge_step *s) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "send", s->send);
    add_optional_ms(out, "next_hedge_in_ms", s->next_hedge_in_ms);
    cJSON_AddBoolToObject(out, "cancel_others", s->cancel_others);
    add_name(out, "end", RP_ENUM_GRPC_HEDGE_END, s->end);
    add_name_if(out, "status", s->has_status, RP_ENUM_GRPC_CODE, s->status);
    add_name(out, "throttle", RP_ENUM_GRPC_THROTTLE, s->throttle);
    cJSON_AddItemToObject(out, "budget", s->has_budget ? budget_verdict_json(&s->budget) : cJSON_CreateNull());
    cJSON_AddItemToObject(out, "state", hedge_state_json(&s->state));
    cJSON_AddStringToObject(out, "rule", s->rule);
    cJSON_AddStringToObject(out, "section", s->section);
    return out;
}

/* One hedging event (the i-th) on the call in *state, its step in *step. */
static int hedge_event(const rp_grpc_hedging_policy *policy, rp_budget *bucket, const cJSON *e, size_t i,
                       rp_grpc_hedge_state *state, rp_grpc_hedge_step *step, failure *f) {
    char path[64], where[96];
    uint64_t at_ms = 0;
    rp_grpc_hedge_event event;
    rp_grpc_attempt attempt, *given = NULL;
    const char *pushback[MAX_PUSHBACK];
    const cJSON *v;
    snprintf(path, sizeof path, "events[%zu]", i);
    snprintf(where, sizeof where, "%s.event", path);
    if (check_keys(e, path, KEYS("event", "at_ms", "attempt"), KEYS("event"), f) ||
        get_name(RP_ENUM_GRPC_HEDGE_EVENT, cJSON_GetObjectItemCaseSensitive(e, "event"), where, &event, f))
        return -1;
    snprintf(where, sizeof where, "%s.at_ms", path);
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "at_ms")) && get_ms(v, where, &at_ms, f)) return -1;
    v = cJSON_GetObjectItemCaseSensitive(e, "attempt");
    if ((v != NULL) != (event == RP_GRPC_HEDGE_ATTEMPT_ENDED))
        return cannot_express(f, path, "an attempt belongs to attempt_ended, and only there");
    snprintf(where, sizeof where, "%s.attempt", path);
    if (v && read_grpc_attempt(v, where, &attempt, pushback, f)) return -1;
    if (v) given = &attempt;
    rp_result rc = rp_grpc_hedge(policy, state, event, given, bucket, at_ms, step);
    if (rc != RP_RESULT_OK) return failure_at(f, rc, path, ""); /* the library names "event", "attempt.status" */
    *state = step->state;
    return 0;
}

static int grpc_hedge(const cJSON *in, cJSON **out, failure *f) {
    uint32_t cap;
    rp_grpc_hedging_policy *policy = NULL;
    rp_budget *bucket = NULL;
    if (check_keys(in, "", KEYS("hedging_policy", "max_attempts_cap", "events", "retry_throttling", "throttling_state"),
                   KEYS("hedging_policy", "events"), f) ||
        read_cap(in, &cap, f))
        return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    READ_POLICY(rp_grpc_hedging_policy_from_json, ITEM("hedging_policy"), cap, &policy, "hedging_policy");
    if (open_throttling(in, &bucket, f)) {
        rp_grpc_hedging_policy_free(policy);
        return -1;
    }
    *out = cJSON_CreateObject();
    cJSON *steps = cJSON_AddArrayToObject(*out, "steps");
    cJSON *sends = cJSON_AddArrayToObject(*out, "sends");
    cJSON *rules = cJSON_AddArrayToObject(*out, "rules");
    rp_grpc_hedge_state state;
    rp_grpc_hedge_step step;
    memset(&state, 0, sizeof state);
    size_t i = 0;
    int rc = 0;
    for (const cJSON *e = ITEM("events")->child; e && rc == 0; e = e->next, i++) {
        if ((rc = hedge_event(policy, bucket, e, i, &state, &step, f)) != 0) break;
        cJSON_AddItemToArray(steps, hedge_step_json(&step));
        cJSON_AddItemToArray(sends, cJSON_CreateNumber(step.send));
        cJSON_AddItemToArray(rules, cJSON_CreateString(step.rule));
    }
    rp_grpc_hedging_policy_free(policy);
    if (rc != 0) {
        rp_budget_free(bucket);
        return finished(out, rc);
    }
    add_name_if(*out, "end", i > 0, RP_ENUM_GRPC_HEDGE_END, step.end);
    add_name_if(*out, "status", i > 0 && step.has_status, RP_ENUM_GRPC_CODE, step.status);
    return finished(out, close_throttling(bucket, *out, f));
}

#endif

/*
 * Part of fixtures.c, included after fixtures_grpc.h: the typed adapters of the AWS SDKs' retry
 * modes, through the C API's AWS handles and decisions, and a run's gRPC and AWS outcomes
 * (typed_run_outcome, for fixtures_run.h).
 * - aws_retry: rp_aws_retry_config_from_json (NULL without a config) and one rp_aws_decide; a case's
 *   budget_verdict is an rp_budget_verdict (its kind, when the case leaves it out, the one its rule
 *   belongs to).
 * - aws_retry_run: the SDKs' loop through rp_aws_decide and an rp_budget (the case's quota, or, as
 *   the JSON API defaults it, the retry quota with the behaviour's cost table in standard and
 *   adaptive mode, none in legacy): a success tells the quota (rp_budget_record, refunding the last
 *   retry's cause); a retry asks it (rp_budget_try_retry with the decision's cause) and, refused,
 *   is decided again with its verdict.
 * - aws_rate_limiter_run: an rp_aws_rate_limiter (rp_aws_rate_limiter_from_json at start_ms, or
 *   rp_aws_rate_limiter_restore), rp_aws_rate_limiter_acquire / _record per event, its state after
 *   each through rp_aws_rate_limiter_snapshot.
 * An error status of 0 (C's none), a crc32_mismatch of false beside a missing response, a verdict's
 * cause or source, a negative draw, and a limiter's state with start_ms have no C form.
 */
#ifndef RP_FIXTURES_AWS_H
#define RP_FIXTURES_AWS_H

/* An error object (at `path`) as an rp_aws_error; its strings stay the case's. */
static int read_aws_error(const cJSON *e, const char *path, rp_aws_error *out, failure *f) {
    char where[160];
    const cJSON *v;
    bool flag;
    memset(out, 0, sizeof *out);
#define FIELD(name) (snprintf(where, sizeof where, "%s.%s", path, name), cJSON_GetObjectItemCaseSensitive(e, name))
    if (check_keys(e, path,
                   KEYS("code", "status", "connection_error", "timeout", "retryable_trait", "retry_after",
                        "crc32_mismatch"),
                   NULL, f))
        return -1;
    if ((v = FIELD("code")) && !cJSON_IsNull(v) && get_string(v, where, &out->code, f)) return -1;
    if ((v = FIELD("status")) && !cJSON_IsNull(v)) {
        if (get_u32(v, where, &out->status, f)) return -1;
        if (out->status == 0) return cannot_express(f, where, "0 is C's \"no status\"");
    }
    if ((v = FIELD("connection_error")) && !cJSON_IsNull(v) && get_bool(v, where, &out->connection_error, f))
        return -1;
    if ((v = FIELD("timeout")) && !cJSON_IsNull(v) && get_bool(v, where, &out->timeout, f)) return -1;
    if ((v = FIELD("retryable_trait")) && !cJSON_IsNull(v) &&
        get_name(RP_ENUM_AWS_RETRYABLE_TRAIT, v, where, &out->retryable_trait, f))
        return -1;
    if ((v = FIELD("retry_after")) && !cJSON_IsNull(v) && get_string(v, where, &out->retry_after, f)) return -1;
    if ((v = FIELD("crc32_mismatch")) && !cJSON_IsNull(v)) {
        if (get_bool(v, where, &flag, f)) return -1;
        /* C's false is the field left out, which the core reads differently beside no response. */
        if (!flag && (out->connection_error || out->timeout))
            return cannot_express(f, where, "false beside a missing response");
        out->crc32_mismatch = flag;
    }
    return 0;
#undef FIELD
}

/* A verdict object as an rp_budget_verdict (the library checks it against its rule). */
static int read_budget_verdict(const cJSON *v, rp_budget_verdict *out, failure *f) {
    static const struct {
        const char *prefix;
        rp_budget_kind kind;
    } KIND_OF_RULE[] = {
        {"token_bucket_", RP_BUDGET_KIND_TOKEN_BUCKET},
        {"retry_quota_", RP_BUDGET_KIND_RETRY_QUOTA},
        {"percentage_", RP_BUDGET_KIND_PERCENTAGE},
    };
    const cJSON *x;
    const char *rule;
    memset(out, 0, sizeof *out);
    if (check_keys(v, "budget_verdict", KEYS("permitted", "rule", "kind", "balance"), KEYS("permitted", "rule"), f) ||
        get_bool(cJSON_GetObjectItemCaseSensitive(v, "permitted"), "budget_verdict.permitted", &out->permitted, f) ||
        get_string(cJSON_GetObjectItemCaseSensitive(v, "rule"), "budget_verdict.rule", &rule, f))
        return -1;
    TRY(rp_enum_from_name(RP_ENUM_BUDGET_RULE, rule, &out->rule), "budget_verdict.rule");
    if ((x = cJSON_GetObjectItemCaseSensitive(v, "kind")) && !cJSON_IsNull(x)) {
        if (get_name(RP_ENUM_BUDGET_KIND, x, "budget_verdict.kind", &out->kind, f)) return -1;
    } else {
        for (size_t i = 0; i < sizeof KIND_OF_RULE / sizeof KIND_OF_RULE[0]; i++)
            if (strncmp(rule, KIND_OF_RULE[i].prefix, strlen(KIND_OF_RULE[i].prefix)) == 0)
                out->kind = KIND_OF_RULE[i].kind;
    }
    if ((x = cJSON_GetObjectItemCaseSensitive(v, "balance")) && !cJSON_IsNull(x) &&
        get_ms(x, "budget_verdict.balance", &out->balance, f))
        return -1;
    return 0;
}

static cJSON *aws_decision_json(const rp_aws_decision *d) {
    cJSON *out = cJSON_CreateObject();
    add_name(out, "action", RP_ENUM_AWS_ACTION, d->action);
    add_ms_if(out, "delay_ms", d->action == RP_AWS_ACTION_RETRY, d->delay_ms);
    add_optional_ms(out, "wait_ms", d->wait_ms);
    add_optional_ms(out, "ceiling_ms", d->ceiling_ms);
    add_optional_ms(out, "retry_after_ms", d->retry_after_ms);
    cJSON_AddBoolToObject(out, "retryable", d->retryable);
    cJSON_AddBoolToObject(out, "throttling", d->throttling);
    add_name(out, "cause", RP_ENUM_RETRY_CAUSE, d->cause);
    cJSON_AddNumberToObject(out, "attempts", d->attempts);
    cJSON_AddNumberToObject(out, "max_attempts", d->max_attempts);
    cJSON_AddStringToObject(out, "rule", d->rule);
    cJSON_AddStringToObject(out, "section", d->section);
    return out;
}

/* The case's config document (`doc`, absent: "{}" when `always`, else NULL) as a handle. */
static int open_aws_config(const cJSON *doc, int always, rp_aws_retry_config **config, failure *f) {
    *config = NULL;
    if (!doc && !always) return 0;
    char *text = doc ? print_exact(doc) : NULL;
    rp_result rc = rp_aws_retry_config_from_json(text ? text : "{}", text ? strlen(text) : 2, config);
    cJSON_free(text);
    return rc == RP_RESULT_OK ? 0 : failure_at(f, rc, "config", "");
}

static int aws_retry(const cJSON *in, cJSON **out, failure *f) {
    uint32_t attempts;
    double random;
    rp_aws_error error;
    rp_budget_verdict verdict;
    rp_aws_retry_config *config = NULL;
    if (check_keys(in, "", KEYS("config", "attempts", "error", "random", "budget_verdict"), KEYS("attempts", "error"),
                   f) ||
        get_u32(ITEM("attempts"), "attempts", &attempts, f) || read_aws_error(ITEM("error"), "error", &error, f) ||
        read_draw(ITEM("random"), "random", &random, f) ||
        (OPT("budget_verdict") && read_budget_verdict(ITEM("budget_verdict"), &verdict, f)) ||
        open_aws_config(OPT("config"), 0, &config, f))
        return -1;
    rp_aws_decision d;
    rp_result rc = rp_aws_decide(config, attempts, &error, random, OPT("budget_verdict") ? &verdict : NULL, &d);
    rp_aws_retry_config_free(config);
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, "aws_decide");
    *out = aws_decision_json(&d);
    return 0;
}

/* The quota aws_retry_run uses: the case's, else the default of `config`'s mode (none for legacy). */
static int open_quota(const cJSON *in, const rp_aws_retry_config *config, rp_budget **quota, failure *f) {
    rp_aws_retry_params p;
    const cJSON *state = OPT("quota_state");
    *quota = NULL;
    TRY(rp_aws_retry_config_params(config, &p), "config");
    char *doc = NULL;
    if (OPT("quota")) {
        doc = print_exact(ITEM("quota"));
    } else if (p.mode != RP_AWS_MODE_LEGACY) {
        const char *costs = p.behavior == RP_AWS_BEHAVIOR_2026 ? "2026" : "classic";
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "kind", "retry_quota");
        cJSON_AddStringToObject(d, "costs", costs);
        doc = print_exact(d);
        cJSON_Delete(d);
    } else {
        return state ? cannot_express(f, "quota_state", "a quota's state without a quota") : 0;
    }
    char *snap = state ? print_exact(state) : NULL;
    rp_result rc = snap ? rp_budget_restore(doc, strlen(doc), snap, strlen(snap), quota)
                        : rp_budget_from_json(doc, strlen(doc), quota);
    cJSON_free(doc);
    cJSON_free(snap);
    if (rc == RP_RESULT_OK) return 0;
    int in_state = strncmp(rp_last_error_field(), "snapshot", 8) == 0;
    return failure_at(f, rc, in_state ? "quota_state" : "quota", in_state ? "snapshot" : "");
}

/* One attempt's end (the i-th event) of the request in *attempts: its step, as the JSON API's. */
static int retry_run_event(const rp_aws_retry_config *config, rp_budget *quota, const cJSON *e, size_t i,
                           uint32_t *attempts, rp_retry_cause *last_cause, cJSON **step, failure *f) {
    char path[64], where[96];
    double random;
    rp_aws_error error;
    rp_aws_decision d;
    snprintf(path, sizeof path, "events[%zu]", i);
    if (check_keys(e, path, KEYS("error", "random"), NULL, f)) return -1;
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(e, "error");
    snprintf(where, sizeof where, "%s.random", path);
    if (read_draw(cJSON_GetObjectItemCaseSensitive(e, "random"), where, &random, f)) return -1;
    snprintf(where, sizeof where, "%s.error", path);
    if (err && !cJSON_IsNull(err) && read_aws_error(err, where, &error, f)) return -1;
    (*attempts)++;
    *step = cJSON_CreateObject();
    cJSON_AddNumberToObject(*step, "attempts", *attempts);
    rp_result rc = RP_RESULT_OK;
    if (!err || cJSON_IsNull(err)) {
        if (quota) rc = rp_budget_record(quota, 0, RP_BUDGET_EVENT_SUCCESS, *last_cause);
        cJSON_AddStringToObject(*step, "action", "success");
        cJSON_AddNullToObject(*step, "decision");
        *attempts = 0;
        *last_cause = RP_RETRY_CAUSE_NONE;
    } else {
        rc = rp_aws_decide(config, *attempts, &error, random, NULL, &d);
        if (rc == RP_RESULT_OK && d.action == RP_AWS_ACTION_RETRY && quota) {
            rp_budget_verdict v;
            rc = rp_budget_try_retry(quota, 0, d.cause, &v);
            if (rc == RP_RESULT_OK && !v.permitted) rc = rp_aws_decide(config, *attempts, &error, random, &v, &d);
        }
        if (rc == RP_RESULT_OK) {
            add_name(*step, "action", RP_ENUM_AWS_ACTION, d.action);
            cJSON_AddItemToObject(*step, "decision", aws_decision_json(&d));
            *last_cause = d.action == RP_AWS_ACTION_RETRY ? d.cause : RP_RETRY_CAUSE_NONE;
            if (d.action != RP_AWS_ACTION_RETRY) *attempts = 0;
        }
    }
    rp_budget_verdict balance;
    if (rc == RP_RESULT_OK && quota) rc = rp_budget_permit(quota, 0, RP_RETRY_CAUSE_ERROR, &balance);
    if (rc != RP_RESULT_OK) {
        cJSON_Delete(*step);
        *step = NULL;
        return failure_at(f, rc, path, ""); /* the library names "error.status", "random" */
    }
    if (quota)
        cJSON_AddNumberToObject(*step, "quota_balance", (double)balance.balance);
    else
        cJSON_AddNullToObject(*step, "quota_balance");
    return 0;
}

/* `key`: each step's `field` (its decision's when `in_decision`), JSON null where it has none. */
static void add_column(cJSON *out, const char *key, const cJSON *steps, const char *field, int in_decision) {
    cJSON *list = cJSON_AddArrayToObject(out, key);
    for (const cJSON *s = steps->child; s; s = s->next) {
        const cJSON *from = in_decision ? cJSON_GetObjectItemCaseSensitive(s, "decision") : s;
        const cJSON *v = cJSON_IsObject(from) ? cJSON_GetObjectItemCaseSensitive(from, field) : NULL;
        cJSON_AddItemToArray(list, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
    }
}

/* The JSON text a call wrote (`rc` its result; `text` freed here) under `key`. */
static int add_text(cJSON *out, const char *key, rp_result rc, char *text, failure *f) {
    if (rc != RP_RESULT_OK) return lib_failure(f, rc, key);
    cJSON_AddItemToObject(out, key, or_null(parsed(text)));
    return 0;
}

/* `key`: the JSON text `write` (rp_*_document, rp_*_snapshot) gives of `handle`; null without one. */
#define ADD_JSON(out, key, write, handle)                              \
    do {                                                               \
        char *text_ = NULL;                                            \
        rp_result rc_ = (handle) ? write((handle), &text_) : RP_RESULT_OK; \
        if (rc == 0) rc = add_text((out), (key), rc_, text_, f);       \
        else rp_string_free(text_);                                    \
    } while (0)

static int aws_retry_run(const cJSON *in, cJSON **out, failure *f) {
    rp_aws_retry_config *config = NULL;
    rp_budget *quota = NULL;
    if (check_keys(in, "", KEYS("config", "quota", "quota_state", "events"), KEYS("events"), f)) return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    if (open_aws_config(OPT("config"), 1, &config, f)) return -1;
    if (open_quota(in, config, &quota, f)) {
        rp_aws_retry_config_free(config);
        return -1;
    }
    cJSON *steps = cJSON_CreateArray();
    uint32_t attempts = 0;
    rp_retry_cause last_cause = RP_RETRY_CAUSE_NONE;
    size_t i = 0;
    int rc = 0;
    for (const cJSON *e = ITEM("events")->child; e && rc == 0; e = e->next, i++) {
        cJSON *step = NULL;
        if ((rc = retry_run_event(config, quota, e, i, &attempts, &last_cause, &step, f)) == 0)
            cJSON_AddItemToArray(steps, step);
    }
    *out = cJSON_CreateObject();
    ADD_JSON(*out, "config", rp_aws_retry_config_document, config);
    ADD_JSON(*out, "quota", rp_budget_document, quota);
    ADD_JSON(*out, "quota_state", rp_budget_snapshot, quota);
    if (rc == 0) {
        add_column(*out, "actions", steps, "action", 0);
        add_column(*out, "rules", steps, "rule", 1);
        add_column(*out, "delays_ms", steps, "delay_ms", 1);
        add_column(*out, "ceilings_ms", steps, "ceiling_ms", 1);
        add_column(*out, "waits_ms", steps, "wait_ms", 1);
        add_column(*out, "quota_balances", steps, "quota_balance", 0);
        cJSON_AddItemToObject(*out, "steps", steps);
        steps = NULL;
    }
    cJSON_Delete(steps);
    rp_budget_free(quota);
    rp_aws_retry_config_free(config);
    return finished(out, rc);
}

/* A rate as the JSON API's lists report it: to 12 decimal places. */
static double rounded_rate(double rate) { return round(rate * 1e12) / 1e12; }

/* One limiter event (the i-th) on `limiter`: its result, as the JSON API's. */
static int limiter_event(rp_aws_rate_limiter *limiter, const cJSON *e, size_t i, cJSON **result, failure *f) {
    char path[64], where[96];
    uint64_t at_ms;
    const char *kind;
    bool throttled = false;
    const cJSON *t;
    snprintf(path, sizeof path, "events[%zu]", i);
    if (read_event(e, path, KEYS("at_ms", "kind", "throttled"), &at_ms, &kind, f)) return -1;
    t = cJSON_GetObjectItemCaseSensitive(e, "throttled");
    snprintf(where, sizeof where, "%s.throttled", path);
    if (strcmp(kind, "acquire") == 0) {
        if (t && !cJSON_IsNull(t)) return cannot_express(f, where, "rp_aws_rate_limiter_acquire takes no throttled");
        rp_aws_acquire_verdict v;
        TRY(rp_aws_rate_limiter_acquire(limiter, at_ms, &v), path);
        *result = cJSON_CreateObject();
        cJSON_AddBoolToObject(*result, "acquired", v.acquired);
        add_ms_if(*result, "wait_ms", !v.acquired, v.wait_ms);
        cJSON_AddStringToObject(*result, "rule", v.rule);
        cJSON_AddStringToObject(*result, "section", v.section);
        cJSON_AddNumberToObject(*result, "capacity", v.capacity);
        return 0;
    }
    if (strcmp(kind, "response") != 0) return cannot_express(f, path, "a kind that is neither acquire nor response");
    if (t && !cJSON_IsNull(t) && get_bool(t, where, &throttled, f)) return -1;
    rp_aws_rate_update u;
    TRY(rp_aws_rate_limiter_record(limiter, at_ms, throttled, &u), path);
    *result = cJSON_CreateObject();
    cJSON_AddBoolToObject(*result, "throttled", u.throttled);
    cJSON_AddNumberToObject(*result, "measured_rate", u.measured_rate);
    cJSON_AddNumberToObject(*result, "calculated_rate", u.calculated_rate);
    cJSON_AddNumberToObject(*result, "fill_rate", u.fill_rate);
    cJSON_AddNumberToObject(*result, "max_capacity", u.max_capacity);
    cJSON_AddBoolToObject(*result, "enabled", u.enabled);
    cJSON_AddStringToObject(*result, "rule", u.rule);
    if (u.bound)
        cJSON_AddStringToObject(*result, "bound", u.bound);
    else
        cJSON_AddNullToObject(*result, "bound");
    return 0;
}

/* The limiter of the case: a new one at start_ms, or its state restored. */
static int open_limiter(const cJSON *in, rp_aws_rate_limiter **limiter, failure *f) {
    uint64_t start_ms = 0;
    const cJSON *state = OPT("state");
    if (state && OPT("start_ms"))
        return cannot_express(f, "start_ms", "rp_aws_rate_limiter_restore keeps the state's own times");
    if (OPT("start_ms") && get_ms(ITEM("start_ms"), "start_ms", &start_ms, f)) return -1;
    char *doc = OPT("limiter") ? print_exact(ITEM("limiter")) : NULL;
    char *snap = state ? print_exact(state) : NULL;
    const char *text = doc ? doc : "{}";
    rp_result rc = snap ? rp_aws_rate_limiter_restore(text, strlen(text), snap, strlen(snap), limiter)
                        : rp_aws_rate_limiter_from_json(text, strlen(text), start_ms, limiter);
    cJSON_free(doc);
    cJSON_free(snap);
    if (rc == RP_RESULT_OK) return 0;
    int in_state = strncmp(rp_last_error_field(), "snapshot", 8) == 0;
    return failure_at(f, rc, in_state ? "state" : "limiter", in_state ? "snapshot" : "");
}

/* `key`: the number `field` of each object in `list` (rounded to 12 places when `round12`), or null. */
static void add_numbers(cJSON *out, const char *key, const cJSON *list, const char *field, int round12) {
    cJSON *column = cJSON_AddArrayToObject(out, key);
    for (const cJSON *x = list->child; x; x = x->next) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, field);
        if (cJSON_IsNumber(v))
            cJSON_AddItemToArray(column, cJSON_CreateNumber(round12 ? rounded_rate(v->valuedouble) : v->valuedouble));
        else
            cJSON_AddItemToArray(column, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
    }
}

static int aws_rate_limiter_run(const cJSON *in, cJSON **out, failure *f) {
    rp_aws_rate_limiter *limiter = NULL;
    if (check_keys(in, "", KEYS("limiter", "state", "start_ms", "events"), KEYS("events"), f)) return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    if (open_limiter(in, &limiter, f)) return -1;
    cJSON *results = cJSON_CreateArray(), *states = cJSON_CreateArray();
    size_t i = 0;
    int rc = 0;
    for (const cJSON *e = ITEM("events")->child; e && rc == 0; e = e->next, i++) {
        cJSON *result = NULL;
        char *snap = NULL;
        if ((rc = limiter_event(limiter, e, i, &result, f)) != 0) break;
        cJSON_AddItemToArray(results, result);
        rp_result r = rp_aws_rate_limiter_snapshot(limiter, &snap);
        if (r != RP_RESULT_OK) rc = lib_failure(f, r, "state");
        else cJSON_AddItemToArray(states, or_null(parsed(snap)));
    }
    *out = cJSON_CreateObject();
    ADD_JSON(*out, "limiter", rp_aws_rate_limiter_document, limiter);
    ADD_JSON(*out, "state", rp_aws_rate_limiter_snapshot, limiter);
    if (rc == 0) {
        add_column(*out, "acquired", results, "acquired", 0);
        add_column(*out, "waits_ms", results, "wait_ms", 0);
        add_column(*out, "rules", results, "rule", 0);
        add_column(*out, "bounds", results, "bound", 0);
        add_numbers(*out, "calculated_rates", results, "calculated_rate", 1);
        add_numbers(*out, "measured_rates", states, "measured_rate", 1);
        add_numbers(*out, "fill_rates", states, "fill_rate", 1);
        add_numbers(*out, "max_capacities", states, "max_capacity", 1);
        add_numbers(*out, "capacities", states, "capacity", 1);
        add_column(*out, "enabled", states, "enabled", 0);
        cJSON_AddItemToObject(*out, "results", results);
        results = NULL;
    }
    cJSON_Delete(results);
    cJSON_Delete(states);
    rp_aws_rate_limiter_free(limiter);
    return finished(out, rc);
}

/* A run's attempt_ended outcome `o` (at `path`) of kind "grpc" or "aws", through
 * rp_run_attempt_ended_grpc (an rp_grpc_attempt) or rp_run_attempt_ended_aws (an rp_aws_error):
 * 0 with the call's result in *rc, -1 when the outcome has no C form (f set), 1 for another kind. */
static int typed_run_outcome(rp_run *run, const cJSON *o, const char *path, double at_ms, double random,
                             rp_run_step *step, rp_result *rc, failure *f) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    if (!cJSON_IsString(kind)) return 1;
    if (strcmp(kind->valuestring, "grpc") == 0) {
        const char *pushback[MAX_PUSHBACK];
        rp_grpc_attempt attempt;
        cJSON *fields = cJSON_Duplicate(o, 1); /* the attempt's own keys: all but "kind" */
        cJSON_DeleteItemFromObjectCaseSensitive(fields, "kind");
        int bad = read_grpc_attempt(fields, path, &attempt, pushback, f);
        if (!bad) *rc = rp_run_attempt_ended_grpc(run, &attempt, at_ms, random, step);
        cJSON_Delete(fields);
        return bad ? -1 : 0;
    }
    if (strcmp(kind->valuestring, "aws") != 0) return 1;
    char where[160];
    rp_aws_error error;
    snprintf(where, sizeof where, "%s.error", path);
    if (check_keys(o, path, KEYS("kind", "error"), KEYS("error"), f) ||
        read_aws_error(cJSON_GetObjectItemCaseSensitive(o, "error"), where, &error, f))
        return -1;
    *rc = rp_run_attempt_ended_aws(run, &error, at_ms, random, step);
    return 0;
}

#endif

/*
 * Part of fixtures.c, included after fixtures_aws.h: the typed adapter of `run`, which replays a
 * case's events through an rp_run handle (rp_run_start, rp_run_attempt_ended, rp_run_wait_ended,
 * rp_run_cancel), its outcomes as rp_outcome structs (a gRPC or AWS one through
 * rp_run_attempt_ended_grpc / _aws: tests/fixtures_aws.h), with the case's budget and breaker as
 * rp_budget / rp_breaker handles. It writes the summary keys actions, delays_ms, rules, end,
 * attempts_sent, stats (rp_run_statistics), breaker_changes (the changes the breaker's state-change
 * callback was handed during the run, in order), signals (each step's rp_run_signal by name),
 * budget_state and breaker_state (through
 * rp_budget_snapshot and rp_breaker_snapshot);
 * `steps` and `last` (the whole steps as JSON) are left out: no case compares them, and the typed
 * step is checked field by field in test_run.c. A host strategy (`host`) has no C form in a run: such a
 * case is counted apart (fixtures.c, HOST_STRATEGY_GAP), its JSON answer checked through rp_call_json.
 */
#ifndef RP_FIXTURES_RUN_H
#define RP_FIXTURES_RUN_H

/* Document `doc` and optional snapshot `state` as a new handle through `from_json` or `restore`;
 * failures name "<doc_key>.<field>" or "<state_key>.<field>". */
#define OPEN_RUN_HANDLE(from_json, restore, doc, doc_key, state, state_key, out)                    \
    do {                                                                                              \
        char *doc_ = print_exact(doc);                                                     \
        char *snap_ = (state) ? print_exact(state) : NULL;                                 \
        rp_result rc_ = snap_ ? restore(doc_, strlen(doc_), snap_, strlen(snap_), (out))              \
                              : from_json(doc_, strlen(doc_), (out));                                 \
        cJSON_free(doc_);                                                                             \
        cJSON_free(snap_);                                                                            \
        if (rc_ != RP_RESULT_OK) {                                                                    \
            int in_state_ = strncmp(rp_last_error_field(), "snapshot", 8) == 0;                       \
            rc = failure_at(f, rc_, in_state_ ? (state_key) : (doc_key), in_state_ ? "snapshot" : ""); \
            goto done;                                                                                \
        }                                                                                             \
    } while (0)

/* The outcome object `o` (at `path`) as an rp_outcome; `mongodb` receives the printed MongoDB
 * error, which the caller frees with cJSON_free. */
static int read_outcome(const cJSON *o, const char *path, rp_outcome *out, char **mongodb, failure *f) {
    static const struct {
        const char *name;
        rp_outcome_kind kind;
    } KINDS[] = {
        {"success", RP_OUTCOME_SUCCESS}, {"final", RP_OUTCOME_FINAL}, {"reason", RP_OUTCOME_REASON},
        {"network", RP_OUTCOME_NETWORK}, {"http", RP_OUTCOME_HTTP},   {"kv", RP_OUTCOME_KV},
        {"timeout", RP_OUTCOME_TIMEOUT}, {"mongodb", RP_OUTCOME_MONGODB},
    };
    char where[160];
    const char *kind = NULL;
    memset(out, 0, sizeof *out);
    out->sent = -1;
    snprintf(where, sizeof where, "%s.kind", path);
    if (!cJSON_IsObject(o)) return cannot_express(f, path, "not an object");
    if (get_string(cJSON_GetObjectItemCaseSensitive(o, "kind"), where, &kind, f)) return -1;
    size_t i = 0;
    while (i < sizeof KINDS / sizeof KINDS[0] && strcmp(KINDS[i].name, kind) != 0) i++;
    if (i == sizeof KINDS / sizeof KINDS[0]) return cannot_express(f, where, "no rp_outcome_kind");
    out->kind = KINDS[i].kind;
    const cJSON *v;
#define FIELD(name) (snprintf(where, sizeof where, "%s.%s", path, name), cJSON_GetObjectItemCaseSensitive(o, name))
    switch (out->kind) {
    case RP_OUTCOME_REASON:
        if (check_keys(o, path, KEYS("kind", "reason", "timeout"), KEYS("reason"), f) ||
            get_name(RP_ENUM_REASON, FIELD("reason"), where, &out->reason, f))
            return -1;
        if ((v = FIELD("timeout")) && get_bool(v, where, &out->timeout, f)) return -1;
        return 0;
    case RP_OUTCOME_NETWORK: {
        bool sent = false;
        if (check_keys(o, path, KEYS("kind", "sent"), NULL, f)) return -1;
        if ((v = FIELD("sent")) && !cJSON_IsNull(v)) {
            if (get_bool(v, where, &sent, f)) return -1;
            out->sent = sent ? 1 : 0;
        }
        return 0;
    }
    case RP_OUTCOME_HTTP:
        if (check_keys(o, path, KEYS("kind", "status", "retry_after"), KEYS("status"), f) ||
            get_u32(FIELD("status"), where, &out->status, f))
            return -1;
        if ((v = FIELD("retry_after")) && !cJSON_IsNull(v) && get_string(v, where, &out->retry_after, f)) return -1;
        return 0;
    case RP_OUTCOME_KV: {
        uint16_t status = 0;
        if (check_keys(o, path, KEYS("kind", "status"), KEYS("status"), f) ||
            get_status(FIELD("status"), where, &status, f))
            return -1;
        out->status = status;
        return 0;
    }
    case RP_OUTCOME_MONGODB:
        if (check_keys(o, path, KEYS("kind", "error"), KEYS("error"), f)) return -1;
        *mongodb = print_exact(FIELD("error"));
        out->mongodb_error = *mongodb;
        return 0;
    default:
        return check_keys(o, path, KEYS("kind"), NULL, f);
    }
#undef FIELD
}

/* One event (the i-th) on `run`, its step in *step. */
static int run_event(rp_run *run, const cJSON *e, size_t i, rp_run_step *step, failure *f) {
    char path[64], where[96];
    const char *event = NULL;
    double random = NAN;
    int64_t now_unix_ms = -1;
    const cJSON *v;
    snprintf(path, sizeof path, "events[%zu]", i);
    if (check_keys(e, path, KEYS("event", "at_ms", "outcome", "random", "now_unix_ms"), KEYS("event", "at_ms"), f))
        return -1;
    snprintf(where, sizeof where, "%s.event", path);
    if (get_string(cJSON_GetObjectItemCaseSensitive(e, "event"), where, &event, f)) return -1;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "at_ms");
    snprintf(where, sizeof where, "%s.at_ms", path);
    if (!cJSON_IsNumber(at)) return cannot_express(f, where, "not a number");
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "random")) && !cJSON_IsNull(v)) {
        snprintf(where, sizeof where, "%s.random", path);
        /* C's "no draw" is NaN or negative: a negative draw has no C form. */
        if (!cJSON_IsNumber(v) || v->valuedouble < 0) return cannot_express(f, where, "not a draw C can pass");
        random = v->valuedouble;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "now_unix_ms")) && !cJSON_IsNull(v)) {
        uint64_t ms;
        snprintf(where, sizeof where, "%s.now_unix_ms", path);
        if (get_uint(v, where, (double)MAX_SAFE_MS, &ms, f)) return -1;
        now_unix_ms = (int64_t)ms;
    }
    const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(e, "outcome");
    int ended = strcmp(event, "attempt_ended") == 0;
    if ((outcome != NULL) != ended) return cannot_express(f, path, "an outcome belongs to attempt_ended only");
    rp_result rc;
    snprintf(where, sizeof where, "%s.outcome", path);
    int other = ended ? typed_run_outcome(run, outcome, where, at->valuedouble, random, step, &rc, f) : 1;
    if (other < 0) return -1;
    if (other == 0) {
        /* a gRPC or AWS outcome, through its own function (tests/fixtures_aws.h) */
    } else if (ended) {
        rp_outcome o;
        char *mongodb = NULL;
        snprintf(where, sizeof where, "%s.outcome", path);
        int bad = read_outcome(outcome, where, &o, &mongodb, f);
        rc = bad ? RP_RESULT_OK : rp_run_attempt_ended(run, &o, at->valuedouble, random, now_unix_ms, step);
        cJSON_free(mongodb);
        if (bad) return -1;
    } else if (strcmp(event, "start") == 0) {
        rc = rp_run_start(run, at->valuedouble, random, step);
    } else if (strcmp(event, "wait_ended") == 0) {
        rc = rp_run_wait_ended(run, at->valuedouble, random, step);
    } else if (strcmp(event, "cancel") == 0) {
        rc = rp_run_cancel(run, at->valuedouble, step);
    } else {
        snprintf(where, sizeof where, "%s.event", path);
        return cannot_express(f, where, "no such event");
    }
    /* The library names the field of the event ("now_ms", "event", "outcome.status"). */
    return rc == RP_RESULT_OK ? 0 : failure_at(f, rc, path, "");
}

/* A handle's snapshot (through `snapshot`) as JSON, or JSON null without a handle. */
#define ADD_STATE(snapshot, handle, key)                                      \
    do {                                                                      \
        char *text_ = NULL;                                                   \
        if (!(handle)) {                                                      \
            cJSON_AddNullToObject(*out, key);                                 \
        } else if ((rc_ = snapshot((handle), &text_)) != RP_RESULT_OK) {      \
            rc = lib_failure(f, rc_, key);                                    \
            goto done;                                                        \
        } else {                                                              \
            cJSON_AddItemToObject(*out, key, parsed(text_));                  \
        }                                                                     \
    } while (0)

/* A run's statistics as the JSON API's `stats`. */
static cJSON *run_stats_json(const rp_run_stats *s) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "attempts", s->attempts);
    cJSON_AddNumberToObject(out, "retries", s->retries);
    add_ms(out, "waited_ms", s->waited_ms);
    add_ms(out, "elapsed_ms", s->elapsed_ms);
    cJSON_AddNumberToObject(out, "budget_refusals", s->budget_refusals);
    cJSON_AddNumberToObject(out, "breaker_rejections", s->breaker_rejections);
    add_name(out, "end", RP_ENUM_RUN_END, s->end);
    if (s->last_rule)
        cJSON_AddStringToObject(out, "last_rule", s->last_rule);
    else
        cJSON_AddNullToObject(out, "last_rule");
    if (s->has_last_reason)
        add_name(out, "last_reason", RP_ENUM_REASON, s->last_reason);
    else
        cJSON_AddNullToObject(out, "last_reason");
    cJSON_AddItemToObject(out, "last_budget",
                          s->has_last_budget ? budget_verdict_json(&s->last_budget) : cJSON_CreateNull());
    cJSON_AddItemToObject(out, "last_breaker",
                          s->has_last_breaker ? breaker_verdict_json(&s->last_breaker) : cJSON_CreateNull());
    return out;
}

static int run_machine(const cJSON *in, cJSON **out, failure *f) {
    rp_budget *budget = NULL;
    rp_breaker *breaker = NULL;
    rp_run *machine = NULL;
    cJSON *heard = NULL; /* the breaker's changes, as its callback was handed them */
    rp_result rc_;
    int rc = -1;
    if (OPT("host")) {
        cannot_express(f, "host", "a run's host strategy: rp_run takes no strategy callback");
        f->inexpressible = HOST_STRATEGY_GAP;
        return -1;
    }
    if (check_keys(in, "", KEYS("run", "budget", "budget_state", "breaker", "breaker_state", "events"),
                   KEYS("run", "events"), f))
        return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    if ((OPT("budget_state") && !OPT("budget")) || (OPT("breaker_state") && !OPT("breaker")))
        return cannot_express(f, "", "a state without its budget or breaker");
    if (OPT("budget"))
        OPEN_RUN_HANDLE(rp_budget_from_json, rp_budget_restore, ITEM("budget"), "budget", OPT("budget_state"),
                        "budget_state", &budget);
    if (OPT("breaker"))
        OPEN_RUN_HANDLE(rp_breaker_from_json, rp_breaker_restore, ITEM("breaker"), "breaker", OPT("breaker_state"),
                        "breaker_state", &breaker);
    heard = cJSON_CreateArray();
    if (breaker && (rc_ = rp_breaker_on_change(breaker, note_change, heard)) != RP_RESULT_OK) {
        rc = lib_failure(f, rc_, "breaker");
        goto done;
    }
    char *config = print_exact(ITEM("run"));
    rc_ = rp_run_new(config, strlen(config), budget, breaker, &machine);
    cJSON_free(config);
    if (rc_ != RP_RESULT_OK) {
        rc = failure_at(f, rc_, "run", "");
        goto done;
    }
    *out = cJSON_CreateObject();
    cJSON *actions = cJSON_AddArrayToObject(*out, "actions");
    cJSON *delays = cJSON_AddArrayToObject(*out, "delays_ms");
    cJSON *rules = cJSON_AddArrayToObject(*out, "rules");
    cJSON *signals = cJSON_AddArrayToObject(*out, "signals");
    rp_run_step step = {0};
    size_t i = 0;
    for (const cJSON *e = ITEM("events")->child; e; e = e->next, i++) {
        if (run_event(machine, e, i, &step, f)) goto done;
        const char *action = NULL;
        if ((rc_ = rp_enum_name(RP_ENUM_RUN_ACTION, step.action, &action)) != RP_RESULT_OK) {
            rc = lib_failure(f, rc_, "step.action");
            goto done;
        }
        cJSON_AddItemToArray(actions, cJSON_CreateString(action));
        if (step.action == RP_RUN_WAIT) cJSON_AddItemToArray(delays, cJSON_CreateNumber((double)step.delay_ms));
        cJSON_AddItemToArray(rules, cJSON_CreateString(step.rule));
        const char *signal = NULL;
        if ((rc_ = rp_enum_name(RP_ENUM_RUN_SIGNAL, step.signal, &signal)) != RP_RESULT_OK) {
            rc = lib_failure(f, rc_, "step.signal");
            goto done;
        }
        cJSON_AddItemToArray(signals, cJSON_CreateString(signal));
    }
    if (i > 0)
        add_name(*out, "end", RP_ENUM_RUN_END, step.end);
    else
        cJSON_AddNullToObject(*out, "end");
    uint32_t sent = 0;
    if ((rc_ = rp_run_attempts_sent(machine, &sent)) != RP_RESULT_OK) {
        rc = lib_failure(f, rc_, "attempts_sent");
        goto done;
    }
    cJSON_AddNumberToObject(*out, "attempts_sent", sent);
    rp_run_stats stats;
    if ((rc_ = rp_run_statistics(machine, &stats)) != RP_RESULT_OK) {
        rc = lib_failure(f, rc_, "stats");
        goto done;
    }
    cJSON_AddItemToObject(*out, "stats", run_stats_json(&stats));
    cJSON_AddItemToObject(*out, "breaker_changes", heard);
    heard = NULL;
    ADD_STATE(rp_budget_snapshot, budget, "budget_state");
    ADD_STATE(rp_breaker_snapshot, breaker, "breaker_state");
    rc = 0;
done:
    if (rc != 0) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    rp_run_free(machine);
    rp_breaker_free(breaker);
    rp_budget_free(budget);
    cJSON_Delete(heard);
    return rc;
}

#endif

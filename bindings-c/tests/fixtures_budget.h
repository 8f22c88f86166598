/*
 * Part of fixtures.c, included after its helpers: the typed adapters of budget_run and breaker_run,
 * which replay a case's events through an rp_budget / rp_breaker handle, as the JSON API's runs do
 * (spec-fixtures/README.md). A budget `retry` event is rp_budget_try_retry; any other event is
 * recorded, then a retry is asked for (rp_budget_permit): of a timeout after a `timeout` event, of
 * an error otherwise. A breaker `request` is rp_breaker_permit; an outcome is recorded (its verdict
 * null); after each event comes the state at that moment (rp_breaker_state_at) and the changes the
 * event made (rp_breaker_last_changes, a list, empty for none), which must be what the breaker's
 * state-change callback (rp_breaker_on_change) was handed during the event: each change once, in order.
 */
#ifndef RP_FIXTURES_BUDGET_H
#define RP_FIXTURES_BUDGET_H

static int json_eq(const cJSON *a, const cJSON *b); /* fixtures.c */

/* A failure of a document the runner passed as an argument of its own: the library names the field
 * inside it ("max_tokens", or under `inside`: "snapshot.balance"); the case holds it at `at`. */
static int failure_at(failure *f, rp_result rc, const char *at, const char *inside) {
    const char *field = rp_last_error_field();
    size_t n = strlen(inside);
    if (n && strncmp(field, inside, n) == 0) field += n;
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", at, *field && *field != '.' && *field != '[' ? "." : "", field);
    return lib_failure(f, rc, path);
}

/* JSON text the library wrote (freed here), parsed; NULL when it is not JSON. */
static cJSON *parsed(char *text) {
    cJSON *v = text ? cJSON_Parse(text) : NULL;
    rp_string_free(text);
    return v;
}

/* A state machine's document (`doc`, NULL: "{}") and the case's optional state as a new handle,
 * through `from_json` or `restore`; failures name "<doc_key>.<field>" or "state.<field>". */
#define OPEN_HANDLE(from_json, restore, doc, doc_key, out)                                           \
    do {                                                                                              \
        char *doc_ = (doc) ? print_exact(doc) : NULL;                                      \
        const char *text_ = doc_ ? doc_ : "{}";                                                       \
        const cJSON *state_ = OPT("state");                                                           \
        char *snap_ = state_ ? print_exact(state_) : NULL;                                 \
        rp_result rc_ = snap_ ? restore(text_, strlen(text_), snap_, strlen(snap_), (out))            \
                              : from_json(text_, strlen(text_), (out));                               \
        cJSON_free(doc_);                                                                             \
        cJSON_free(snap_);                                                                            \
        if (rc_ != RP_RESULT_OK) {                                                                    \
            int in_state_ = strncmp(rp_last_error_field(), "snapshot", 8) == 0;                       \
            return failure_at(f, rc_, in_state_ ? "state" : (doc_key), in_state_ ? "snapshot" : ""); \
        }                                                                                             \
    } while (0)

/* One event's time and kind name (converted by the caller), checked against its keys. */
static int read_event(const cJSON *e, const char *path, const char *const *allowed, uint64_t *at_ms,
                      const char **kind, failure *f) {
    char where[64];
    snprintf(where, sizeof where, "%s.at_ms", path);
    if (check_keys(e, path, allowed, KEYS("at_ms", "kind"), f) ||
        get_ms(cJSON_GetObjectItemCaseSensitive(e, "at_ms"), where, at_ms, f))
        return -1;
    snprintf(where, sizeof where, "%s.kind", path);
    return get_string(cJSON_GetObjectItemCaseSensitive(e, "kind"), where, kind, f);
}

static cJSON *budget_verdict_json(const rp_budget_verdict *v) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddBoolToObject(out, "permitted", v->permitted);
    if (v->permitted)
        cJSON_AddNullToObject(out, "cause");
    else
        add_name(out, "cause", RP_ENUM_NO_RETRY_CAUSE, RP_NO_RETRY_CAUSE_BUDGET_EXHAUSTED);
    add_name(out, "kind", RP_ENUM_BUDGET_KIND, v->kind);
    add_name(out, "rule", RP_ENUM_BUDGET_RULE, v->rule);
    cJSON_AddStringToObject(out, "source", v->source);
    add_ms(out, "balance", v->balance);
    return out;
}

/* Budget event `e` (the i-th) on `b`, and the verdict after it. */
static int budget_event(rp_budget *b, const cJSON *e, size_t i, rp_budget_verdict *v, failure *f) {
    char path[64], where[96];
    uint64_t at_ms;
    const char *name;
    rp_budget_event kind;
    rp_retry_cause cause = RP_RETRY_CAUSE_NONE;
    snprintf(path, sizeof path, "events[%zu]", i);
    if (read_event(e, path, KEYS("at_ms", "kind", "after_retry", "cause"), &at_ms, &name, f)) return -1;
    snprintf(where, sizeof where, "%s.kind", path);
    TRY(rp_enum_from_name(RP_ENUM_BUDGET_EVENT, name, &kind), where);
    const cJSON *after_retry = cJSON_GetObjectItemCaseSensitive(e, "after_retry");
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(e, "cause");
    /* C's one cause argument is the succeeded retry's for a success (JSON's after_retry) and the
     * event's own otherwise (JSON's cause): the other key on each has no C form. */
    if ((kind == RP_BUDGET_EVENT_SUCCESS && given) || (kind != RP_BUDGET_EVENT_SUCCESS && after_retry))
        return cannot_express(f, path, "after_retry belongs to a success, cause to the other events");
    if (after_retry) given = after_retry;
    if (given) snprintf(where, sizeof where, "%s.%s", path, after_retry ? "after_retry" : "cause");
    if (given && !cJSON_IsNull(given) && get_name(RP_ENUM_RETRY_CAUSE, given, where, &cause, f)) return -1;
    if (kind == RP_BUDGET_EVENT_RETRY) {
        TRY(rp_budget_try_retry(b, at_ms, cause, v), where);
        return 0;
    }
    TRY(rp_budget_record(b, at_ms, kind, cause), given ? where : path);
    rp_retry_cause asked = kind == RP_BUDGET_EVENT_TIMEOUT ? RP_RETRY_CAUSE_TIMEOUT : RP_RETRY_CAUSE_ERROR;
    TRY(rp_budget_permit(b, at_ms, asked, v), path);
    return 0;
}

/* budget_run's events on `b`, into `out`'s verdicts, permitted and balances, then its document and state. */
static int budget_events(rp_budget *b, const cJSON *events, cJSON *out, failure *f) {
    cJSON *verdicts = cJSON_AddArrayToObject(out, "verdicts");
    cJSON *permitted = cJSON_AddArrayToObject(out, "permitted");
    cJSON *balances = cJSON_AddArrayToObject(out, "balances");
    size_t i = 0;
    for (const cJSON *e = events->child; e; e = e->next, i++) {
        rp_budget_verdict v;
        if (budget_event(b, e, i, &v, f)) return -1;
        cJSON_AddItemToArray(verdicts, budget_verdict_json(&v));
        cJSON_AddItemToArray(permitted, cJSON_CreateBool(v.permitted));
        cJSON_AddItemToArray(balances, cJSON_CreateNumber((double)v.balance));
    }
    char *text = NULL;
    TRY(rp_budget_document(b, &text), "budget");
    cJSON_AddItemToObject(out, "budget", parsed(text));
    TRY(rp_budget_snapshot(b, &text), "state");
    cJSON_AddItemToObject(out, "state", parsed(text));
    return 0;
}

static int budget_run(const cJSON *in, cJSON **out, failure *f) {
    rp_budget *b = NULL;
    if (check_keys(in, "", KEYS("budget", "state", "events"), KEYS("budget", "events"), f)) return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    OPEN_HANDLE(rp_budget_from_json, rp_budget_restore, ITEM("budget"), "budget", &b);
    *out = cJSON_CreateObject();
    int rc = budget_events(b, ITEM("events"), *out, f);
    rp_budget_free(b);
    return rc;
}

static cJSON *breaker_verdict_json(const rp_breaker_verdict *v) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddBoolToObject(out, "permitted", v->permitted);
    cJSON_AddBoolToObject(out, "canary", v->canary);
    add_name(out, "state", RP_ENUM_BREAKER_STATE, v->state);
    if (v->has_reason)
        add_name(out, "reason", RP_ENUM_REASON, v->reason);
    else
        cJSON_AddNullToObject(out, "reason");
    add_name(out, "rule", RP_ENUM_BREAKER_RULE, v->rule);
    cJSON_AddStringToObject(out, "source", v->source);
    return out;
}

/* A breaker's state change as JSON: {"from": "closed", "to": "open", "rule": "breaker_tripped"}. */
static cJSON *breaker_change_json(const rp_breaker_change *c) {
    cJSON *out = cJSON_CreateObject();
    add_name(out, "from", RP_ENUM_BREAKER_STATE, c->from);
    add_name(out, "to", RP_ENUM_BREAKER_STATE, c->to);
    add_name(out, "rule", RP_ENUM_BREAKER_CHANGE_RULE, c->rule);
    return out;
}

/* A breaker's state-change callback: appends each change, as JSON, to the array `user_data`. */
static void note_change(void *user_data, rp_breaker *breaker, rp_breaker_change change) {
    (void)breaker;
    cJSON_AddItemToArray(user_data, breaker_change_json(&change));
}

/* The changes event `path` made by rp_breaker_last_changes (a JSON list, empty for none), checked
 * against what the callback appended to `heard` during the event (it had `before` items before). */
static int event_change(rp_breaker *b, const cJSON *heard, int before, const char *path, cJSON **change,
                        failure *f) {
    size_t count = 0;
    rp_breaker_change c[RP_BREAKER_MAX_CHANGES];
    TRY(rp_breaker_last_changes(b, c, &count), path);
    *change = cJSON_CreateArray();
    for (size_t k = 0; k < count; k++) cJSON_AddItemToArray(*change, breaker_change_json(&c[k]));
    int told = cJSON_GetArraySize(heard) - before;
    bool same = told == (int)count;
    for (size_t k = 0; same && k < count; k++) same = json_eq(cJSON_GetArrayItem(heard, before + (int)k), cJSON_GetArrayItem(*change, (int)k));
    if (same) return 0;
    char *last = print_exact(*change), *all = print_exact(heard);
    snprintf(f->code, sizeof f->code, "(callback)");
    snprintf(f->message, sizeof f->message,
             "%s: rp_breaker_last_changes says %s, but the callback was handed %d change(s) (all so far: %s)", path,
             last ? last : "?", told, all ? all : "?");
    cJSON_free(last);
    cJSON_free(all);
    cJSON_Delete(*change);
    *change = NULL;
    return -1;
}

/* breaker_run's events on `b`, into `out`'s verdicts, permitted, states and changes, then its
 * document and state. */
static int breaker_events(rp_breaker *b, const cJSON *events, cJSON *out, cJSON *heard, failure *f) {
    cJSON *verdicts = cJSON_AddArrayToObject(out, "verdicts");
    cJSON *permitted = cJSON_AddArrayToObject(out, "permitted");
    cJSON *states = cJSON_AddArrayToObject(out, "states");
    cJSON *changes = cJSON_AddArrayToObject(out, "changes");
    char path[64], where[96];
    size_t i = 0;
    for (const cJSON *e = events->child; e; e = e->next, i++) {
        uint64_t at_ms;
        const char *name;
        rp_breaker_state state;
        cJSON *change = NULL;
        int before = cJSON_GetArraySize(heard);
        snprintf(path, sizeof path, "events[%zu]", i);
        if (read_event(e, path, KEYS("at_ms", "kind"), &at_ms, &name, f)) return -1;
        if (strcmp(name, "request") == 0) {
            rp_breaker_verdict v;
            TRY(rp_breaker_permit(b, at_ms, &v), path);
            cJSON_AddItemToArray(verdicts, breaker_verdict_json(&v));
            cJSON_AddItemToArray(permitted, cJSON_CreateBool(v.permitted));
        } else {
            rp_breaker_outcome outcome;
            snprintf(where, sizeof where, "%s.kind", path);
            TRY(rp_enum_from_name(RP_ENUM_BREAKER_OUTCOME, name, &outcome), where);
            TRY(rp_breaker_record(b, at_ms, outcome), path);
            cJSON_AddItemToArray(verdicts, cJSON_CreateNull());
            cJSON_AddItemToArray(permitted, cJSON_CreateNull());
        }
        if (event_change(b, heard, before, path, &change, f)) return -1;
        cJSON_AddItemToArray(changes, change);
        TRY(rp_breaker_state_at(b, at_ms, &state), path);
        const char *state_name = NULL;
        TRY(rp_enum_name(RP_ENUM_BREAKER_STATE, state, &state_name), path);
        cJSON_AddItemToArray(states, cJSON_CreateString(state_name));
    }
    char *text = NULL;
    TRY(rp_breaker_document(b, &text), "breaker");
    cJSON_AddItemToObject(out, "breaker", parsed(text));
    TRY(rp_breaker_snapshot(b, &text), "state");
    cJSON_AddItemToObject(out, "state", parsed(text));
    return 0;
}

static int breaker_run(const cJSON *in, cJSON **out, failure *f) {
    rp_breaker *b = NULL;
    if (check_keys(in, "", KEYS("breaker", "state", "events"), KEYS("events"), f)) return -1;
    if (!cJSON_IsArray(ITEM("events"))) return cannot_express(f, "events", "not an array");
    OPEN_HANDLE(rp_breaker_from_json, rp_breaker_restore, OPT("breaker"), "breaker", &b); /* none: Couchbase's */
    cJSON *heard = cJSON_CreateArray();
    int rc = -1;
    rp_result rc_ = rp_breaker_on_change(b, note_change, heard);
    if (rc_ != RP_RESULT_OK) {
        lib_failure(f, rc_, "breaker");
    } else {
        *out = cJSON_CreateObject();
        rc = breaker_events(b, ITEM("events"), *out, heard, f);
    }
    rp_breaker_free(b);
    cJSON_Delete(heard);
    return rc;
}

#endif

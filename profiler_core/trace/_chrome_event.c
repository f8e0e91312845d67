/* One event object: its fields read (parse_event) and, when they are what the columns take
 * as the per-event path would read them, written to the columns (classify). */
#include "_chrome_scan.h"

#include <math.h>
#include <string.h>

#define MAX_TS_INT INT64_C(9200000000000000000) /* fields.MAX_MICROSECONDS * 1000 */
#define MAX_TS_FLOAT 9.2e18
#define MAX_NUMBER 1.7e308

static int
field_of(const uint8_t *k, Py_ssize_t n)
{
    switch (n) {
    case 1:
        return k[0] == 's' ? F_S : -1;
    case 2:
        if (k[0] == 'p' && k[1] == 'h')
            return F_PH;
        if (k[0] == 't' && k[1] == 's')
            return F_TS;
        if (k[0] == 'i' && k[1] == 'd')
            return F_ID;
        if (k[0] == 'b' && k[1] == 'p')
            return F_BP;
        return -1;
    case 3:
        if (memcmp(k, "cat", 3) == 0)
            return F_CAT;
        if (memcmp(k, "dur", 3) == 0)
            return F_DUR;
        if (memcmp(k, "pid", 3) == 0)
            return F_PID;
        if (memcmp(k, "tid", 3) == 0)
            return F_TID;
        if (memcmp(k, "id2", 3) == 0)
            return F_ID2;
        return -1;
    case 4:
        if (memcmp(k, "name", 4) == 0)
            return F_NAME;
        if (memcmp(k, "args", 4) == 0)
            return F_ARGS;
        return -1;
    case 7:
        return memcmp(k, "bind_id", 7) == 0 ? F_BIND : -1;
    default:
        return -1;
    }
}

/* The event object at p ('{'): its fields into ev, *pp past its '}'. A key with an escape
 * could be any key: the event is then not common (ev->duplicate). */
int
parse_event(const uint8_t **pp, const uint8_t *end, int limit, Event *ev)
{
    const uint8_t *p = skip_ws(*pp + 1, end);
    int rc;
    memset(ev->kind, 0, sizeof(ev->kind));
    ev->duplicate = 0;
    ev->args_keys.keys = ev->args_keys.odd_key = 0;
    if (p == end)
        return SCAN_INCOMPLETE;
    if (*p == '}') {
        *pp = p + 1;
        ev->duplicate = 1; /* {}: the per-event path passes over it */
        return SCAN_OK;
    }
    for (;;) {
        if (*p != '"')
            return SCAN_BAD;
        const uint8_t *k0 = p;
        int esc;
        if ((rc = parse_string(&p, end, &esc)) != SCAN_OK)
            return rc;
        int f = esc ? -1 : field_of(k0 + 1, p - k0 - 2);
        if (esc)
            ev->duplicate = 1;
        if ((rc = skip_colon(&p, end)) != SCAN_OK)
            return rc;
        if (f >= 0 && ev->kind[f] != V_ABSENT)
            ev->duplicate = 1; /* json.loads keeps the last: the per-event path reads it */
        const uint8_t *v0 = p;
        if (f < 0) {
            rc = parse_value(&p, end, 1, limit, NULL);
        }
        else if (*p == '"') {
            rc = parse_string(&p, end, &esc);
            ev->kind[f] = esc ? V_ESCAPED : V_STRING;
            ev->str[f] = v0 + 1;
            ev->len[f] = p - v0 - 2;
        }
        else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            rc = parse_number(&p, end, &ev->num[f], 1);
            if (rc < 0)
                return rc;
            ev->kind[f] = V_NUMBER;
        }
        else if (*p == '{' && f == F_ARGS) {
            rc = parse_container(&p, end, 2, limit, &ev->args_keys);
            ev->kind[f] = V_OBJECT;
            ev->args_at = v0;
            ev->args_len = p - v0;
        }
        else if (*p == 'n') {
            rc = expect_literal(&p, end, "null", 4);
            ev->kind[f] = V_NULL;
        }
        else {
            rc = parse_value(&p, end, 1, limit, NULL);
            ev->kind[f] = V_ODD;
        }
        if (rc != SCAN_OK)
            return rc;
        p = skip_ws(p, end);
        if (p == end)
            return SCAN_INCOMPLETE;
        if (*p == '}') {
            *pp = p + 1;
            return SCAN_OK;
        }
        if (*p != ',')
            return SCAN_BAD;
        p = skip_ws(p + 1, end);
        if (p == end)
            return SCAN_INCOMPLETE;
    }
}

/* A stamp as fields.timestamp reads it (a number within +-9.2e18 µs); 0 when not. */
static int
stamp_ok(const Number *n)
{
    if (!n->ok)
        return 0;
    if (n->is_int)
        return n->i >= -MAX_TS_INT && n->i <= MAX_TS_INT;
    return isfinite(n->f) && fabs(n->f) <= MAX_TS_FLOAT;
}

/* An id (pid, tid, flow id) the fast path takes: an integer literal within int64. */
static int
ident_ok(const Event *ev, int f)
{
    return ev->kind[f] == V_NUMBER && ev->num[f].is_int;
}

/* A pid or tid as fields.ident reads it, where that is plain: an integer literal within
 * int64 (*tag 0, *value the int), or an ASCII string that is not a number (*tag 1, *value
 * its string id: ident keeps such a string as it is). 1, or 0 when the per-event path
 * decides (a numeric string is its number, by str.strip/isdigit/int rules), -1 on error. */
static int
ident_of(Scanner *s, const Event *ev, int f, int64_t *tag, int64_t *value)
{
    if (ev->kind[f] == V_NUMBER && ev->num[f].is_int) {
        *tag = 0;
        *value = ev->num[f].i;
        return 1;
    }
    if (ev->kind[f] != V_STRING)
        return 0;
    const uint8_t *p = ev->str[f];
    Py_ssize_t n = ev->len[f], a = 0, b = n;
    for (Py_ssize_t i = 0; i < n; i++)
        if (p[i] >= 0x80) /* str.isdigit() knows digits beyond ASCII */
            return 0;
    /* ident: value.strip() (a raw JSON string's only whitespace is ' '), .lstrip("-") */
    while (a < b && p[a] == ' ')
        a++;
    while (b > a && p[b - 1] == ' ')
        b--;
    while (a < b && p[a] == '-')
        a++;
    int digits = a < b;
    for (Py_ssize_t i = a; i < b && digits; i++)
        digits = p[i] >= '0' && p[i] <= '9';
    if (digits)
        return 0;
    int32_t id = intern_string(s, p, n);
    if (id < 0)
        return -1;
    *tag = 1;
    *value = id;
    return 1;
}

/* An optional string field the columns take as it is (absent: ""). */
static int
text_ok(const Event *ev, int f)
{
    return ev->kind[f] == V_ABSENT || ev->kind[f] == V_STRING || ev->kind[f] == V_ESCAPED;
}

/* The id of field f's text (absent: ""), escapes decoded; -1 for a lone surrogate, -2 on
 * error. */
static int32_t
intern_text(Scanner *s, const Event *ev, int f)
{
    if (ev->kind[f] != V_ESCAPED) {
        int32_t id = ev->kind[f] == V_STRING ? intern_string(s, ev->str[f], ev->len[f])
                                             : intern_string(s, (const uint8_t *)"", 0);
        return id < 0 ? -2 : id;
    }
    if (ev->len[f] > s->scratch_cap) {
        uint8_t *grown = PyMem_Realloc(s->scratch, (size_t)ev->len[f]);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -2;
        }
        s->scratch = grown;
        s->scratch_cap = ev->len[f];
    }
    Py_ssize_t n = unescape(ev->str[f], ev->len[f], s->scratch);
    if (n < 0)
        return -1;
    int32_t id = intern_string(s, s->scratch, n);
    return id < 0 ? -2 : id;
}

/* Event k's columns; its class CLS_OTHER when the per-event path must read it. */
int
classify(Scanner *s, const Event *ev, Columns *c, Py_ssize_t k)
{
    c->cls[k] = CLS_OTHER;
    if (ev->duplicate || ev->kind[F_PH] != V_STRING || ev->len[F_PH] != 1)
        return 0;
    int cls;
    switch (ev->str[F_PH][0]) {
    case 'X':
        cls = CLS_SPAN;
        break;
    case 'i':
    case 'I':
        cls = CLS_INSTANT;
        break;
    case 's':
        cls = CLS_FLOW_S;
        break;
    case 't':
        cls = CLS_FLOW_T;
        break;
    case 'f':
        cls = CLS_FLOW_F;
        break;
    default:
        return 0;
    }
    const Number *ts = &ev->num[F_TS];
    if (ev->kind[F_TS] != V_NUMBER || !stamp_ok(ts) || !text_ok(ev, F_CAT))
        return 0;
    int64_t key[4] = {0, 0, 0, 0}; /* pid's tag and value (none: 0), tid's (none: pid's) */
    if (ev->kind[F_PID] != V_ABSENT) {
        int got = ident_of(s, ev, F_PID, &key[0], &key[1]);
        if (got <= 0)
            return got;
    }
    if (ev->kind[F_TID] == V_ABSENT) {
        key[2] = key[0];
        key[3] = key[1];
    }
    else {
        int got = ident_of(s, ev, F_TID, &key[2], &key[3]);
        if (got <= 0)
            return got;
    }
    uint8_t flags = ts->is_int ? FLAG_TS_INT : 0;
    int64_t end_i = ts->is_int ? ts->i : 0;
    double end_f = ts->f;
    if (cls <= CLS_INSTANT) {
        if (!text_ok(ev, F_NAME))
            return 0;
        int args = ev->kind[F_ARGS];
        if (args == V_ODD || (args == V_OBJECT && ev->args_keys.odd_key) ||
            args == V_NUMBER || args == V_STRING || args == V_ESCAPED)
            return 0;
    }
    if (cls == CLS_SPAN) {
        if (ev->kind[F_BIND] != V_ABSENT || ev->kind[F_DUR] != V_NUMBER)
            return 0;
        const Number *dur = &ev->num[F_DUR];
        if (!dur->ok)
            return 0;
        if (dur->is_int) {
            if (dur->i < 0)
                return 0;
        }
        else if (!(dur->f >= 0.0) || !(dur->f <= MAX_NUMBER))
            return 0; /* negative, NaN, out of range: counted by the per-event path */
        if (ts->is_int && dur->is_int) {
            if (ts->i > 0 && dur->i > MAX_TS_INT - ts->i)
                return 0;
            end_i = ts->i + dur->i;
            if (end_i > MAX_TS_INT || end_i < -MAX_TS_INT)
                return 0;
            end_f = (double)end_i;
            flags |= FLAG_END_INT;
        }
        else {
            end_f = ts->f + dur->f; /* Python's int + float: the int made a float first */
            if (!(fabs(end_f) <= MAX_TS_FLOAT))
                return 0;
        }
    }
    else if (cls == CLS_INSTANT) {
        if (ev->kind[F_S] == V_ESCAPED) /* an escaped scope could be "g" or "p" */
            return 0;
        if (ev->kind[F_S] == V_STRING && ev->len[F_S] == 1 &&
            (ev->str[F_S][0] == 'g' || ev->str[F_S][0] == 'p'))
            return 0;
        if (ts->is_int)
            flags |= FLAG_END_INT;
    }
    else { /* a flow point */
        if (!ident_ok(ev, F_ID))
            return 0;
        if (ev->kind[F_BP] == V_ESCAPED) /* could be "e" */
            return 0;
        if (ev->kind[F_BP] == V_STRING && ev->len[F_BP] == 1 && ev->str[F_BP][0] == 'e')
            flags |= FLAG_BP_E;
        if (ts->is_int)
            flags |= FLAG_END_INT;
        c->id[k] = ev->num[F_ID].i;
    }
    int32_t pair = intern_pair(s, key);
    if (pair < 0)
        return -1;
    int32_t cat = intern_text(s, ev, F_CAT);
    if (cat < -1)
        return -1;
    if (cat == -1) /* a lone surrogate: the per-event path reads it */
        return 0;
    int32_t name = 0;
    c->args_at[k] = c->args_used;
    c->args_len[k] = 0;
    if (cls <= CLS_INSTANT) {
        name = intern_text(s, ev, F_NAME);
        if (name < -1)
            return -1;
        if (name == -1)
            return 0;
        if (ev->kind[F_ARGS] == V_OBJECT && ev->args_keys.keys > 0) {
            memcpy(c->argbuf + c->args_used, ev->args_at, (size_t)ev->args_len);
            c->args_len[k] = ev->args_len;
            c->args_used += ev->args_len;
        }
    }
    c->cls[k] = (uint8_t)cls;
    c->flags[k] = flags;
    c->ts_i[k] = ts->is_int ? ts->i : 0;
    c->ts_f[k] = ts->f;
    c->end_i[k] = end_i;
    c->end_f[k] = end_f;
    c->name[k] = name;
    c->cat[k] = cat;
    c->pair[k] = pair;
    return 0;
}


/* The parts of profiler_core.trace._chrome_scan (the Chrome JSON import's native kernel)
 * that its files share: a strict JSON reader of one buffer (_json_text.c, _json_number.c),
 * the interning of names and (pid, tid) pairs (_chrome_intern.c), one event's fields and
 * its columns (_chrome_event.c) and the Scanner type (_chrome_scan.c). */
#ifndef PROFILER_CORE_CHROME_SCAN_H
#define PROFILER_CORE_CHROME_SCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* a reader's outcome: read, the buffer ended inside the value, not what json.loads reads */
enum { SCAN_OK = 0, SCAN_INCOMPLETE = 1, SCAN_BAD = 2 };
/* what scan() writes in the class column */
enum { CLS_SPAN = 0, CLS_INSTANT = 1, CLS_FLOW_S = 2, CLS_FLOW_T = 3, CLS_FLOW_F = 4,
       CLS_OTHER = 255 };
/* the flags column */
enum { FLAG_TS_INT = 1, FLAG_END_INT = 2, FLAG_BP_E = 4 };
/* the columns scan() fills, in the order of its tuple */
enum { C_CLS, C_FLAGS, C_TS_I, C_TS_F, C_END_I, C_END_F, C_NAME, C_CAT, C_PAIR, C_ID,
       C_ARGS_AT, C_ARGS_LEN, C_START, C_STOP, C_COUNT };
#define DEPTH_LIMIT 64

typedef struct {
    uint64_t hash;
    int32_t id; /* -1: empty */
} Slot;

typedef struct {
    Slot *slots;
    Py_ssize_t mask; /* capacity - 1 */
    Py_ssize_t used;
} Table;

typedef struct {
    PyObject_HEAD
    int max_depth;
    Table strings_table;
    char *arena; /* the interned strings' bytes */
    Py_ssize_t arena_len, arena_cap;
    Py_ssize_t *str_off, *str_len; /* per string id */
    Py_ssize_t str_cap;
    PyObject *strings; /* list: id -> str */
    Table pairs_table;
    int64_t *pair_key; /* 4 per pair id: pid's tag and value, tid's tag and value */
    Py_ssize_t pair_cap;
    PyObject *pairs; /* list: id -> (pid, tid) */
    uint8_t *scratch; /* an escaped name decoded */
    Py_ssize_t scratch_cap;
} Scanner;

typedef struct {
    int is_int;   /* no fraction, no exponent, fits int64 */
    int big_int;  /* an integer literal that does not fit int64 */
    int64_t i;
    double f;
    int ok;       /* f holds the value (may be inf: out of float's range) */
} Number;

/* What an args object held at its top level, for the kinds the fast path keeps. */
typedef struct {
    int keys;     /* how many */
    int odd_key;  /* a key with an escape, or the open-span marker */
} ObjectKeys;

typedef struct {
    uint8_t *cls, *flags;
    int64_t *ts_i, *end_i, *id, *args_at, *args_len, *start, *stop;
    double *ts_f, *end_f;
    int32_t *name, *cat, *pair;
    uint8_t *argbuf;
    Py_ssize_t args_used;
} Columns;

/* _json_text.c: strings and any JSON value, validated as json.loads reads them */
extern uint8_t IS_WS[256];
void init_tables(void);
int parse_string(const uint8_t **pp, const uint8_t *end, int *escaped);
int expect_literal(const uint8_t **pp, const uint8_t *end, const char *word, int n);
int parse_container(const uint8_t **pp, const uint8_t *end, int depth, int limit,
                    ObjectKeys *keys);
int parse_value(const uint8_t **pp, const uint8_t *end, int depth, int limit, ObjectKeys *keys);
Py_ssize_t unescape(const uint8_t *p, Py_ssize_t n, uint8_t *out);

static inline const uint8_t *
skip_ws(const uint8_t *p, const uint8_t *end)
{
    while (p < end && IS_WS[*p])
        p++;
    return p;
}

/* After an object's key: the colon and the whitespace around it; *pp left on the value. */
static inline int
skip_colon(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = skip_ws(*pp, end);
    if (p == end)
        return SCAN_INCOMPLETE;
    if (*p != ':')
        return SCAN_BAD;
    p = skip_ws(p + 1, end);
    if (p == end)
        return SCAN_INCOMPLETE;
    *pp = p;
    return SCAN_OK;
}

/* _json_number.c: a number's grammar and Python's value of it */
int parse_number(const uint8_t **pp, const uint8_t *end, Number *num, int want_value);

/* _chrome_intern.c */
int table_init(Table *t);
int32_t intern_string(Scanner *s, const uint8_t *p, Py_ssize_t n);
int32_t intern_pair(Scanner *s, const int64_t key[4]);

/* _chrome_event.c: one event object read and classed into the columns */
/* an event's fields that the columns are made of */
enum { F_PH, F_NAME, F_CAT, F_TS, F_DUR, F_PID, F_TID, F_ID, F_BP, F_S, F_ARGS, F_BIND,
       F_ID2, F_COUNT };
/* a field's value: V_ESCAPED is a string holding escapes (decoded when a name is read) */
enum { V_ABSENT = 0, V_STRING, V_ESCAPED, V_NUMBER, V_OBJECT, V_NULL, V_ODD };

typedef struct {
    int kind[F_COUNT];
    const uint8_t *str[F_COUNT]; /* a plain string's bytes (between the quotes) */
    Py_ssize_t len[F_COUNT];
    Number num[F_COUNT];
    const uint8_t *args_at; /* the args object's bytes */
    Py_ssize_t args_len;
    ObjectKeys args_keys;
    int duplicate;
} Event;

int parse_event(const uint8_t **pp, const uint8_t *end, int limit, Event *ev);
int classify(Scanner *s, const Event *ev, Columns *c, Py_ssize_t k);

#endif

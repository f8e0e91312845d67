/* profiler_core.trace._chrome_scan: the native kernel of the Chrome JSON import (issue 42).
 *
 * Scanner.scan() reads a buffer of the traceEvents array (as json_events._Events hands it:
 * it starts at the array's depth, outside strings) event by event, straight into column
 * buffers the caller preallocated: no Python object per event or field. The common events
 * (X spans, i/I thread instants, s/t/f flow points whose fields are plain: numbers, ints,
 * strings without escapes, an args object) are read into the columns; any other well-formed
 * event is marked OTHER with its byte span, for the per-event path to read as json.loads
 * does. Anything the kernel does not read exactly as json.loads would -- NaN, invalid or
 * surrogate UTF-8, control characters in strings, an item that is not an object, nesting
 * deeper than its limit, malformed JSON -- refuses the whole buffer (scan() returns None)
 * and the caller reads it as before. Every read is bounds-checked: running out of buffer
 * inside an event means the event is incomplete (it is left for the next buffer).
 *
 * Numbers are the values Python's float() gives: an exact fast path for mantissas of up to
 * 19 digits and decimal exponents within +-19 (exact 128-bit integer arithmetic, rounded
 * half to even), PyOS_string_to_double -- Python's own float parser -- for the rest. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* what scan() writes in the class column */
enum { CLS_SPAN = 0, CLS_INSTANT = 1, CLS_FLOW_S = 2, CLS_FLOW_T = 3, CLS_FLOW_F = 4,
       CLS_OTHER = 255 };
/* the flags column */
enum { FLAG_TS_INT = 1, FLAG_END_INT = 2, FLAG_BP_E = 4 };
enum { SCAN_OK = 0, SCAN_INCOMPLETE = 1, SCAN_BAD = 2 };
#define MAX_TS_INT INT64_C(9200000000000000000) /* fields.MAX_MICROSECONDS * 1000 */
#define MAX_TS_FLOAT 9.2e18
#define MAX_NUMBER 1.7e308
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
    int64_t *pair_key; /* 2 per pair id */
    Py_ssize_t pair_cap;
    PyObject *pairs; /* list: id -> (pid, tid) */
    uint8_t *scratch; /* an escaped name decoded */
    Py_ssize_t scratch_cap;
} Scanner;

/* -- byte classes ---------------------------------------------------------------------- */

static uint8_t IS_WS[256];    /* JSON whitespace */
static uint8_t STR_PLAIN[256]; /* a byte a string holds as is: not " \ control or >= 0x80 */

static void
init_tables(void)
{
    IS_WS[' '] = IS_WS['\t'] = IS_WS['\n'] = IS_WS['\r'] = 1;
    for (int c = 0x20; c < 0x80; c++)
        STR_PLAIN[c] = (c != '"' && c != '\\');
}

/* -- hash tables ----------------------------------------------------------------------- */

static uint64_t
hash_bytes(const uint8_t *p, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static uint64_t
hash_pair(int64_t a, int64_t b)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)b + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

static int
table_init(Table *t)
{
    t->mask = 255;
    t->used = 0;
    t->slots = PyMem_Malloc(sizeof(Slot) * 256);
    if (t->slots == NULL)
        return -1;
    for (int i = 0; i < 256; i++)
        t->slots[i].id = -1;
    return 0;
}

static int
table_grow(Table *t)
{
    Py_ssize_t cap = (t->mask + 1) * 2;
    Slot *slots = PyMem_Malloc(sizeof(Slot) * (size_t)cap);
    if (slots == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < cap; i++)
        slots[i].id = -1;
    for (Py_ssize_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].id < 0)
            continue;
        Py_ssize_t j = (Py_ssize_t)(t->slots[i].hash & (uint64_t)(cap - 1));
        while (slots[j].id >= 0)
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

/* The id of string ``p[:n]`` (valid UTF-8, no escapes), added when new; -1 on error. */
static int32_t
intern_string(Scanner *s, const uint8_t *p, Py_ssize_t n)
{
    Table *t = &s->strings_table;
    uint64_t h = hash_bytes(p, n);
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)t->mask);
    while (t->slots[j].id >= 0) {
        int32_t id = t->slots[j].id;
        if (t->slots[j].hash == h && s->str_len[id] == n &&
            memcmp(s->arena + s->str_off[id], p, (size_t)n) == 0)
            return id;
        j = (j + 1) & t->mask;
    }
    Py_ssize_t id = PyList_GET_SIZE(s->strings);
    if (id >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "Scanner: too many distinct names");
        return -1;
    }
    if (id >= s->str_cap) {
        Py_ssize_t cap = s->str_cap ? s->str_cap * 2 : 1024;
        Py_ssize_t *off = PyMem_Realloc(s->str_off, sizeof(Py_ssize_t) * (size_t)cap);
        if (off == NULL)
            return -1;
        s->str_off = off;
        Py_ssize_t *len = PyMem_Realloc(s->str_len, sizeof(Py_ssize_t) * (size_t)cap);
        if (len == NULL)
            return -1;
        s->str_len = len;
        s->str_cap = cap;
    }
    if (s->arena_len + n > s->arena_cap) {
        Py_ssize_t cap = s->arena_cap ? s->arena_cap : 65536;
        while (cap < s->arena_len + n)
            cap *= 2;
        char *arena = PyMem_Realloc(s->arena, (size_t)cap);
        if (arena == NULL)
            return -1;
        s->arena = arena;
        s->arena_cap = cap;
    }
    PyObject *text = PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    if (text == NULL)
        return -1;
    int rc = PyList_Append(s->strings, text);
    Py_DECREF(text);
    if (rc < 0)
        return -1;
    memcpy(s->arena + s->arena_len, p, (size_t)n);
    s->str_off[id] = s->arena_len;
    s->str_len[id] = n;
    s->arena_len += n;
    t->slots[j].hash = h;
    t->slots[j].id = (int32_t)id;
    if (++t->used * 2 > t->mask && table_grow(t) < 0)
        return -1;
    return (int32_t)id;
}

/* The id of the (pid, tid) pair, added when new; -1 on error. */
static int32_t
intern_pair(Scanner *s, int64_t pid, int64_t tid)
{
    Table *t = &s->pairs_table;
    uint64_t h = hash_pair(pid, tid);
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)t->mask);
    while (t->slots[j].id >= 0) {
        int32_t id = t->slots[j].id;
        if (s->pair_key[2 * id] == pid && s->pair_key[2 * id + 1] == tid)
            return id;
        j = (j + 1) & t->mask;
    }
    Py_ssize_t id = PyList_GET_SIZE(s->pairs);
    if (id >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "Scanner: too many distinct threads");
        return -1;
    }
    if (id >= s->pair_cap) {
        Py_ssize_t cap = s->pair_cap ? s->pair_cap * 2 : 256;
        int64_t *key = PyMem_Realloc(s->pair_key, sizeof(int64_t) * 2 * (size_t)cap);
        if (key == NULL)
            return -1;
        s->pair_key = key;
        s->pair_cap = cap;
    }
    PyObject *pair = Py_BuildValue("(LL)", (long long)pid, (long long)tid);
    if (pair == NULL)
        return -1;
    int rc = PyList_Append(s->pairs, pair);
    Py_DECREF(pair);
    if (rc < 0)
        return -1;
    s->pair_key[2 * id] = pid;
    s->pair_key[2 * id + 1] = tid;
    t->slots[j].hash = h;
    t->slots[j].id = (int32_t)id;
    if (++t->used * 2 > t->mask && table_grow(t) < 0)
        return -1;
    return (int32_t)id;
}

/* -- numbers ----------------------------------------------------------------------------- */

static const uint64_t POW10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};
static const double POW10_EXACT[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

typedef unsigned __int128 u128;

static int
bitlen64(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

static int
bitlen128(u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 64 + bitlen64(hi) : bitlen64((uint64_t)x);
}

/* ``x`` (> 0) rounded to 53 bits, half to even, ``sticky`` when bits below x were lost:
 * the double mant * 2**shift is returned through ``*out``. */
static double
round_to_double(u128 x, int sticky, int scale)
{
    int bits = bitlen128(x);
    if (bits <= 53 && !sticky)
        return ldexp((double)(uint64_t)x, scale);
    int extra = bits - 53;
    uint64_t mant;
    int up;
    if (extra <= 0) { /* bits <= 53 with sticky: cannot happen in our callers */
        return ldexp((double)(uint64_t)x, scale);
    }
    mant = (uint64_t)(x >> extra);
    u128 rest = x & (((u128)1 << extra) - 1);
    u128 half = (u128)1 << (extra - 1);
    up = rest > half || (rest == half && (sticky || (mant & 1)));
    return ldexp((double)(mant + (uint64_t)up), extra + scale);
}

/* w * 10**e10 for w < 2**64 (w > 0), |e10| <= 19: correctly rounded. */
static double
decimal_to_double(uint64_t w, int e10)
{
    if (e10 >= 0)
        return round_to_double((u128)w * POW10[e10], 0, 0);
    uint64_t p = POW10[-e10];
    int s = 56 + bitlen64(p) - bitlen64(w);
    u128 q, r;
    if (s >= 0) {
        u128 n = (u128)w << s;
        q = n / p;
        r = n % p;
    }
    else {
        u128 d = (u128)p << (-s);
        q = w / d;
        r = w % d;
    }
    /* q is in [2**55, 2**57): 53 bits and 3-4 below them, r != 0 the bits further down */
    return round_to_double(q, r != 0, -s);
}

typedef struct {
    int is_int;   /* no fraction, no exponent, fits int64 */
    int big_int;  /* an integer literal that does not fit int64 */
    int64_t i;
    double f;
    int ok;       /* f holds the value (may be inf: out of float's range) */
} Number;

/* Parse a JSON number at p (< end). SCAN_INCOMPLETE when the buffer ends inside it (its end
 * is not known), SCAN_BAD when it is not JSON's grammar. */
static int
parse_number(const uint8_t **pp, const uint8_t *end, Number *num, int want_value)
{
    const uint8_t *p = *pp, *start = p;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        if (++p == end)
            return SCAN_INCOMPLETE;
    }
    uint64_t w = 0;
    int nd = 0;        /* significant digits in w */
    int dropped = 0;   /* significant digits past 19 */
    int frac = 0;      /* digits after the point counted in w */
    const uint8_t *int_start = p;
    if (*p == '0') {
        p++;
    }
    else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            if (nd < 19) {
                w = w * 10 + (uint64_t)(*p - '0');
                nd++;
            }
            else
                dropped++;
            p++;
        }
    }
    else
        return SCAN_BAD;
    Py_ssize_t int_digits = p - int_start;
    if (p == end)
        return SCAN_INCOMPLETE;
    int has_frac = 0, has_exp = 0;
    if (*p == '.') {
        has_frac = 1;
        p++;
        const uint8_t *f0 = p;
        while (p < end && *p >= '0' && *p <= '9') {
            if (nd == 0 && *p == '0')
                frac++; /* leading zeros: only the exponent moves */
            else if (nd < 19) {
                w = w * 10 + (uint64_t)(*p - '0');
                nd++;
                frac++;
            }
            else
                dropped++; /* past 19 significant digits: Python's parser reads it */
            p++;
        }
        if (p == f0)
            return p == end ? SCAN_INCOMPLETE : SCAN_BAD;
        if (p == end)
            return SCAN_INCOMPLETE;
    }
    long exp = 0;
    if (*p == 'e' || *p == 'E') {
        has_exp = 1;
        if (++p == end)
            return SCAN_INCOMPLETE;
        int eneg = 0;
        if (*p == '+' || *p == '-') {
            eneg = *p == '-';
            if (++p == end)
                return SCAN_INCOMPLETE;
        }
        const uint8_t *e0 = p;
        while (p < end && *p >= '0' && *p <= '9') {
            if (exp < 100000)
                exp = exp * 10 + (*p - '0');
            p++;
        }
        if (p == e0)
            return SCAN_BAD;
        if (p == end)
            return SCAN_INCOMPLETE;
        if (eneg)
            exp = -exp;
    }
    /* json.loads makes an integer literal an int, which Python refuses past
     * sys.get_int_max_str_digits() digits (4300 by default; no check below 640): the
     * buffer is json.loads's to read (it skips that event as malformed) */
    if (!has_frac && !has_exp && int_digits > 640)
        return SCAN_BAD;
    *pp = p;
    num->is_int = num->big_int = num->ok = 0;
    if (!want_value)
        return SCAN_OK;
    if (!has_frac && !has_exp) {
        if (int_digits > 19 || dropped) {
            num->big_int = 1;
            return SCAN_OK;
        }
        if (w > (uint64_t)INT64_MAX + (uint64_t)neg) {
            num->big_int = 1;
            return SCAN_OK;
        }
        num->is_int = 1;
        num->i = neg ? (int64_t)(0 - w) : (int64_t)w;
        num->f = (double)num->i;
        num->ok = 1;
        return SCAN_OK;
    }
    long e10 = exp - frac;
    double v;
    if (w == 0 && !dropped) {
        v = 0.0;
    }
    else if (!dropped && w <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        v = e10 >= 0 ? (double)w * POW10_EXACT[e10] : (double)w / POW10_EXACT[-e10];
    }
    else if (!dropped && e10 >= -19 && e10 <= 19) {
        v = decimal_to_double(w, (int)e10);
    }
    else { /* Python's own parser, on the number's text */
        char small[128];
        Py_ssize_t n = p - start;
        char *text = n < (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)n + 1);
        if (text == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(text, start, (size_t)n);
        text[n] = 0;
        char *stop = NULL;
        double parsed = PyOS_string_to_double(text, &stop, NULL);
        int failed = (parsed == -1.0 && PyErr_Occurred()) || stop != text + n;
        if (text != small)
            PyMem_Free(text);
        if (failed) {
            PyErr_Clear();
            return SCAN_OK; /* ok stays 0: the event is read by the per-event path */
        }
        num->f = parsed;
        num->ok = 1;
        return SCAN_OK;
    }
    num->f = neg ? -v : v;
    num->ok = 1;
    return SCAN_OK;
}

/* -- strings and values ---------------------------------------------------------------- */

static inline int
hexdigit(uint8_t c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* A string whose opening quote is at p: *pp past its closing quote, *escaped set when it
 * holds an escape. Validates UTF-8 strictly (no surrogates: json.loads passes them, so a
 * buffer holding one is refused and read by json.loads). */
static int
parse_string(const uint8_t **pp, const uint8_t *end, int *escaped)
{
    const uint8_t *p = *pp + 1;
    int esc = 0;
    for (;;) {
        while (p < end && STR_PLAIN[*p])
            p++;
        if (p == end)
            return SCAN_INCOMPLETE;
        uint8_t c = *p;
        if (c == '"') {
            *pp = p + 1;
            *escaped = esc;
            return SCAN_OK;
        }
        if (c == '\\') {
            esc = 1;
            if (++p == end)
                return SCAN_INCOMPLETE;
            c = *p;
            if (c == 'u') {
                for (int k = 1; k <= 4; k++) {
                    if (p + k >= end)
                        return SCAN_INCOMPLETE;
                    if (!hexdigit(p[k]))
                        return SCAN_BAD;
                }
                p += 5;
            }
            else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                     c == 'r' || c == 't')
                p++;
            else
                return SCAN_BAD;
            continue;
        }
        if (c < 0x20)
            return SCAN_BAD; /* json.loads refuses control characters in strings */
        /* c >= 0x80: one UTF-8 sequence */
        int need;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            need = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F; /* no surrogates */
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        }
        else
            return SCAN_BAD;
        for (int k = 1; k <= need; k++) {
            if (p + k >= end)
                return SCAN_INCOMPLETE;
            uint8_t b = p[k];
            if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
                return SCAN_BAD;
        }
        p += need + 1;
    }
}

static inline const uint8_t *
skip_ws(const uint8_t *p, const uint8_t *end)
{
    while (p < end && IS_WS[*p])
        p++;
    return p;
}

static int
expect_literal(const uint8_t **pp, const uint8_t *end, const char *word, int n)
{
    const uint8_t *p = *pp;
    for (int k = 0; k < n; k++) {
        if (p + k >= end)
            return SCAN_INCOMPLETE;
        if (p[k] != (uint8_t)word[k])
            return SCAN_BAD;
    }
    *pp = p + n;
    return SCAN_OK;
}

/* What an args object held at its top level, for the kinds the fast path keeps. */
typedef struct {
    int keys;     /* how many */
    int odd_key;  /* a key with an escape, or the open-span marker */
} ObjectKeys;

static int parse_value(const uint8_t **pp, const uint8_t *end, int depth, int limit,
                       ObjectKeys *keys);

/* An object or array at p (its opener), validated to its closer. */
static int
parse_container(const uint8_t **pp, const uint8_t *end, int depth, int limit, ObjectKeys *keys)
{
    const uint8_t *p = *pp;
    int object = *p == '{';
    uint8_t close = object ? '}' : ']';
    if (depth > limit)
        return SCAN_BAD;
    p = skip_ws(p + 1, end);
    if (p == end)
        return SCAN_INCOMPLETE;
    if (*p == close) {
        *pp = p + 1;
        return SCAN_OK;
    }
    for (;;) {
        int rc;
        if (object) {
            if (*p != '"')
                return SCAN_BAD;
            const uint8_t *k0 = p;
            int esc;
            if ((rc = parse_string(&p, end, &esc)) != SCAN_OK)
                return rc;
            if (keys != NULL) {
                keys->keys++;
                if (esc || (p - k0 == 11 && memcmp(k0 + 1, "pvti_open", 9) == 0))
                    keys->odd_key = 1;
            }
            p = skip_ws(p, end);
            if (p == end)
                return SCAN_INCOMPLETE;
            if (*p != ':')
                return SCAN_BAD;
            p = skip_ws(p + 1, end);
            if (p == end)
                return SCAN_INCOMPLETE;
        }
        if ((rc = parse_value(&p, end, depth, limit, NULL)) != SCAN_OK)
            return rc;
        p = skip_ws(p, end);
        if (p == end)
            return SCAN_INCOMPLETE;
        if (*p == close) {
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

/* Any JSON value at p (not whitespace), validated; ``depth`` is its container's. */
static int
parse_value(const uint8_t **pp, const uint8_t *end, int depth, int limit, ObjectKeys *keys)
{
    const uint8_t *p = *pp;
    int esc;
    Number num;
    switch (*p) {
    case '"':
        return parse_string(pp, end, &esc);
    case '{':
    case '[':
        return parse_container(pp, end, depth + 1, limit, keys);
    case 't':
        return expect_literal(pp, end, "true", 4);
    case 'f':
        return expect_literal(pp, end, "false", 5);
    case 'n':
        return expect_literal(pp, end, "null", 4);
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return parse_number(pp, end, &num, 0);
        return SCAN_BAD; /* NaN, Infinity and anything else: json.loads reads the buffer */
    }
}

/* -- one event ----------------------------------------------------------------------------- */

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
static int
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
        p = skip_ws(p, end);
        if (p == end)
            return SCAN_INCOMPLETE;
        if (*p != ':')
            return SCAN_BAD;
        p = skip_ws(p + 1, end);
        if (p == end)
            return SCAN_INCOMPLETE;
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

/* -- the columns ------------------------------------------------------------------------ */

enum { C_CLS, C_FLAGS, C_TS_I, C_TS_F, C_END_I, C_END_F, C_NAME, C_CAT, C_PAIR, C_ID,
       C_ARGS_AT, C_ARGS_LEN, C_START, C_STOP, C_COUNT };
static const Py_ssize_t ITEMSIZE[C_COUNT] = {1, 1, 8, 8, 8, 8, 4, 4, 4, 8, 8, 8, 8, 8};

typedef struct {
    uint8_t *cls, *flags;
    int64_t *ts_i, *end_i, *id, *args_at, *args_len, *start, *stop;
    double *ts_f, *end_f;
    int32_t *name, *cat, *pair;
    uint8_t *argbuf;
    Py_ssize_t args_used;
} Columns;

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

/* An optional string field the columns take as it is (absent: ""). */
static int
text_ok(const Event *ev, int f)
{
    return ev->kind[f] == V_ABSENT || ev->kind[f] == V_STRING || ev->kind[f] == V_ESCAPED;
}

static uint32_t
hex4(const uint8_t *p)
{
    uint32_t u = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        u = u * 16 + (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return u;
}

/* The body p[:n] of a string parse_string validated (escapes complete, UTF-8 strict)
 * decoded as json.loads decodes it, written as UTF-8 to out (n bytes suffice: an escape
 * never decodes to more bytes than it takes); its length, or -1 when it holds a lone
 * surrogate (Python keeps one in a str: no UTF-8 bytes to intern). */
static Py_ssize_t
unescape(const uint8_t *p, Py_ssize_t n, uint8_t *out)
{
    const uint8_t *end = p + n;
    Py_ssize_t o = 0;
    while (p < end) {
        if (*p != '\\') {
            out[o++] = *p++;
            continue;
        }
        uint8_t c = p[1];
        p += 2;
        switch (c) {
        case 'b':
            out[o++] = '\b';
            continue;
        case 'f':
            out[o++] = '\f';
            continue;
        case 'n':
            out[o++] = '\n';
            continue;
        case 'r':
            out[o++] = '\r';
            continue;
        case 't':
            out[o++] = '\t';
            continue;
        case 'u':
            break;
        default: /* " \ / */
            out[o++] = c;
            continue;
        }
        uint32_t u = hex4(p);
        p += 4;
        if (u >= 0xDC00 && u <= 0xDFFF)
            return -1;
        if (u >= 0xD800 && u <= 0xDBFF) { /* a pair, as json.loads joins it */
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return -1;
            uint32_t low = hex4(p + 2);
            if (low < 0xDC00 || low > 0xDFFF)
                return -1;
            u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
            p += 6;
        }
        if (u < 0x80)
            out[o++] = (uint8_t)u;
        else if (u < 0x800) {
            out[o++] = (uint8_t)(0xC0 | (u >> 6));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        }
        else if (u < 0x10000) {
            out[o++] = (uint8_t)(0xE0 | (u >> 12));
            out[o++] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        }
        else {
            out[o++] = (uint8_t)(0xF0 | (u >> 18));
            out[o++] = (uint8_t)(0x80 | ((u >> 12) & 0x3F));
            out[o++] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        }
    }
    return o;
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
static int
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
    if ((ev->kind[F_PID] != V_ABSENT && !ident_ok(ev, F_PID)) ||
        (ev->kind[F_TID] != V_ABSENT && !ident_ok(ev, F_TID)))
        return 0;
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
    int64_t pid = ev->kind[F_PID] == V_ABSENT ? 0 : ev->num[F_PID].i;
    int64_t tid = ev->kind[F_TID] == V_ABSENT ? pid : ev->num[F_TID].i;
    int32_t pair = intern_pair(s, pid, tid);
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

/* -- the type ----------------------------------------------------------------------------- */

static int
scanner_init(Scanner *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"max_depth", NULL};
    int max_depth = 200;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:Scanner", names, &max_depth))
        return -1;
    if (self->strings != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner: already initialised");
        return -1;
    }
    self->max_depth = max_depth;
    self->strings = PyList_New(0);
    self->pairs = PyList_New(0);
    if (self->strings == NULL || self->pairs == NULL)
        return -1;
    if (table_init(&self->strings_table) < 0 || table_init(&self->pairs_table) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int
scanner_traverse(Scanner *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->strings);
    Py_VISIT(self->pairs);
    return 0;
}

static int
scanner_clear(Scanner *self)
{
    Py_CLEAR(self->strings);
    Py_CLEAR(self->pairs);
    return 0;
}

static void
scanner_dealloc(Scanner *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    scanner_clear(self);
    PyMem_Free(self->strings_table.slots);
    PyMem_Free(self->pairs_table.slots);
    PyMem_Free(self->arena);
    PyMem_Free(self->str_off);
    PyMem_Free(self->str_len);
    PyMem_Free(self->pair_key);
    PyMem_Free(self->scratch);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* scan(buf, columns, argbuf) -> (events, keep_from, array_end, args_used) or None. */
static PyObject *
scanner_scan(Scanner *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "scan() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    if (self->strings == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner: not initialised");
        return NULL;
    }
    if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != C_COUNT) {
        PyErr_Format(PyExc_TypeError, "scan(): columns must be a tuple of %d buffers", C_COUNT);
        return NULL;
    }
    Py_buffer in, views[C_COUNT], argview;
    int got = 0, have_in = 0, have_args = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(args[0], &in, PyBUF_SIMPLE) < 0)
        return NULL;
    have_in = 1;
    const uint8_t *buf = in.buf, *end = buf + in.len;
    Py_ssize_t cap = in.len / 2 + 1; /* the most events a buffer can hold: {} each */
    for (; got < C_COUNT; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(args[1], got), &views[got],
                               PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        if (views[got].len < cap * ITEMSIZE[got]) {
            got++;
            PyErr_Format(PyExc_ValueError, "scan(): column %d holds %zd bytes, %zd needed",
                         got - 1, views[got - 1].len, cap * ITEMSIZE[got - 1]);
            goto done;
        }
    }
    if (PyObject_GetBuffer(args[2], &argview, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    have_args = 1;
    if (argview.len < in.len) {
        PyErr_SetString(PyExc_ValueError, "scan(): argbuf smaller than the buffer");
        goto done;
    }
    Columns c = {
        .cls = views[C_CLS].buf, .flags = views[C_FLAGS].buf,
        .ts_i = views[C_TS_I].buf, .ts_f = views[C_TS_F].buf,
        .end_i = views[C_END_I].buf, .end_f = views[C_END_F].buf,
        .name = views[C_NAME].buf, .cat = views[C_CAT].buf, .pair = views[C_PAIR].buf,
        .id = views[C_ID].buf, .args_at = views[C_ARGS_AT].buf,
        .args_len = views[C_ARGS_LEN].buf, .start = views[C_START].buf,
        .stop = views[C_STOP].buf, .argbuf = argview.buf, .args_used = 0,
    };
    int limit = self->max_depth < DEPTH_LIMIT ? self->max_depth : DEPTH_LIMIT;
    const uint8_t *p = buf;
    Py_ssize_t n = 0, keep_from = 0, array_end = -1;
    Event ev;
    for (;;) {
        while (p < end && (IS_WS[*p] || *p == ','))
            p++;
        if (p == end)
            break;
        if (*p == ']') {
            array_end = p - buf;
            break;
        }
        if (*p != '{' || n >= cap || limit < 1)
            goto refused;
        const uint8_t *at = p;
        int rc = parse_event(&p, end, limit, &ev);
        if (rc < 0)
            goto done;
        if (rc == SCAN_INCOMPLETE) {
            keep_from = at - buf;
            break;
        }
        if (rc == SCAN_BAD)
            goto refused;
        if (classify(self, &ev, &c, n) < 0)
            goto done;
        c.start[n] = at - buf;
        c.stop[n] = p - buf;
        n++;
        keep_from = p - buf;
    }
    result = Py_BuildValue("(nnnn)", n, keep_from, array_end, c.args_used);
    goto done;
refused:
    result = Py_NewRef(Py_None);
done:
    if (have_in)
        PyBuffer_Release(&in);
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&views[k]);
    if (have_args)
        PyBuffer_Release(&argview);
    return result;
}

static PyMethodDef scanner_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scanner_scan, METH_FASTCALL,
     "scan(buf, columns, argbuf): the events complete in buf read into the columns; "
     "(events, keep_from, array_end, args_used), or None when buf is not read here."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef scanner_members[] = {
    {"strings", T_OBJECT, offsetof(Scanner, strings), READONLY,
     "the names and categories met, by id (a list of str)"},
    {"pairs", T_OBJECT, offsetof(Scanner, pairs), READONLY,
     "the (pid, tid) pairs met, by id (a list of tuples)"},
    {"max_depth", T_INT, offsetof(Scanner, max_depth), READONLY, "the nesting limit"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot scanner_slots[] = {
    {Py_tp_doc, "Scanner(max_depth=200): reads Chrome trace events into columns."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, scanner_init},
    {Py_tp_dealloc, scanner_dealloc},
    {Py_tp_traverse, scanner_traverse},
    {Py_tp_clear, scanner_clear},
    {Py_tp_methods, scanner_methods},
    {Py_tp_members, scanner_members},
    {0, NULL},
};

static PyType_Spec scanner_spec = {
    .name = "profiler_core.trace._chrome_scan.Scanner",
    .basicsize = sizeof(Scanner),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = scanner_slots,
};

/* parse_float(text) -> float | None: the kernel's number reader on one JSON number (for
 * the tests: every value must be Python's float() of the same text). */
static PyObject *
parse_float(PyObject *module, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    /* a delimiter after the number: the parser needs one to know the number ended */
    uint8_t *text = PyMem_Malloc((size_t)in.len + 1);
    if (text == NULL) {
        PyBuffer_Release(&in);
        return PyErr_NoMemory();
    }
    memcpy(text, in.buf, (size_t)in.len);
    text[in.len] = ',';
    const uint8_t *p = text;
    Number num;
    int rc = in.len > 0 ? parse_number(&p, text + in.len + 1, &num, 1) : SCAN_BAD;
    int whole = p == text + in.len;
    PyMem_Free(text);
    PyBuffer_Release(&in);
    if (rc < 0)
        return NULL;
    if (rc != SCAN_OK || !whole || !num.ok)
        Py_RETURN_NONE;
    if (num.is_int)
        return PyLong_FromLongLong(num.i);
    return PyFloat_FromDouble(num.f);
}

static PyMethodDef module_methods[] = {
    {"parse_float", parse_float, METH_O,
     "parse_float(text: bytes) -> int | float | None: one JSON number as the kernel reads it."},
    {NULL, NULL, 0, NULL},
};

static int
module_exec(PyObject *module)
{
    init_tables();
    PyObject *type = PyType_FromModuleAndSpec(module, &scanner_spec, NULL);
    if (type == NULL)
        return -1;
    int rc = PyModule_AddObjectRef(module, "Scanner", type);
    Py_DECREF(type);
    if (rc < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "OTHER", CLS_OTHER) < 0 ||
        PyModule_AddIntConstant(module, "COLUMNS", C_COUNT) < 0 ||
        PyModule_AddIntConstant(module, "DEPTH_LIMIT", DEPTH_LIMIT) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef chrome_scan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "profiler_core.trace._chrome_scan",
    .m_doc = "The native kernel of the Chrome JSON import (see chrome_native.py).",
    .m_size = 0,
    .m_slots = module_slots,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__chrome_scan(void)
{
    return PyModuleDef_Init(&chrome_scan_module);
}

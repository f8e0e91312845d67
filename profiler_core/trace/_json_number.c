/* A JSON number's grammar, and the value Python's float() / int() gives it. */
#include "_chrome_scan.h"

#include <math.h>
#include <string.h>

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

/* Parse a JSON number at p (< end). SCAN_INCOMPLETE when the buffer ends inside it (its end
 * is not known), SCAN_BAD when it is not JSON's grammar. */
int
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


/* Strings and any JSON value of one buffer, validated exactly as json.loads reads them
 * (strict UTF-8 without surrogates, no control characters, JSON's escapes and literals);
 * never a byte read past ``end``: a value cut by it is SCAN_INCOMPLETE. */
#include "_chrome_scan.h"

#include <math.h>
#include <string.h>

/* -- byte classes ---------------------------------------------------------------------- */

uint8_t IS_WS[256];    /* JSON whitespace */
static uint8_t STR_PLAIN[256]; /* a byte a string holds as is: not " \ control or >= 0x80 */

void
init_tables(void)
{
    IS_WS[' '] = IS_WS['\t'] = IS_WS['\n'] = IS_WS['\r'] = 1;
    for (int c = 0x20; c < 0x80; c++)
        STR_PLAIN[c] = (c != '"' && c != '\\');
}

/* -- strings and values ---------------------------------------------------------------- */

static int
hexdigit(uint8_t c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* A string whose opening quote is at p: *pp past its closing quote, *escaped set when it
 * holds an escape. Validates UTF-8 strictly (no surrogates: json.loads passes them, so a
 * buffer holding one is refused and read by json.loads). */
int
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

int
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

/* An object or array at p (its opener), validated to its closer. */
int
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
            if ((rc = skip_colon(&p, end)) != SCAN_OK)
                return rc;
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
int
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
Py_ssize_t
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


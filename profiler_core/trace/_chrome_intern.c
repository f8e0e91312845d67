/* Names, categories and (pid, tid) pairs interned for the whole import: open addressing
 * over the bytes (names) or the two ints, each new one made a Python object once. */
#include "_chrome_scan.h"

#include <math.h>
#include <string.h>

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

int
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
int32_t
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
int32_t
intern_pair(Scanner *s, const int64_t key[4])
{
    Table *t = &s->pairs_table;
    uint64_t h = hash_pair(key[1] ^ (key[0] << 62), key[3] ^ (key[2] << 62));
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)t->mask);
    while (t->slots[j].id >= 0) {
        int32_t id = t->slots[j].id;
        if (memcmp(s->pair_key + 4 * id, key, 4 * sizeof(int64_t)) == 0)
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
        int64_t *keys = PyMem_Realloc(s->pair_key, sizeof(int64_t) * 4 * (size_t)cap);
        if (keys == NULL)
            return -1;
        s->pair_key = keys;
        s->pair_cap = cap;
    }
    /* each id an int, or (tag 1) the string of that id, as fields.ident reads them */
    PyObject *ids[2];
    for (int k = 0; k < 2; k++) {
        int64_t tag = key[2 * k], value = key[2 * k + 1];
        ids[k] = tag ? Py_NewRef(PyList_GET_ITEM(s->strings, (Py_ssize_t)value))
                     : PyLong_FromLongLong((long long)value);
        if (ids[k] == NULL) {
            if (k)
                Py_DECREF(ids[0]);
            return -1;
        }
    }
    PyObject *pair = PyTuple_Pack(2, ids[0], ids[1]);
    Py_DECREF(ids[0]);
    Py_DECREF(ids[1]);
    if (pair == NULL)
        return -1;
    int rc = PyList_Append(s->pairs, pair);
    Py_DECREF(pair);
    if (rc < 0)
        return -1;
    memcpy(s->pair_key + 4 * id, key, 4 * sizeof(int64_t));
    t->slots[j].hash = h;
    t->slots[j].id = (int32_t)id;
    if (++t->used * 2 > t->mask && table_grow(t) < 0)
        return -1;
    return (int32_t)id;
}


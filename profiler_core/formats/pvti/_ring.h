/* The tracepoints' record ring, as C code writes it: the layout of a RingBase object
 * (profiler_core/formats/pvti/_ring.c) and the one inline function that appends a record.
 * ring.py's RECORD and RECORD_DTYPE are the same 64-byte little-endian record:
 * (start_ns, end_ns, tid, seq, point, depth, 24 bytes of padding). */
#ifndef PVTI_RING_H
#define PVTI_RING_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#if PY_BIG_ENDIAN
#error "the .pvti record ring is little-endian; this machine is not"
#endif

#define PVTI_RECORD_SIZE 64

typedef struct {
    PyObject_HEAD
    PyObject *buf;      /* the bytearray of records, locked against resizing by view */
    Py_buffer view;
    char *data;         /* NULL until __init__ */
    int64_t mask;       /* a claimed byte offset's place in the ring: offset & mask */
    int64_t claimed;    /* the byte offset the next record takes */
    int64_t limit_at;   /* a record claimed at this offset or later calls relieve */
    PyObject *relieve;
} PvtiRing;

/* Appends one record; nonzero when the ring asks the caller to call ring->relieve().
 * The sequence number (offset + 1) is written last: a commit takes a slot as written
 * only once it carries its own offset's sequence. The caller holds the GIL. */
static inline int
pvti_ring_put(PvtiRing *ring, int64_t start_ns, int64_t end_ns, int64_t tid, int32_t point,
              int32_t depth)
{
    int64_t at = ring->claimed;
    char *record = ring->data + (at & ring->mask);
    int64_t seq = at + 1;
    ring->claimed = at + PVTI_RECORD_SIZE;
    memcpy(record, &start_ns, 8);
    memcpy(record + 8, &end_ns, 8);
    memcpy(record + 16, &tid, 8);
    memcpy(record + 32, &point, 4);
    memcpy(record + 36, &depth, 4);
    memcpy(record + 24, &seq, 8);
    return at >= ring->limit_at;
}

#endif

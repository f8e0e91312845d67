/* The C tracepoints' shared declarations: the types (a channel's fields, a Tracepoint, a
 * thread's stack of open spans), the process's recording state, and the inline steps of the
 * hot path. _tracepoint.c is the module and the Tracepoint type, _thread_stack.c the
 * per-thread stacks, _channel.c the channel's fields, _traced_call.c a traced function; the
 * ring is profiler_core's _ring.h. */
#ifndef PVTI_TRACEPOINT_H
#define PVTI_TRACEPOINT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <time.h>

#include "_ring.h"

typedef struct {
    PyObject_HEAD
    PyObject *name;
    PyObject *tracepoints; /* label -> Tracepoint */
    char enabled;
} PvtiChannel;

typedef struct {
    PyObject_HEAD
    PvtiChannel *channel;
    PyObject *label;
    int32_t point; /* 2 * the (channel, label) id; + 1 for an instant */
} PvtiTracepoint;

typedef struct {
    PyObject_HEAD
    PyObject *weakreflist;
    int64_t tid;
    PyObject *ring; /* the ring the open entries belong to (None: none yet) */
    Py_ssize_t depth, cap;
    PvtiTracepoint **points; /* entry k: points[k] begun at starts[k] at depth depths[k] */
    int64_t *starts;
    int32_t *depths;
} PvtiStack;

extern PyTypeObject PvtiChannelType, PvtiTracepointType, PvtiStackType, PvtiTracedCallType;

/* The writer's ring while recording, else NULL (the hot path's one check). */
extern PvtiRing *pvti_current_ring;
/* The last thread's stack, borrowed from its thread-state dict: a thread-state id is never
 * reused, so while the id matches the calling thread, its dict still holds the stack. */
extern uint64_t pvti_cached_thread;
extern PvtiStack *pvti_cached_stack;

/* _thread_stack.c */
int pvti_stack_ready(void);
PyObject *pvti_set_stack_hook(PyObject *module, PyObject *hook);
PvtiStack *pvti_stack_lookup(int create);
void pvti_stack_reset(PvtiStack *st, PyObject *ring);
int pvti_stack_grow(PvtiStack *st);
void pvti_stack_remove(PvtiStack *st, Py_ssize_t k);

/* The calling thread's stack; made (and handed to the stack hook) when `create`, else NULL
 * when it has none. NULL with an exception set on failure. */
static inline PvtiStack *
pvti_current_stack(int create)
{
    if (pvti_cached_stack != NULL &&
        PyThreadState_GetID(PyThreadState_Get()) == pvti_cached_thread)
        return pvti_cached_stack;
    return pvti_stack_lookup(create);
}

static inline int64_t
pvti_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* time.monotonic_ns()'s clock */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Entry k of the stack as a finished span (the entry stays: the caller removes it);
 * nonzero when the ring asks for pvti_relieve. */
static inline int
pvti_record(PvtiRing *ring, PvtiStack *st, Py_ssize_t k, int64_t end_ns)
{
    return pvti_ring_put(ring, st->starts[k], end_ns, st->tid, st->points[k]->point,
                         st->depths[k]);
}

/* The ring is nearly full: its relieve() commits it. -1 with an exception on failure. */
static inline int
pvti_relieve(PvtiRing *ring)
{
    Py_INCREF(ring); /* relieve() may stop the recording (set_ring(None)) */
    PyObject *r = PyObject_CallNoArgs(ring->relieve);
    Py_DECREF(ring);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* A span of `tp` begins on the calling thread (Tracepoint.__enter__). -1 on failure. */
static inline int
pvti_span_begin(PvtiTracepoint *tp)
{
    PvtiRing *ring = pvti_current_ring;
    if (ring == NULL || !tp->channel->enabled)
        return 0;
    PvtiStack *st = pvti_current_stack(1);
    if (st == NULL)
        return -1;
    if (st->ring != (PyObject *)ring)
        pvti_stack_reset(st, (PyObject *)ring); /* spans left from an earlier writer go */
    Py_ssize_t d = st->depth;
    if (d == st->cap && pvti_stack_grow(st) < 0)
        return -1;
    st->starts[d] = pvti_now_ns();
    Py_INCREF(tp);
    st->points[d] = tp;
    st->depths[d] = (int32_t)d;
    st->depth = d + 1;
    return 0;
}

/* The calling thread's span of `tp` ends: one record (Tracepoint.__exit__). -1 on failure
 * (the ring's relieve() raised). */
static inline int
pvti_span_end(PvtiTracepoint *tp)
{
    PvtiRing *ring = pvti_current_ring;
    if (ring == NULL)
        return 0;
    PvtiStack *st = pvti_current_stack(0);
    if (st == NULL)
        return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t d = st->depth - 1;
    if (d < 0 || st->ring != (PyObject *)ring)
        return 0;
    int full;
    if (st->points[d] == tp) {
        /* Recorded before popped: a commit (which holds the GIL) sees it open or done. */
        full = pvti_record(ring, st, d, pvti_now_ns());
        st->depth = d;
        st->points[d] = NULL;
        Py_DECREF(tp); /* the caller holds another reference */
    }
    else {
        /* Ended below the top (spans of interleaved coroutines end out of order). */
        Py_ssize_t k = d;
        while (k >= 0 && st->points[k] != tp)
            k--;
        if (k < 0)
            return 0;
        full = pvti_record(ring, st, k, pvti_now_ns());
        pvti_stack_remove(st, k);
    }
    return full ? pvti_relieve(ring) : 0;
}

#endif

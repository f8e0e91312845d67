/* A compute set's kept work run on every core without the GIL: the "team".
 *
 * A kept plan's pieces (plan_parts) are compiled once into steps that C runs alone
 * (_team.h, _team_steps.c: BLAS products through numpy's own OpenBLAS, copies, blanks,
 * biases, depthwise sums, element-wise operations, bounds, partials), so the caller
 * releases the GIL once per compute set, and helper threads (native, started once) take
 * pieces as the caller does, never waiting for the GIL. A helper that ran a piece watches
 * for the next compute set's work for a short while (SPIN_NS) before it sleeps: a sleeping
 * one is woken in ~50 us on this kind of machine, a watching one at once.
 *
 * A job is published under ``lock`` (``current``, a new ``generation``, ``open_job``);
 * a helper joins it only while it is open, counted in ``inside``, and the caller closes
 * it and waits for ``inside`` to empty before its job (on its stack) goes away. */
#include "_team.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_HELPERS 64
#define SPIN_NS 300000 /* how long a helper watches for work before it sleeps */

typedef struct {
    PyObject_HEAD
    Step *steps;
    Py_ssize_t *starts; /* piece p is steps [starts[p], starts[p + 1]) */
    Py_ssize_t pieces, count; /* pieces, steps */
    PyObject *kept;           /* the arrays the steps point into, kept alive */
} Plan;

static void
plan_dealloc(Plan *self)
{
    for (Py_ssize_t i = 0; i < self->count; i++)
        team_step_free(&self->steps[i]);
    free(self->steps);
    free(self->starts);
    Py_XDECREF(self->kept);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *plan_run(Plan *self, PyObject *args);

static PyMethodDef plan_methods[] = {
    {"run", (PyCFunction)plan_run, METH_VARARGS,
     "run(threads, *others): this plan's pieces and the others', on up to ``threads`` "
     "threads (this one and helpers)"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
plan_pieces(Plan *self, void *closure)
{
    return PyLong_FromSsize_t(self->pieces);
}

static PyObject *
plan_steps(Plan *self, void *closure)
{
    PyObject *kinds = PyList_New(0);
    for (Py_ssize_t p = 0; kinds && p < self->pieces; p++) {
        PyObject *piece = PyTuple_New(self->starts[p + 1] - self->starts[p]);
        if (piece == NULL || PyList_Append(kinds, piece) < 0) {
            Py_XDECREF(piece);
            Py_CLEAR(kinds);
            break;
        }
        Py_DECREF(piece);
        for (Py_ssize_t i = self->starts[p]; i < self->starts[p + 1]; i++)
            PyTuple_SET_ITEM(piece, i - self->starts[p],
                             PyUnicode_FromString(team_step_name(self->steps[i].kind)));
    }
    return kinds;
}

static PyGetSetDef plan_getset[] = {
    {"pieces", (getter)plan_pieces, NULL, "how many pieces", NULL},
    {"steps", (getter)plan_steps, NULL, "each piece's steps by kind", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ipu_engine.codelets._kernels.TeamPlan",
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A kept plan's pieces compiled into steps that C runs without the GIL.",
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_methods = plan_methods,
    .tp_getset = plan_getset,
};

/* team_plan(pieces): pieces a sequence of sequences of steps, each step (kind, *args):
 * ("gemm", a, b, c) c = a @ b as numpy makes it; ("add", out, other) out += other;
 * ("copy", destination, source); ("zero", rows, indexes) rows[:, indexes] = 0;
 * ("depthwise", x, w, bias, out, top, left, stride_h, stride_w, dilation_h, dilation_w).
 * All float32 views; raises where C would not compute what the Python call does. */
static PyObject *
team_plan(PyObject *module, PyObject *arg)
{
    PyObject *pieces = PySequence_Fast(arg, "team_plan: a sequence of pieces is needed");
    if (pieces == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(pieces), total = 0;
    Plan *plan = PyObject_New(Plan, &PlanType);
    if (plan == NULL) {
        Py_DECREF(pieces);
        return NULL;
    }
    plan->steps = NULL, plan->starts = NULL, plan->pieces = 0, plan->count = 0;
    plan->kept = PyList_New(0);
    plan->starts = calloc((size_t)count + 1, sizeof(Py_ssize_t));
    if (plan->kept == NULL || plan->starts == NULL)
        goto fail;
    for (Py_ssize_t p = 0; p < count; p++) {
        Py_ssize_t n = PyObject_Length(PySequence_Fast_GET_ITEM(pieces, p));
        if (n < 0)
            goto fail;
        total += n;
    }
    plan->steps = calloc((size_t)(total ? total : 1), sizeof(Step));
    if (plan->steps == NULL)
        goto fail;
    plan->count = total;
    Py_ssize_t at = 0;
    for (Py_ssize_t p = 0; p < count; p++) {
        PyObject *steps = PySequence_Fast(PySequence_Fast_GET_ITEM(pieces, p), "a piece");
        if (steps == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(steps) && at < total; i++, at++) {
            if (team_step_compile(&plan->steps[at], PySequence_Fast_GET_ITEM(steps, i), plan->kept) <
                0) {
                Py_DECREF(steps);
                goto fail;
            }
        }
        Py_DECREF(steps);
        plan->starts[p + 1] = at;
    }
    if (at != total) {
        PyErr_SetString(PyExc_RuntimeError, "team_plan: a piece changed while it was read");
        goto fail;
    }
    plan->pieces = count;
    Py_DECREF(pieces);
    return (PyObject *)plan;
fail:
    Py_DECREF(pieces);
    Py_DECREF(plan);
    return NULL;
}

/* ---- the team ------------------------------------------------------------------- */

typedef struct {
    Plan *const *plans;
    Py_ssize_t plan_count, count; /* plans, pieces in all */
    atomic_long next; /* the next piece to take */
    atomic_int failed;
} Job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int helpers;              /* started; under ``lock`` */
static atomic_ulong generation;  /* a new job each time: helpers watch it */
static atomic_ulong open_job;    /* the generation of the job helpers may join, or 0 */
static atomic_int inside;        /* helpers in a job now */
static Job *current;
static atomic_long helped; /* pieces the helpers have run, ever */

static inline void
relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Where the caller runs (as its last job began) and where a helper took its last piece:
 * a thread waiting for the other gives up its CPU only when the two share it. The
 * scheduler sometimes wakes a helper on its caller's CPU and leaves it there, and a
 * thread spinning there keeps the other waiting for a time slice: the MobileNet block ran
 * 1.23 ms a run with the two on one CPU against one thread's 0.9 (0.88 yielding). Where a
 * thread of another process shares the CPU instead (onnxruntime's spinning pool, run side
 * by side), yielding would hand it the CPU: there a waiting thread only pauses (yielding
 * always, the block ran 0.94-1.15 ms beside onnxruntime against 0.61-0.72). */
static atomic_int caller_cpu = -1, helper_cpu = -1;

/* One turn of waiting for a thread that runs on ``other_cpu``. */
static inline void
wait_for(int other_cpu)
{
    if (other_cpu >= 0 && sched_getcpu() == other_cpu)
        sched_yield();
    else
        relax();
}

static long long
now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Takes the job's next piece until none is left. */
static void
work(Job *job, int helper)
{
    for (;;) {
        long p = atomic_fetch_add(&job->next, 1);
        if (p >= job->count)
            return;
        if (helper) /* where the caller may wait for this piece */
            atomic_store(&helper_cpu, sched_getcpu());
        Py_ssize_t k = 0;
        while (p >= job->plans[k]->pieces) /* the piece's plan */
            p -= job->plans[k++]->pieces;
        const Plan *plan = job->plans[k];
        for (Py_ssize_t i = plan->starts[p]; i < plan->starts[p + 1]; i++)
            if (team_step_run(&plan->steps[i]) < 0)
                atomic_store(&job->failed, 1);
        if (helper)
            atomic_fetch_add(&helped, 1);
    }
}

static void *
helper_main(void *unused)
{
    unsigned long seen = atomic_load(&generation);
    for (;;) {
        unsigned long now = atomic_load(&generation);
        long long since = now_ns();
        while (now == seen) { /* watch for work a while, then sleep */
            if (now_ns() - since > SPIN_NS) {
                pthread_mutex_lock(&lock);
                while ((now = atomic_load(&generation)) == seen)
                    pthread_cond_wait(&wake, &lock);
                pthread_mutex_unlock(&lock);
                break;
            }
            wait_for(atomic_load(&caller_cpu)); /* a caller on this CPU runs at once */
            now = atomic_load(&generation);
        }
        seen = now;
        atomic_fetch_add(&inside, 1);
        if (atomic_load(&open_job) == seen) /* else that job has ended: never touch it */
            work(current, 1);
        atomic_fetch_sub(&inside, 1);
    }
    return unused;
}

/* Helpers up to ``wanted`` (started once, never stopped); how many there are. */
static int
start_helpers(int wanted)
{
    pthread_mutex_lock(&lock);
    while (helpers < wanted && helpers < MAX_HELPERS) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attr, helper_main, NULL);
        pthread_attr_destroy(&attr);
        if (failed)
            break;
        helpers++;
    }
    int started = helpers;
    pthread_mutex_unlock(&lock);
    return started;
}

static void
after_fork_in_child(void)
{ /* a forked child has none of the parent's threads */
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    helpers = 0;
    atomic_store(&open_job, 0);
    atomic_store(&inside, 0);
}

/* Runs ``job``: alone, or with the helpers. Called without the GIL. */
static void
run_job(Job *job, int threads)
{
    if (threads < 2 || job->count < 2 || start_helpers(threads - 1) < 1) {
        work(job, 0);
        return;
    }
    atomic_store(&caller_cpu, sched_getcpu());
    pthread_mutex_lock(&lock);
    current = job;
    unsigned long gen = atomic_fetch_add(&generation, 1) + 1;
    if (gen == 0) /* 0 means no job */
        gen = atomic_fetch_add(&generation, 1) + 1;
    atomic_store(&open_job, gen);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    work(job, 0); /* returns once every piece is taken */
    atomic_store(&open_job, 0);
    while (atomic_load(&inside) > 0) /* the helpers' last pieces: each leaves after its own */
        wait_for(atomic_load(&helper_cpu));
}

static PyObject *
plan_run(Plan *self, PyObject *args)
{
    Py_ssize_t given = PyTuple_GET_SIZE(args);
    int threads;
    if (given < 1 || !PyArg_Parse(PyTuple_GET_ITEM(args, 0), "i", &threads))
        return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_TypeError, "run(threads, *others)"), NULL);
    Plan *plans[64];
    if (given > 64) {
        PyErr_SetString(PyExc_ValueError, "run: at most 63 other plans");
        return NULL;
    }
    plans[0] = self;
    Py_ssize_t count = self->pieces;
    for (Py_ssize_t i = 1; i < given; i++) {
        PyObject *other = PyTuple_GET_ITEM(args, i);
        if (!PyObject_TypeCheck(other, &PlanType)) {
            PyErr_SetString(PyExc_TypeError, "run: the others are team plans");
            return NULL;
        }
        plans[i] = (Plan *)other;
        count += plans[i]->pieces;
    }
    Job job = {.plans = plans, .plan_count = given, .count = count};
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    Py_BEGIN_ALLOW_THREADS
    run_job(&job, threads);
    Py_END_ALLOW_THREADS
    if (atomic_load(&job.failed))
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* set_sgemm(address): numpy's OpenBLAS cblas_sgemm (64-bit integers), by address. */
static PyObject *
team_set_sgemm(PyObject *module, PyObject *arg)
{
    void *address = PyLong_AsVoidPtr(arg);
    if (address == NULL && PyErr_Occurred())
        return NULL;
    sgemm = (SgemmFn)address;
    Py_RETURN_NONE;
}

static PyObject *
team_helpers(PyObject *module, PyObject *unused)
{
    pthread_mutex_lock(&lock);
    int count = helpers;
    pthread_mutex_unlock(&lock);
    return PyLong_FromLong(count);
}

static PyObject *
team_helped(PyObject *module, PyObject *unused)
{
    return PyLong_FromLong(atomic_load(&helped));
}

PyMethodDef team_methods[] = {
    {"team_plan", team_plan, METH_O, "team_plan(pieces) -> TeamPlan (see _team.c)"},
    {"set_sgemm", team_set_sgemm, METH_O, "set_sgemm(address): the BLAS product steps call"},
    {"team_helpers", team_helpers, METH_NOARGS, "helper threads started"},
    {"team_helped", team_helped, METH_NOARGS, "pieces the helper threads have run"},
    {NULL, NULL, 0, NULL},
};

int
team_init(PyObject *module)
{
    static int forked_handler;
    if (!forked_handler && pthread_atfork(NULL, NULL, after_fork_in_child) == 0)
        forked_handler = 1;
    if (PyType_Ready(&PlanType) < 0)
        return -1;
    Py_INCREF(&PlanType);
    if (PyModule_AddObject(module, "TeamPlan", (PyObject *)&PlanType) < 0) {
        Py_DECREF(&PlanType);
        return -1;
    }
    return PyModule_AddFunctions(module, team_methods);
}

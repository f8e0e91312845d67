/* The team's steps: see _team.h. A product is the cblas_sgemm call numpy's matmul makes
 * for the same views (numpy's umath/matmul.c.src: its transposes, leading dimensions and
 * the transposed form when the output's rows are its columns); a step is refused where
 * numpy would take another path (a vector, a matrix times its own transpose, operands
 * BLAS cannot read). Element-wise steps are one IEEE float32 operation an element (built
 * without fused multiply-adds), as numpy's loops. */
#include "_team.h"

#include <stdlib.h>
#include <string.h>

SgemmFn sgemm;

/* ---- the steps ------------------------------------------------------------------- */

static void
run_zeros(const Zeros *z)
{
    for (Py_ssize_t r = 0; r < z->count; r++) {
        float *row = (float *)(z->rows + r * z->step);
        for (Py_ssize_t i = 0; i < z->zeros; i++)
            row[z->at[i]] = 0.0f;
    }
}

KERNEL_CLONES static void
binary_run(int op, float *out, const float *a, const float *b, Py_ssize_t n)
{ /* one IEEE operation an element, as numpy's float32 loops (a or b may be out) */
    switch (op) {
    case OP_ADD:
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = a[i] + b[i];
        break;
    case OP_SUBTRACT:
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = a[i] - b[i];
        break;
    case OP_MULTIPLY:
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = a[i] * b[i];
        break;
    default:
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = a[i] / b[i];
    }
}

static inline float
binary_one(int op, float a, float b)
{
    return op == OP_ADD ? a + b : op == OP_SUBTRACT ? a - b : op == OP_MULTIPLY ? a * b : a / b;
}

/* out = a op b over one shape, rows of the innermost axis at a time (a contiguous row of
 * all three one vectorised run, a broadcast operand's row a run of one value). */
static void
run_binary(const Strided *out, const Strided *a, const Strided *b, int op)
{
    int ndim = out->ndim, inner = ndim - 1;
    for (int k = 0; k < ndim; k++)
        if (out->shape[k] == 0)
            return;
    if (ndim == 0) {
        *(float *)out->data = binary_one(op, *(const float *)a->data, *(const float *)b->data);
        return;
    }
    Py_ssize_t n = out->shape[inner], os = out->strides[inner];
    Py_ssize_t as = a->strides[inner], bs = b->strides[inner];
    const Py_ssize_t f = sizeof(float);
    float row_a[256], row_b[256];
    Py_ssize_t index[STRIDED_MAX_DIMS] = {0};
    for (;;) {
        Py_ssize_t oo = 0, ao = 0, bo = 0;
        for (int k = 0; k < inner; k++) {
            oo += index[k] * out->strides[k];
            ao += index[k] * a->strides[k];
            bo += index[k] * b->strides[k];
        }
        char *dst = out->data + oo;
        const char *pa = a->data + ao, *pb = b->data + bo;
        if (os == f && (as == f || as == 0) && (bs == f || bs == 0)) {
            Py_ssize_t width = n < 256 ? n : 256; /* a broadcast value as a row of it */
            for (Py_ssize_t i = 0; !as && i < width; i++)
                row_a[i] = *(const float *)pa;
            for (Py_ssize_t i = 0; !bs && i < width; i++)
                row_b[i] = *(const float *)pb;
            for (Py_ssize_t at = 0; at < n; at += 256) {
                Py_ssize_t m = n - at < 256 ? n - at : 256;
                const float *ra = as ? (const float *)pa + at : row_a;
                const float *rb = bs ? (const float *)pb + at : row_b;
                binary_run(op, (float *)dst + at, ra, rb, m);
            }
        } else {
            for (Py_ssize_t i = 0; i < n; i++)
                *(float *)(dst + i * os) =
                    binary_one(op, *(const float *)(pa + i * as), *(const float *)(pb + i * bs));
        }
        if (!strided_next_outer(index, out->shape, inner))
            return;
    }
}

/* 0, or -1 when a depthwise step could not allocate its plane */
int
team_step_run(const Step *s)
{
    switch (s->kind) {
    case GEMM: {
        const Gemm *g = &s->u.gemm;
        sgemm(ROW_MAJOR, g->trans_a, g->trans_b, g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b,
              g->ldb, 0.0f, g->c, g->ldc);
        return 0;
    }
    case ADD:
        add_into(&s->u.pair.a, &s->u.pair.b);
        return 0;
    case COPY:
        strided_copy(&s->u.pair.a, &s->u.pair.b);
        return 0;
    case ZERO:
        run_zeros(&s->u.zero);
        return 0;
    case BINARY:
        run_binary(&s->u.map.out, &s->u.map.a, &s->u.map.b, s->u.map.op);
        return 0;
    case BOUND:
        bound(&s->u.map.a, &s->u.map.out, s->u.map.c, s->u.map.op);
        return 0;
    case PARTIALS:
        sum_partials(&s->u.map.a, &s->u.map.out);
        return 0;
    case DEPTHWISE: {
        const typeof(s->u.depthwise) *d = &s->u.depthwise;
        return depthwise_sums(&d->x, &d->w, d->has_bias ? &d->bias : NULL, &d->out, &d->geometry)
                   ? -1
                   : 0;
    }
    }
    return 0;
}

/* ---- compiling a plan ------------------------------------------------------------ */

/* A Strided view of ``obj`` kept without its buffer (the plan keeps ``obj`` alive). */
static int
view_of(PyObject *obj, Strided *out, int ndim, int writable, int optional, const char *what)
{
    if (strided_array(obj, out, ndim, 'f', writable, optional, what) < 0)
        return -1;
    if (out->data != NULL) {
        char *data = out->data;
        PyBuffer_Release(&out->buffer);
        memset(&out->buffer, 0, sizeof(out->buffer));
        out->data = data;
    }
    return 0;
}

/* numpy's is_blasable2d: rows ``s1`` bytes apart holding ``d2`` contiguous items. */
static int
blasable(Py_ssize_t s1, Py_ssize_t s2, Py_ssize_t d2)
{
    const Py_ssize_t item = sizeof(float);
    return s2 == item && s1 % item == 0 && s1 / item >= d2;
}

/* The product numpy's matmul_matrixmatrix makes of a [m, n] by b [n, p] into c [m, p]
 * (byte strides), or -1 when it would make syrk's. */
static int
matrix_matrix(Gemm *g, const char *a, Py_ssize_t a_m, Py_ssize_t a_n, const char *b,
              Py_ssize_t b_n, Py_ssize_t b_p, char *c, Py_ssize_t c_m, Py_ssize_t m,
              Py_ssize_t n, Py_ssize_t p)
{
    const Py_ssize_t item = sizeof(float);
    g->ldc = c_m / item;
    if (blasable(a_m, a_n, n)) {
        g->trans_a = NO_TRANS;
        g->lda = a_m / item;
    } else {
        g->trans_a = TRANS;
        g->lda = a_n / item;
    }
    if (blasable(b_n, b_p, p)) {
        g->trans_b = NO_TRANS;
        g->ldb = b_n / item;
    } else {
        g->trans_b = TRANS;
        g->ldb = b_p / item;
    }
    if (a == b && m == p && a_m == b_p && a_n == b_n && g->trans_a != g->trans_b)
        return -1;
    g->m = m, g->n = p, g->k = n;
    g->a = (const float *)a, g->b = (const float *)b, g->c = (float *)c;
    return 0;
}

static int
compile_gemm(Step *s, PyObject *args)
{
    PyObject *ao, *bo, *co;
    if (!PyArg_ParseTuple(args, "OOO", &ao, &bo, &co))
        return -1;
    Strided a, b, c;
    if (view_of(ao, &a, 2, 0, 0, "gemm: a") < 0 || view_of(bo, &b, 2, 0, 0, "gemm: b") < 0 ||
        view_of(co, &c, 2, 1, 0, "gemm: c") < 0)
        return -1;
    Py_ssize_t m = a.shape[0], n = a.shape[1], p = b.shape[1];
    if (b.shape[0] != n || c.shape[0] != m || c.shape[1] != p) {
        PyErr_SetString(PyExc_ValueError, "gemm: shapes do not agree");
        return -1;
    }
    Py_ssize_t a_m = a.strides[0], a_n = a.strides[1], b_n = b.strides[0], b_p = b.strides[1];
    Py_ssize_t c_m = c.strides[0], c_p = c.strides[1];
    if (m < 2 || n < 2 || p < 2 || !(blasable(a_m, a_n, n) || blasable(a_n, a_m, m)) ||
        !(blasable(b_n, b_p, p) || blasable(b_p, b_n, n)) ||
        !(blasable(c_m, c_p, p) || blasable(c_p, c_m, m))) {
        PyErr_SetString(PyExc_ValueError, "gemm: numpy would not make one BLAS product of these");
        return -1;
    }
    s->kind = GEMM;
    int refused;
    if ((c_m < 0 ? -c_m : c_m) < (c_p < 0 ? -c_p : c_p)) /* c's rows are its columns */
        refused = matrix_matrix(&s->u.gemm, b.data, b_p, b_n, a.data, a_n, a_m, c.data, c_p, p,
                                n, m);
    else
        refused = matrix_matrix(&s->u.gemm, a.data, a_m, a_n, b.data, b_n, b_p, c.data, c_m, m,
                                n, p);
    if (refused) {
        PyErr_SetString(PyExc_ValueError, "gemm: numpy would make this product with syrk");
        return -1;
    }
    return 0;
}

static int
compile_pair(Step *s, int kind, PyObject *args)
{
    PyObject *ao, *bo;
    if (!PyArg_ParseTuple(args, "OO", &ao, &bo))
        return -1;
    Strided *a = &s->u.pair.a, *b = &s->u.pair.b;
    const char *what = kind == ADD ? "add: out" : "copy: destination";
    if (view_of(ao, a, -1, 1, 0, what) < 0 ||
        view_of(bo, b, a->ndim, 0, 0, kind == ADD ? "add: other" : "copy: source") < 0 ||
        strided_same_dims(a, 0, b, 0, a->ndim, what) < 0)
        return -1;
    s->kind = kind;
    return 0;
}

static int
compile_zeros(Step *s, PyObject *args)
{
    PyObject *ro, *io;
    if (!PyArg_ParseTuple(args, "OO", &ro, &io))
        return -1;
    Strided rows;
    if (view_of(ro, &rows, 2, 1, 0, "zero: rows") < 0)
        return -1;
    Py_buffer at;
    if (PyObject_GetBuffer(io, &at, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    int ok = at.itemsize == 8 && at.format && strchr("qlQL", at.format[strlen(at.format) - 1]);
    Py_ssize_t count = ok ? at.len / 8 : 0;
    const int64_t *found = at.buf;
    for (Py_ssize_t i = 0; ok && i < count; i++)
        ok = found[i] >= 0 && found[i] < rows.shape[1];
    if (ok && rows.strides[1] != (Py_ssize_t)sizeof(float))
        ok = 0;
    if (!ok) {
        PyBuffer_Release(&at);
        PyErr_SetString(PyExc_ValueError,
                        "zero: int64 indexes within contiguous rows of float32 are needed");
        return -1;
    }
    Zeros *z = &s->u.zero;
    z->at = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (z->at == NULL) {
        PyBuffer_Release(&at);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(z->at, found, (size_t)count * sizeof(int64_t));
    PyBuffer_Release(&at);
    z->rows = rows.data, z->count = rows.shape[0], z->step = rows.strides[0], z->zeros = count;
    s->kind = ZERO;
    return 0;
}

static int
compile_depthwise(Step *s, PyObject *args)
{
    PyObject *xo, *wo, *bo, *oo;
    DepthwiseGeometry *geo = &s->u.depthwise.geometry;
    if (!PyArg_ParseTuple(args, "OOOOnnnnnn", &xo, &wo, &bo, &oo, &geo->top, &geo->left,
                          &geo->stride_h, &geo->stride_w, &geo->dilation_h, &geo->dilation_w))
        return -1;
    Strided *x = &s->u.depthwise.x, *w = &s->u.depthwise.w, *b = &s->u.depthwise.bias,
            *out = &s->u.depthwise.out;
    if (view_of(xo, x, -1, 0, 0, "depthwise: x") < 0)
        return -1;
    int lead = x->ndim - 3;
    if (lead < 0 || lead + 4 > STRIDED_MAX_DIMS) {
        PyErr_SetString(PyExc_ValueError, "depthwise: x is [*lead, H, W, G]");
        return -1;
    }
    if (view_of(wo, w, lead + 4, 0, 0, "depthwise: w") < 0 ||
        view_of(bo, b, lead + 2, 0, 1, "depthwise: bias") < 0 ||
        view_of(oo, out, lead + 4, 1, 0, "depthwise: out") < 0)
        return -1;
    if (strided_same_dims(x, 0, w, 0, lead, "depthwise: w") < 0 ||
        strided_same_dims(x, 0, out, 0, lead, "depthwise: out") < 0 ||
        strided_same_dims(x, lead + 2, w, lead + 2, 1, "depthwise: w's groups") < 0 ||
        strided_same_dims(w, lead + 2, out, lead, 2, "depthwise: out's groups") < 0)
        return -1;
    s->u.depthwise.has_bias = b->data != NULL;
    if (b->data && (strided_same_dims(x, 0, b, 0, lead, "depthwise: bias") < 0 ||
                    strided_same_dims(w, lead + 2, b, lead, 2, "depthwise: bias") < 0))
        return -1;
    if (geo->top < 0 || geo->left < 0 || geo->stride_h < 1 || geo->stride_w < 1 ||
        geo->dilation_h < 1 || geo->dilation_w < 1) {
        PyErr_SetString(PyExc_ValueError, "depthwise: padding >= 0, strides and dilations >= 1");
        return -1;
    }
    s->kind = DEPTHWISE;
    return 0;
}

/* ("binary", op, out, a, b): out = a op b, op 0-3 (add, subtract, multiply, divide), one
 * shape (a and b may be broadcast, or out itself). */
static int
compile_binary(Step *s, PyObject *args)
{
    PyObject *oo, *ao, *bo;
    int op;
    if (!PyArg_ParseTuple(args, "iOOO", &op, &oo, &ao, &bo))
        return -1;
    if (op < OP_ADD || op > OP_DIVIDE) {
        PyErr_SetString(PyExc_ValueError, "binary: op is 0-3 (add, subtract, multiply, divide)");
        return -1;
    }
    Strided *out = &s->u.map.out, *a = &s->u.map.a, *b = &s->u.map.b;
    if (view_of(oo, out, -1, 1, 0, "binary: out") < 0 ||
        view_of(ao, a, out->ndim, 0, 0, "binary: a") < 0 ||
        view_of(bo, b, out->ndim, 0, 0, "binary: b") < 0 ||
        strided_same_dims(out, 0, a, 0, out->ndim, "binary: a") < 0 ||
        strided_same_dims(out, 0, b, 0, out->ndim, "binary: b") < 0)
        return -1;
    s->u.map.op = op;
    s->kind = BINARY;
    return 0;
}

/* ("bound", x, out, c, maximum): out = np.maximum(x, c) (or np.minimum), as kernels.bound. */
static int
compile_bound(Step *s, PyObject *args)
{
    PyObject *xo, *oo;
    int maximum;
    float c;
    if (!PyArg_ParseTuple(args, "OOfp", &xo, &oo, &c, &maximum))
        return -1;
    Strided *x = &s->u.map.a, *out = &s->u.map.out;
    if (view_of(xo, x, -1, 0, 0, "bound: x") < 0 ||
        view_of(oo, out, x->ndim, 1, 0, "bound: out") < 0 ||
        strided_same_dims(x, 0, out, 0, x->ndim, "bound: out") < 0)
        return -1;
    s->u.map.op = maximum, s->u.map.c = c;
    s->kind = BOUND;
    return 0;
}

/* ("partials", partials [D, N], out [N]): out = partial 0 + 1 + ..., as kernels.sum_partials. */
static int
compile_partials(Step *s, PyObject *args)
{
    PyObject *po, *oo;
    if (!PyArg_ParseTuple(args, "OO", &po, &oo))
        return -1;
    Strided *partials = &s->u.map.a, *out = &s->u.map.out;
    if (view_of(po, partials, 2, 0, 0, "partials: partials") < 0 ||
        view_of(oo, out, 1, 1, 0, "partials: out") < 0 ||
        strided_same_dims(partials, 1, out, 0, 1, "partials: out") < 0)
        return -1;
    if (partials->shape[0] < 1) {
        PyErr_SetString(PyExc_ValueError, "partials: at least one partial is needed");
        return -1;
    }
    s->kind = PARTIALS;
    return 0;
}

int
team_step_compile(Step *s, PyObject *item, PyObject *kept)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 1 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(item, 0))) {
        PyErr_SetString(PyExc_TypeError, "a step is a tuple (kind, *arguments)");
        return -1;
    }
    const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
    PyObject *args = PyTuple_GetSlice(item, 1, PyTuple_GET_SIZE(item));
    if (kind == NULL || args == NULL) {
        Py_XDECREF(args);
        return -1;
    }
    int rc;
    if (strcmp(kind, "gemm") == 0) {
        rc = sgemm ? compile_gemm(s, args) : -1;
        if (!sgemm)
            PyErr_SetString(PyExc_RuntimeError, "gemm: no BLAS product was given (set_sgemm)");
    } else if (strcmp(kind, "add") == 0)
        rc = compile_pair(s, ADD, args);
    else if (strcmp(kind, "copy") == 0)
        rc = compile_pair(s, COPY, args);
    else if (strcmp(kind, "zero") == 0)
        rc = compile_zeros(s, args);
    else if (strcmp(kind, "depthwise") == 0)
        rc = compile_depthwise(s, args);
    else if (strcmp(kind, "binary") == 0)
        rc = compile_binary(s, args);
    else if (strcmp(kind, "bound") == 0)
        rc = compile_bound(s, args);
    else if (strcmp(kind, "partials") == 0)
        rc = compile_partials(s, args);
    else {
        PyErr_Format(PyExc_ValueError, "no step is called %R", PyTuple_GET_ITEM(item, 0));
        rc = -1;
    }
    if (rc == 0 && PyList_Append(kept, args) < 0)
        rc = -1;
    Py_DECREF(args);
    return rc;
}

void
team_step_free(Step *s)
{
    if (s->kind == ZERO) /* a step is ZERO once compiled */
        free(s->u.zero.at);
}

const char *
team_step_name(int kind)
{
    static const char *names[] = {"gemm",      "add",    "copy",  "zero",
                                  "depthwise", "binary", "bound", "partials"};
    return kind >= 0 && kind <= PARTIALS ? names[kind] : "?";
}

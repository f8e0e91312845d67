/* A depthwise convolution's sums (one input channel per group), as the ConvPartial
 * vertex adds them: for each output pixel, 0 + the products of its window and the
 * kernel, kernel row by kernel row, column by column, each product rounded to float32
 * and then added; the bias added to the sum last.
 *
 * Each group's input plane is first copied into a zero-padded contiguous plane (the
 * padding's products are 0 * w, as the vertex's), so that one kernel position's inputs
 * for consecutive outputs are consecutive: 16 outputs' sums are kept in one vector
 * register while every kernel position is added. At stride 1 a row of sums is as wide as
 * the plane (its last columns thrown away), so one run covers every row. The sums of up
 * to CHUNK channels are made before any is written, so that an output whose channels are
 * innermost (NHWC) is written a pixel's channels at a time, not one element per cache
 * line. */
#include "_kernels.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 16 /* output channels summed before they are written */
#define LANES 16 /* outputs per vector of sums */

typedef float Lanes __attribute__((vector_size(LANES * sizeof(float))));

typedef struct {
    Py_ssize_t height, width, groups, outs, kh, kw, rows, cols;
    Py_ssize_t plane_h, plane_w; /* the padded plane: every window inside it */
    Py_ssize_t span;             /* sums per output row: plane_w at stride 1, else cols */
} Sizes;

/* plane = the zero-padded copy of one group's input [H, W] at ``x`` (byte strides). */
static void
fill_plane(float *plane, const char *x, Py_ssize_t row_step, Py_ssize_t col_step,
           const Sizes *s, const DepthwiseGeometry *g)
{
    memset(plane, 0, (size_t)(s->plane_h * s->plane_w) * sizeof(float));
    Py_ssize_t cols = s->width < s->plane_w - g->left ? s->width : s->plane_w - g->left;
    for (Py_ssize_t i = 0; i < s->height && i + g->top < s->plane_h; i++) {
        float *row = plane + (i + g->top) * s->plane_w + g->left;
        const char *src = x + i * row_step;
        if (col_step == (Py_ssize_t)sizeof(float))
            memcpy(row, src, (size_t)(cols > 0 ? cols : 0) * sizeof(float));
        else
            for (Py_ssize_t j = 0; j < cols; j++)
                row[j] = *(const float *)(src + j * col_step);
    }
}

/* sums[i] = 0 + first[i * step + taps' offsets[0]] * weights[0] + ..., i < n: each
 * output's products added in the kernel's order. */
static inline __attribute__((always_inline)) void
tap_sums(float *restrict sums, const float *restrict first, Py_ssize_t step,
         const Py_ssize_t *offsets, const float *weights, Py_ssize_t taps, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (step == 1) { /* four vectors at a time: their additions overlap */
        for (; i + 4 * LANES <= n; i += 4 * LANES) {
            Lanes a0 = {0.0f}, a1 = {0.0f}, a2 = {0.0f}, a3 = {0.0f};
            for (Py_ssize_t t = 0; t < taps; t++) {
                const float *in = first + i + offsets[t];
                Lanes v0, v1, v2, v3;
                memcpy(&v0, in, sizeof(v0));
                memcpy(&v1, in + LANES, sizeof(v1));
                memcpy(&v2, in + 2 * LANES, sizeof(v2));
                memcpy(&v3, in + 3 * LANES, sizeof(v3));
                a0 = a0 + v0 * weights[t];
                a1 = a1 + v1 * weights[t];
                a2 = a2 + v2 * weights[t];
                a3 = a3 + v3 * weights[t];
            }
            memcpy(sums + i, &a0, sizeof(a0));
            memcpy(sums + i + LANES, &a1, sizeof(a1));
            memcpy(sums + i + 2 * LANES, &a2, sizeof(a2));
            memcpy(sums + i + 3 * LANES, &a3, sizeof(a3));
        }
        for (; i + LANES <= n; i += LANES) {
            Lanes acc = {0.0f};
            for (Py_ssize_t t = 0; t < taps; t++) {
                Lanes window;
                memcpy(&window, first + i + offsets[t], sizeof(window));
                acc = acc + window * weights[t];
            }
            memcpy(sums + i, &acc, sizeof(acc));
        }
    }
    for (; i < n; i++) {
        float acc = 0.0f;
        for (Py_ssize_t t = 0; t < taps; t++)
            acc = acc + first[i * step + offsets[t]] * weights[t];
        sums[i] = acc;
    }
}

/* The sums [rows, span] of one output channel of one group's plane. */
KERNEL_CLONES static void
channel_sums(float *sums, const float *plane, const Py_ssize_t *offsets, const float *weights,
             const Sizes *s, const DepthwiseGeometry *g)
{
    Py_ssize_t taps = s->kh * s->kw;
    if (g->stride_h == 1 && g->stride_w == 1) {
        tap_sums(sums, plane, 1, offsets, weights, taps, s->rows * s->plane_w);
        return;
    }
    for (Py_ssize_t r = 0; r < s->rows; r++)
        tap_sums(sums + r * s->span, plane + r * g->stride_h * s->plane_w, g->stride_w, offsets,
                 weights, taps, s->cols);
}

/* out[k, r, c] = sums[k][r * span + c] (+ biases[k]) for the chunk's ``count``
 * channels, channel k at byte offset ``offsets[k]``: row by row when a row is
 * contiguous, else pixel by pixel (the chunk's channels together). */
KERNEL_CLONES static void
write_chunk(char *out, const Py_ssize_t *offsets, Py_ssize_t count, const Py_ssize_t *steps,
            const float *sums, const float *biases, const Sizes *s)
{
    Py_ssize_t plane = s->rows * s->span, row_step = steps[0], col_step = steps[1];
    Py_ssize_t k_step = count > 1 ? offsets[1] - offsets[0] : 0;
    int pixels_first = count > 1 && (k_step < 0 ? -k_step : k_step) < col_step;
    if (!pixels_first) {
        for (Py_ssize_t k = 0; k < count; k++) {
            float bias = biases != NULL ? biases[k] : 0.0f;
            for (Py_ssize_t r = 0; r < s->rows; r++) {
                const float *src = sums + k * plane + r * s->span;
                char *dst = out + offsets[k] + r * row_step;
                if (col_step == (Py_ssize_t)sizeof(float)) { /* a contiguous row */
                    float *row = (float *)dst;
                    for (Py_ssize_t c = 0; c < s->cols; c++)
                        row[c] = biases != NULL ? src[c] + bias : src[c];
                } else if (biases != NULL)
                    for (Py_ssize_t c = 0; c < s->cols; c++)
                        *(float *)(dst + c * col_step) = src[c] + bias;
                else
                    for (Py_ssize_t c = 0; c < s->cols; c++)
                        *(float *)(dst + c * col_step) = src[c];
            }
        }
        return;
    }
    /* CHUNK channels side by side in memory (an NHWC output): 16 pixels of them at a
     * time are transposed in registers and written a pixel's channels at a time */
    int side_by_side = count == CHUNK && CHUNK == 16;
    for (Py_ssize_t k = 1; side_by_side && k < count; k++)
        side_by_side = offsets[k] - offsets[0] == k * (Py_ssize_t)sizeof(float);
    Row16 bias16 = {0.0f};
    if (side_by_side && biases != NULL)
        memcpy(&bias16, biases, sizeof(bias16));
    for (Py_ssize_t r = 0; r < s->rows; r++) {
        Py_ssize_t c = 0;
        for (; side_by_side && c + 16 <= s->cols; c += 16) {
            Row16 tile[16];
            for (int k = 0; k < 16; k++)
                memcpy(&tile[k], sums + k * plane + r * s->span + c, sizeof(Row16));
            transpose16(tile); /* tile[j]: the channels of pixel c + j */
            char *dst = out + offsets[0] + r * row_step + c * col_step;
            for (int j = 0; j < 16; j++) {
                Row16 pixel = biases != NULL ? tile[j] + bias16 : tile[j];
                memcpy(dst + j * col_step, &pixel, sizeof(pixel));
            }
        }
        for (; c < s->cols; c++) {
            char *dst = out + r * row_step + c * col_step;
            const float *src = sums + r * s->span + c;
            if (biases != NULL)
                for (Py_ssize_t k = 0; k < count; k++)
                    *(float *)(dst + offsets[k]) = src[k * plane] + biases[k];
            else
                for (Py_ssize_t k = 0; k < count; k++)
                    *(float *)(dst + offsets[k]) = src[k * plane];
        }
    }
}

typedef struct {
    float *plane, *sums, *weights, *biases;
    Py_ssize_t *taps, *offsets;
    Py_ssize_t *lead; /* [count, 4]: each lead index's byte offsets into x, w, bias, out */
} Scratch;

/* The output planes [first, first + count), plane P being lead index P / (G x F), group
 * P / F % G, channel P % F: their sums, then written together. */
static void
chunk(const Strided *x, const Strided *w, const Strided *bias, const Strided *out,
      Py_ssize_t first, Py_ssize_t count, const Sizes *s, const DepthwiseGeometry *g,
      Scratch *m)
{
    int lead = x->ndim - 3;
    Py_ssize_t taps = s->kh * s->kw, plane = s->rows * s->span, filled = -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t p = first + k, f = p % s->outs, grp = p / s->outs % s->groups;
        Py_ssize_t v = p / (s->outs * s->groups);
        const Py_ssize_t *at = m->lead + 4 * v;
        if (p / s->outs != filled) {
            fill_plane(m->plane, x->data + at[0] + grp * x->strides[lead + 2], x->strides[lead],
                       x->strides[lead + 1], s, g);
            filled = p / s->outs;
        }
        for (Py_ssize_t t = 0; t < taps; t++) {
            Py_ssize_t a = t / s->kw, b = t % s->kw;
            m->weights[t] = *(const float *)(w->data + at[1] + a * w->strides[lead] +
                                             b * w->strides[lead + 1] +
                                             grp * w->strides[lead + 2] +
                                             f * w->strides[lead + 3]);
        }
        if (bias != NULL)
            m->biases[k] = *(const float *)(bias->data + at[2] + grp * bias->strides[lead] +
                                            f * bias->strides[lead + 1]);
        m->offsets[k] = at[3] + grp * out->strides[lead] + f * out->strides[lead + 1];
        channel_sums(m->sums + k * plane, m->plane, m->taps, m->weights, s, g);
    }
    write_chunk(out->data, m->offsets, count, &out->strides[lead + 2], m->sums,
                bias != NULL ? m->biases : NULL, s);
}

int
depthwise_sums(const Strided *x, const Strided *w, const Strided *bias, const Strided *out,
               const DepthwiseGeometry *g)
{
    int lead = x->ndim - 3;
    Sizes s = {
        .height = x->shape[lead], .width = x->shape[lead + 1], .groups = x->shape[lead + 2],
        .kh = w->shape[lead], .kw = w->shape[lead + 1], .outs = w->shape[lead + 3],
        .rows = out->shape[lead + 2], .cols = out->shape[lead + 3],
    };
    Py_ssize_t count = 1;
    for (int k = 0; k < lead; k++)
        count *= x->shape[k];
    if (count == 0 || s.groups == 0 || s.outs == 0 || s.rows == 0 || s.cols == 0)
        return 0;
    s.plane_h = (s.rows - 1) * g->stride_h + (s.kh - 1) * g->dilation_h + 1;
    s.plane_w = (s.cols - 1) * g->stride_w + (s.kw - 1) * g->dilation_w + 1;
    s.span = g->stride_h == 1 && g->stride_w == 1 ? s.plane_w : s.cols;
    Py_ssize_t taps = s.kh * s.kw;
    /* at stride 1 the last row's span reaches (kw - 1) * dilation_w past the plane */
    Py_ssize_t tail = (s.kw - 1) * g->dilation_w;
    Scratch m = {
        .plane = calloc((size_t)(s.plane_h * s.plane_w + tail), sizeof(float)),
        .sums = malloc((size_t)(CHUNK * s.rows * s.span) * sizeof(float)),
        .weights = malloc((size_t)taps * sizeof(float)),
        .biases = malloc(CHUNK * sizeof(float)),
        .taps = malloc((size_t)taps * sizeof(Py_ssize_t)),
        .offsets = malloc(CHUNK * sizeof(Py_ssize_t)),
        .lead = malloc((size_t)(4 * count) * sizeof(Py_ssize_t)),
    };
    int failed = !m.plane || !m.sums || !m.weights || !m.biases || !m.taps || !m.offsets ||
                 !m.lead;
    if (!failed) {
        for (Py_ssize_t t = 0; t < taps; t++)
            m.taps[t] = (t / s.kw) * g->dilation_h * s.plane_w + (t % s.kw) * g->dilation_w;
        Py_ssize_t index[STRIDED_MAX_DIMS] = {0};
        for (Py_ssize_t v = 0; v < count; v++) {
            Py_ssize_t *at = m.lead + 4 * v;
            at[0] = at[1] = at[2] = at[3] = 0;
            for (int k = 0; k < lead; k++) {
                at[0] += index[k] * x->strides[k];
                at[1] += index[k] * w->strides[k];
                at[2] += bias != NULL ? index[k] * bias->strides[k] : 0;
                at[3] += index[k] * out->strides[k];
            }
            for (int k = lead - 1; k >= 0; k--) { /* the next lead index, last fastest */
                if (++index[k] < x->shape[k])
                    break;
                index[k] = 0;
            }
        }
        Py_ssize_t planes = count * s.groups * s.outs;
        for (Py_ssize_t first = 0; first < planes; first += CHUNK)
            chunk(x, w, bias, out, first, planes - first < CHUNK ? planes - first : CHUNK, &s, g,
                  &m);
    }
    free(m.plane), free(m.sums), free(m.weights), free(m.biases), free(m.taps), free(m.offsets);
    free(m.lead);
    return failed ? -1 : 0;
}

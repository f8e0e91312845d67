/* A strided copy in tiles. numpy copies a transposed view element by element in one
 * array's order, so the other is read or written a cache line per element; here the two
 * innermost axes of source and destination (each one's smallest stride) are walked in
 * square tiles, so both are read and written a line at a time. Other axes are walked in
 * the destination's order. */
#include "_strided.h"

#include <string.h>

#define TILE 16 /* the transpose in registers is 16 x 16 */

static int
smallest_stride_axis(const Strided *a, int skip)
{
    int best = -1;
    for (int k = 0; k < a->ndim; k++) {
        if (k == skip || a->shape[k] < 2)
            continue;
        Py_ssize_t s = a->strides[k] < 0 ? -a->strides[k] : a->strides[k];
        Py_ssize_t bs = best < 0 ? 0 : (a->strides[best] < 0 ? -a->strides[best] : a->strides[best]);
        if (best < 0 || s < bs)
            best = k;
    }
    return best;
}

#define COPY_TILE(type)                                                                    \
    for (Py_ssize_t i = 0; i < ni; i++)                                                    \
        for (Py_ssize_t j = 0; j < nj; j++)                                                \
            *(type *)(d + i * dsi + j * dsj) = *(const type *)(s + i * ssi + j * ssj);

/* dst[i, j] = src[i, j] over an ni x nj tile. */
static void
copy_tile(char *d, Py_ssize_t dsi, Py_ssize_t dsj, const char *s, Py_ssize_t ssi,
          Py_ssize_t ssj, Py_ssize_t ni, Py_ssize_t nj, Py_ssize_t itemsize)
{
    switch (itemsize) {
    case 1: COPY_TILE(uint8_t) break;
    case 2: COPY_TILE(uint16_t) break;
    case 4: COPY_TILE(uint32_t) break;
    case 8: COPY_TILE(uint64_t) break;
    default:
        for (Py_ssize_t i = 0; i < ni; i++)
            for (Py_ssize_t j = 0; j < nj; j++)
                memcpy(d + i * dsi + j * dsj, s + i * ssi + j * ssj, (size_t)itemsize);
    }
}

typedef float Row16 __attribute__((vector_size(16 * sizeof(float))));
typedef int32_t Lane16 __attribute__((vector_size(16 * sizeof(int32_t))));

#define LOW8 {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}
#define HIGH8 {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}
#define LOW4 {0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27}
#define HIGH4 {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}
#define LOW2 {0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29}
#define HIGH2 {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}
#define LOW1 {0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30}
#define HIGH1 {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}

/* One butterfly stage: the off-diagonal d x d blocks of every 2d x 2d block swapped. */
#define STAGE(r, d, low, high)                                                             \
    for (int i = 0; i < 16; i++) {                                                         \
        if (i & (d))                                                                       \
            continue;                                                                      \
        Row16 a = r[i], b = r[i + (d)];                                                    \
        r[i] = __builtin_shuffle(a, b, (Lane16)low);                                       \
        r[i + (d)] = __builtin_shuffle(a, b, (Lane16)high);                                \
    }

/* r[i][j] <-> r[j][i] for a 16 x 16 tile in registers: four butterfly stages. */
static inline __attribute__((always_inline)) void
transpose16(Row16 *r)
{
    STAGE(r, 8, LOW8, HIGH8)
    STAGE(r, 4, LOW4, HIGH4)
    STAGE(r, 2, LOW2, HIGH2)
    STAGE(r, 1, LOW1, HIGH1)
}

/* Every tile of one (i, j) plane: dst[i, j] = src[i, j]. A whole 16 x 16 tile of 4-byte
 * items whose source is contiguous along i and destination along j (a transpose) goes
 * through registers: 16 rows read, transposed, 16 rows written. */
KERNEL_CLONES static void
copy_plane(char *d, Py_ssize_t dsi, Py_ssize_t dsj, const char *s, Py_ssize_t ssi,
           Py_ssize_t ssj, Py_ssize_t ni, Py_ssize_t nj, Py_ssize_t itemsize)
{
    int registers = itemsize == 4 && ssi == 4 && dsj == 4;
    for (Py_ssize_t i0 = 0; i0 < ni; i0 += TILE) {
        Py_ssize_t ti = ni - i0 < TILE ? ni - i0 : TILE;
        for (Py_ssize_t j0 = 0; j0 < nj; j0 += TILE) {
            Py_ssize_t tj = nj - j0 < TILE ? nj - j0 : TILE;
            char *dt = d + i0 * dsi + j0 * dsj;
            const char *st = s + i0 * ssi + j0 * ssj;
            if (registers && ti == TILE && tj == TILE) {
                Row16 r[16];
                for (int k = 0; k < 16; k++)
                    memcpy(&r[k], st + k * ssj, sizeof(Row16)); /* src[i0.., j0 + k] */
                transpose16(r);
                for (int k = 0; k < 16; k++)
                    memcpy(dt + k * dsi, &r[k], sizeof(Row16)); /* dst[i0 + k, j0..] */
                continue;
            }
            copy_tile(dt, dsi, dsj, st, ssi, ssj, ti, tj, itemsize);
        }
    }
}

void
strided_copy(const Strided *dst, const Strided *src)
{
    int ndim = dst->ndim;
    Py_ssize_t total = 1;
    for (int k = 0; k < ndim; k++)
        total *= dst->shape[k];
    if (total == 0)
        return;
    /* j: the destination's innermost axis; i: the source's (another, when it has one) */
    int j = smallest_stride_axis(dst, -1);
    int i = smallest_stride_axis(src, j);
    if (j < 0) { /* a single element */
        memcpy(dst->data, src->data, (size_t)dst->itemsize);
        return;
    }
    Py_ssize_t ni = i < 0 ? 1 : dst->shape[i], nj = dst->shape[j];
    Py_ssize_t dsi = i < 0 ? 0 : dst->strides[i], ssi = i < 0 ? 0 : src->strides[i];
    Py_ssize_t dsj = dst->strides[j], ssj = src->strides[j];
    Py_ssize_t index[STRIDED_MAX_DIMS] = {0};
    for (;;) {
        Py_ssize_t doff = 0, soff = 0;
        for (int k = 0; k < ndim; k++) {
            if (k == i || k == j)
                continue;
            doff += index[k] * dst->strides[k];
            soff += index[k] * src->strides[k];
        }
        copy_plane(dst->data + doff, dsi, dsj, src->data + soff, ssi, ssj, ni, nj, dst->itemsize);
        int k = ndim - 1; /* the next index of the other axes, last fastest */
        for (; k >= 0; k--) {
            if (k == i || k == j)
                continue;
            if (++index[k] < dst->shape[k])
                break;
            index[k] = 0;
        }
        if (k < 0)
            return;
    }
}

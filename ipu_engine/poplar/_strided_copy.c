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

/* Every tile of one (i, j) plane: dst[i, j] = src[i, j]; rows contiguous in both are
 * copied a row at a time (the tiles' item-by-item loop ran a 800 KB row at 7 GB/s,
 * memmove at ~45). A whole 16 x 16 tile of 4-byte
 * items whose source is contiguous along i and destination along j (a transpose) goes
 * through registers: 16 rows read, transposed, 16 rows written. */
KERNEL_CLONES static void
copy_plane(char *d, Py_ssize_t dsi, Py_ssize_t dsj, const char *s, Py_ssize_t ssi,
           Py_ssize_t ssj, Py_ssize_t ni, Py_ssize_t nj, Py_ssize_t itemsize)
{
    if (dsj == itemsize && ssj == itemsize) { /* both contiguous along j: rows at once */
        for (Py_ssize_t i = 0; i < ni; i++)
            memmove(d + i * dsi, s + i * ssi, (size_t)(nj * itemsize));
        return;
    }
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

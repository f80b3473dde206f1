/* attn_ref.c - decode attention's inner products in portable C: the
 * reference of attn_kernels.h. */
#include <string.h>

#include "attn_kernels.h"

/* sum a[i] b[i] with 8 independent partial sums, so the compiler can keep
 * them in vector lanes without reassociating one sum. */
static float dot(const float *a, const float *b, int64_t n)
{
    float acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++)
            acc[u] += a[i + u] * b[i + u];
    float sum = 0.0f;
    for (; i < n; i++)
        sum += a[i] * b[i];
    for (int u = 0; u < 8; u++)
        sum += acc[u];
    return sum;
}

void rf_kern_attn_scores_ref_f32(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                                 float scale, float *sc)
{
    for (int64_t s = 0; s < nk; s++) /* key row s stays in L1 for all g heads */
        for (int64_t h = 0; h < g; h++)
            sc[h * nk + s] = scale * dot(q + h * dh, K + s * dh, dh);
}

void rf_kern_attn_values_ref_f32(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                                 float *out)
{
    memset(out, 0, (size_t)(g * dh) * sizeof *out);
    for (int64_t s = 0; s < nk; s++) {
        const float *v = V + s * dh;
        for (int64_t h = 0; h < g; h++) {
            float w = p[h * nk + s], *o = out + h * dh;
            for (int64_t i = 0; i < dh; i++)
                o[i] += w * v[i];
        }
    }
}

/* measured.c - the measured-results type's pure queries. */
#include "roofline/rf_measured.h"

bool rf_measured_has_roofs(const rf_measured *m)
{
    if (m->bw_bytes_per_s > 0)
        return true;
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (m->peak_flops_per_s[k] > 0)
            return true;
    return false;
}

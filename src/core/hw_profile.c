/* hw_profile.c - a measured profile as the analytic hardware description. */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_hw_profile.h"

rf_status rf_hw_profile_to_hw(const rf_hw_profile *p, rf_hw *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", p->name);
    const char *what = p->device[0] ? p->device : p->cpu[0] ? p->cpu : "unknown machine";
    snprintf(out->source, sizeof out->source, "measured %s on %s (%d threads%s%s)",
             p->date[0] ? p->date : "(undated)", what, p->threads, p->isa[0] ? ", " : "", p->isa);
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        out->peak_flops_per_s[k] = p->peak_flops_per_s[k];
    out->bw_bytes_per_s = p->bandwidth_bytes_per_s;
    out->mem_bytes = p->mem_bytes;
    rf_cluster_links(&p->cluster, &out->links); /* measure --mpi's links, when measured */
    return rf_hw_validate(out, err);
}

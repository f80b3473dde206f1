/* absent.c - the commands the WebAssembly build leaves out. measure, bench
 * and profile time this machine's memory, BLAS GEMMs and decoder layers
 * (OpenBLAS, threads, ISA kernels); a browser page can do none of that, so
 * in the explorer they say so and exit 3, as a backend that is not built. */
#include <stdio.h>

#include "cli.h"

static int absent(const char *name)
{
    fprintf(stderr,
            "roofline %s: not in the WebAssembly build (it times this machine's hardware, "
            "which a browser page cannot); run the native roofline %s\n",
            name, name);
    return RF_EXIT_UNAVAIL;
}

int cmd_measure(int argc, char **argv) { return (void)argc, (void)argv, absent("measure"); }
int cmd_bench(int argc, char **argv) { return (void)argc, (void)argv, absent("bench"); }
int cmd_profile(int argc, char **argv) { return (void)argc, (void)argv, absent("profile"); }

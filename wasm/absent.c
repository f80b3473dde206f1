/* absent.c - the commands the WebAssembly build leaves out. measure, bench
 * and profile time this machine's memory, BLAS GEMMs and decoder layers
 * (OpenBLAS, threads, ISA kernels); a browser page can do none of that, so
 * in the explorer they say so and exit 3, as a backend that is not built. */
#include <stdio.h>

#include "cli.h"

static int absent(const cli_io *io, const char *name)
{
    fprintf(io->err,
            "roofline %s: not in the WebAssembly build (it times this machine's hardware, "
            "which a browser page cannot); run the native roofline %s\n",
            name, name);
    return RF_EXIT_UNAVAIL;
}

int cmd_measure(const cli_io *io, int argc, char **argv)
{
    return (void)argc, (void)argv, absent(io, "measure");
}
int cmd_bench(const cli_io *io, int argc, char **argv)
{
    return (void)argc, (void)argv, absent(io, "bench");
}
int cmd_profile(const cli_io *io, int argc, char **argv)
{
    return (void)argc, (void)argv, absent(io, "profile");
}

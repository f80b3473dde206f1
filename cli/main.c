/* main.c - the `roofline` and `roofline-lab` binaries: the command line
 * library's rf_cli_main (entry.c) on the process's own streams, and stdout
 * closed and checked. roofline-lab has every command; roofline has the
 * analytic ones and runs roofline-lab for measure, bench and profile
 * (lab_exec.c), so that it starts without the lab's libraries. */
#include <stdio.h>

#include "cli.h"
#include "rf_cli.h"

int main(int argc, char **argv)
{
    int code = rf_cli_main(argc, argv); /* stdout flushed and checked */
    /* closing can fail still (a file system that reports late) */
    if (fclose(stdout) != 0 && !code) {
        fprintf(stderr, "roofline: error writing standard output\n");
        return RF_EXIT_IO;
    }
    return code;
}

/* state.c - a command's large results on the heap, its own for one call
 * (never static storage, so two calls at once share nothing). */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

int cli_with_state(const cli_io *io, int argc, char **argv, size_t size, cli_state_fn fn)
{
    void *state = calloc(1, size);
    if (!state) {
        fprintf(io->err, "roofline %s: out of memory\n", argv[0]);
        return RF_EXIT_FAIL;
    }
    int rc = fn(io, argc, argv, state);
    free(state);
    return rc;
}

/* scan.h - the option scanner (scan.c), cli_parse's alone: getopt_long's
 * results without its process-wide state (optind, optarg, optopt), so two calls on two threads scan two argvs, and with one
 * behaviour on every C library (glibc's and musl's permute argv
 * differently, and the WebAssembly module has musl's). What it takes, as
 * GNU getopt_long does with opterr 0 and a leading ':':
 *   --name, --name=VALUE, --name VALUE (the next element whatever it
 *   holds, "-5" or "--"), and an unambiguous prefix of a name (an exact
 *   name wins; --out, a prefix of --output and --out-dtype, is unknown);
 *   -x, -xVALUE, -x VALUE, and letters run together (-ho FILE);
 *   "--" ends the options; "-" and anything not starting with '-' is an
 *   operand, wherever it stands.
 * Operands are moved after the options, each group kept in its order (what
 * GNU's permutation leaves, and so what every command reads from argv
 * at *first_pos); the strings themselves are never written. */
#ifndef RF_CLI_SCAN_H
#define RF_CLI_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core.h"

typedef struct cli_scan {
    char **argv;
    int argc;
    int next;                    /* the element read next                          */
    int opts_end;                /* argv[1..opts_end): the options read, values too;
                            argv[opts_end..next): the operands passed over  */
    const char *letters;         /* the rest of a run of letters (-ab: "b"), or NULL */
    const cli_opt_group *groups; /* the command's, {0}-terminated, or NULL */
    const cli_opt *globals;      /* the global options, n_globals of them  */
    size_t n_globals;
    const cli_opt *help, *output; /* the globals -h and -o name            */
} cli_scan;

/* What the scanner found next. */
typedef enum { CLI_SCAN_END, CLI_SCAN_OPT, CLI_SCAN_UNKNOWN, CLI_SCAN_NO_VALUE } cli_scan_kind;

typedef struct cli_scanned {
    const cli_opt *opt;         /* CLI_SCAN_OPT, CLI_SCAN_NO_VALUE: the option  */
    const cli_opt_group *group; /* its group; NULL for a global option  */
    char letter;                /* given as -letter; 0 as --name                  */
    const char *value;          /* its value, NULL for an option that takes none  */
    const char *typed;          /* CLI_SCAN_UNKNOWN: the element as typed     */
} cli_scanned;

/* The options' count in o, a {0}-terminated table (0 for NULL). */
size_t cli_opts_count(const cli_opt *o);
/* The next option of s, into f; CLI_SCAN_END when the options are over
 * (the operands then at argv[s->opts_end..argc-1]). */
cli_scan_kind cli_scan_next(cli_scan *s, cli_scanned *f);
/* The first option of s's groups whose letter is not a letter or is
 * taken already (-h, -o, another's), or NULL: a table's mistake. */
const cli_opt *cli_scan_bad_letter(const cli_scan *s);

#endif

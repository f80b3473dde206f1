/* report.c - building the format-neutral report. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* Grow *arr (of elem bytes) to hold one more; sticky failure on r. */
static bool grow(rf_report *r, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (r->failed)
        return false;
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, c * elem);
    if (!p) {
        r->failed = true;
        return false;
    }
    *arr = p;
    *cap = c;
    return true;
}

static char *dup(rf_report *r, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) {
        r->failed = true;
        return NULL;
    }
    return memcpy(p, s, n);
}

static char *vdup(rf_report *r, const char *fmt, va_list ap)
{
    char tmp[1024];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    return dup(r, tmp);
}

rf_report *rf_report_new(const char *title)
{
    rf_report *r = calloc(1, sizeof *r);
    if (r)
        r->title = dup(r, title ? title : "");
    return r;
}

static void free_cell(rf_cell *v) { free((char *)v->str); /* the report's own copy */ }

void rf_report_free(rf_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_blocks; i++) {
        rf__block *b = &r->blocks[i];
        for (size_t j = 0; j < b->n_fields; j++) {
            free(b->fields[j].key);
            free(b->fields[j].label);
            free_cell(&b->fields[j].v);
        }
        for (size_t j = 0; j < b->n_cols; j++) {
            free(b->cols[j].key);
            free(b->cols[j].label);
        }
        for (size_t j = 0; j < b->n_cells; j++)
            free_cell(&b->cells[j]);
        free(b->fields);
        free(b->cols);
        free(b->cells);
        free(b->key);
        free(b->label);
    }
    for (size_t i = 0; i < r->n_assume; i++)
        free(r->assume[i]);
    for (size_t i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->assume);
    free(r->notes);
    free(r->blocks);
    free(r->title);
    free(r);
}

void rf_report_assume(rf_report *r, const char *fmt, ...)
{
    if (!grow(r, (void **)&r->assume, &r->cap_assume, r->n_assume, sizeof(char *)))
        return;
    va_list ap;
    va_start(ap, fmt);
    r->assume[r->n_assume] = vdup(r, fmt, ap);
    va_end(ap);
    if (r->assume[r->n_assume])
        r->n_assume++;
}

void rf_report_note(rf_report *r, const char *fmt, ...)
{
    if (!grow(r, (void **)&r->notes, &r->cap_notes, r->n_notes, sizeof(char *)))
        return;
    va_list ap;
    va_start(ap, fmt);
    r->notes[r->n_notes] = vdup(r, fmt, ap);
    va_end(ap);
    if (r->notes[r->n_notes])
        r->n_notes++;
}

static rf__block *new_block(rf_report *r, bool is_table, const char *key, const char *label)
{
    if (!grow(r, (void **)&r->blocks, &r->cap_blocks, r->n_blocks, sizeof(rf__block)))
        return NULL;
    rf__block *b = &r->blocks[r->n_blocks++];
    memset(b, 0, sizeof *b);
    b->is_table = is_table;
    b->key = dup(r, key);
    b->label = dup(r, label);
    return b;
}

void rf_report_section(rf_report *r, const char *key, const char *label)
{
    new_block(r, false, key, label);
}

/* The current scalar block; a top-level one is opened if needed. */
static rf__block *scalars(rf_report *r)
{
    if (r->n_blocks && !r->blocks[r->n_blocks - 1].is_table)
        return &r->blocks[r->n_blocks - 1];
    return new_block(r, false, NULL, NULL);
}

static void add_field(rf_report *r, const char *key, const char *label, rf_unit u, rf_cell v)
{
    rf__block *b = scalars(r);
    if (!b || !grow(r, (void **)&b->fields, &b->cap_fields, b->n_fields, sizeof(rf__field))) {
        free_cell(&v);
        return;
    }
    rf__field *f = &b->fields[b->n_fields++];
    f->key = dup(r, key);
    f->label = dup(r, label ? label : key);
    f->unit = u;
    f->v = v;
}

void rf_report_num(rf_report *r, const char *key, const char *label, double v, rf_unit u)
{
    rf_cell x = {.kind = isfinite(v) ? RF_CELL_NUM : RF_CELL_NULL, .num = v};
    add_field(r, key, label, u, x);
}

void rf_report_int(rf_report *r, const char *key, const char *label, uint64_t v, rf_unit u)
{
    rf_cell x = {.kind = RF_CELL_INT, .i = v};
    add_field(r, key, label, u, x);
}

void rf_report_str(rf_report *r, const char *key, const char *label, const char *v)
{
    rf_cell x = {.kind = RF_CELL_STR, .str = dup(r, v ? v : "")};
    add_field(r, key, label, RF_U_NONE, x);
}

void rf_report_null(rf_report *r, const char *key, const char *label, const char *shown)
{
    rf_cell x = {.kind = RF_CELL_NULL, .str = dup(r, shown)};
    add_field(r, key, label, RF_U_NONE, x);
}

void rf_report_bool(rf_report *r, const char *key, const char *label, bool v, const char *shown)
{
    rf_cell x = {.kind = RF_CELL_BOOL, .i = v, .str = shown ? dup(r, shown) : NULL};
    add_field(r, key, label, RF_U_NONE, x);
}

void rf_report_table(rf_report *r, const char *key, const char *label)
{
    new_block(r, true, key, label);
}

static rf__block *table(rf_report *r)
{
    return r->n_blocks && r->blocks[r->n_blocks - 1].is_table ? &r->blocks[r->n_blocks - 1] : NULL;
}

void rf_report_col(rf_report *r, const char *key, const char *label, rf_unit u)
{
    rf__block *b = table(r);
    if (!b || b->n_cells ||
        !grow(r, (void **)&b->cols, &b->cap_cols, b->n_cols, sizeof(rf__column))) {
        r->failed = true;
        return;
    }
    rf__column *c = &b->cols[b->n_cols++];
    c->key = dup(r, key);
    c->label = dup(r, label ? label : key);
    c->unit = u;
}

void rf_report_row(rf_report *r)
{
    rf__block *b = table(r);
    if (!b || (b->n_cols && b->n_cells % b->n_cols))
        r->failed = true; /* a previous row was left short */
}

static void add_cell(rf_report *r, rf_cell v)
{
    rf__block *b = table(r);
    if (!b || !grow(r, (void **)&b->cells, &b->cap_cells, b->n_cells, sizeof(rf_cell))) {
        r->failed = true;
        free_cell(&v);
        return;
    }
    b->cells[b->n_cells++] = v;
}

void rf_report_cell_num(rf_report *r, double v)
{
    rf_cell x = {.kind = isfinite(v) ? RF_CELL_NUM : RF_CELL_NULL, .num = v};
    add_cell(r, x);
}

void rf_report_cell_int(rf_report *r, uint64_t v)
{
    rf_cell x = {.kind = RF_CELL_INT, .i = v};
    add_cell(r, x);
}

void rf_report_cell_str(rf_report *r, const char *v)
{
    rf_cell x = {.kind = RF_CELL_STR, .str = dup(r, v ? v : "")};
    add_cell(r, x);
}

void rf_report_cell_null(rf_report *r, const char *shown)
{
    rf_cell x = {.kind = RF_CELL_NULL, .str = dup(r, shown)};
    add_cell(r, x);
}

rf_status rf_report_write(const rf_report *r, rf_format f, rf_buf *out, rf_err *err)
{
    if (r->failed)
        return rf_err_set(err, RF_ENOMEM, "out of memory while building the report");
    rf_status s = f == RF_FMT_JSON  ? rf__write_json(r, out)
                  : f == RF_FMT_CSV ? rf__write_csv(r, out)
                                    : rf__write_table(r, out);
    if (out->failed)
        return rf_err_set(err, RF_ENOMEM, "out of memory while writing the report");
    if (s)
        return rf_err_set(err, s, "the report has no table to write as CSV");
    return RF_OK;
}

/* plot_text.c - text as the figure's layout sees it: widths estimated from
 * DejaVu Sans advance widths, and lines broken where a reader expects. */
#include <stdio.h>
#include <string.h>

#include "plot_impl.h"

/* DejaVu Sans advance widths of ASCII 32..126, in 1/2048 em. */
static const unsigned short dejavu[95] = {
    651,  821,  942,  1716, 1303, 1946, 1597, 563,  799,  799,  1024, 1716, 651,  739,  651,  690,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690,  690,  1716, 1716, 1716, 1087,
    2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604,  604,  1343, 1141, 1767, 1532, 1612,
    1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799,  690,  799,  1716, 1024,
    1024, 1255, 1300, 1126, 1300, 1260, 721,  1300, 1298, 569,  569,  1186, 569,  1995, 1298, 1253,
    1300, 1300, 842,  1067, 803,  1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,  1303, 1716};

/* Width of one byte in 1/2048 em: ASCII from the table, a multi-byte
 * character counted wide once (on its lead byte). */
static unsigned units(unsigned char c)
{
    if (c >= 32 && c < 127)
        return dejavu[c - 32];
    return (c & 0xC0) != 0x80 ? 1716 : 0;
}

double rf_plot_text_px(const char *s, double font_px)
{
    double u = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        u += units(*c);
    return u / 2048.0 * font_px;
}

/* The cut of text for a line of at most room px (in 1/2048 em: lim): the
 * last place that fits where prefer starts, else the last space; *skip:
 * the bytes of the separator dropped there. 0 when no such place fits. */
static size_t last_fit(const char *text, double lim, const char *prefer, size_t *skip, size_t *fit)
{
    size_t plen = prefer ? strlen(prefer) : 0, pref = 0, space = 0;
    double w = 0;
    *fit = 0;
    for (size_t i = 0; text[i] && w <= lim; w += units((unsigned char)text[i]), i++) {
        if (i == 0 || ((unsigned char)text[i] & 0xC0) == 0x80)
            continue; /* never inside a UTF-8 character */
        *fit = i;
        if (text[i] == ' ')
            space = i;
        if (plen && !strncmp(text + i, prefer, plen))
            pref = i;
    }
    *skip = pref ? plen : 1;
    return pref ? pref : space;
}

/* rf__take_line, preferring a cut where the separator prefer starts. */
static void take(char *text, char *line, size_t cap, double font, double max_px, bool last,
                 const char *prefer)
{
    size_t n = strlen(text), cut = n, skip = 0;
    if (rf_plot_text_px(text, font) > max_px) {
        double room = max_px - (last ? rf_plot_text_px("...", font) : 0);
        size_t fit;
        cut = last_fit(text, room * 2048.0 / font, prefer, &skip, &fit);
        if (!cut && last) {
            cut = fit, skip = 0; /* one word wider than the line: cut it, marked */
        } else if (!cut) {       /* a line wider than asked, not a broken word */
            const char *sp = strchr(text + 1, ' ');
            cut = sp ? (size_t)(sp - text) : n, skip = sp ? 1 : 0;
        }
    }
    snprintf(line, cap, "%.*s%s", (int)cut, text, last && cut < n ? "..." : "");
    const char *rest = last ? text + n : text + cut + skip;
    while (*rest == ' ')
        rest++;
    memmove(text, rest, strlen(rest) + 1);
}

/* plot_impl.h; a cut falls at a space, so no word or name is broken. */
void rf__take_line(char *text, char *line, size_t cap, double font, double max_px, bool last)
{
    take(text, line, cap, font, max_px, last, NULL);
}

int rf__wrap(const char *text, const char *sep, double font, double max_px,
             char lines[][RF_PLOT_TEXT_MAX], int max_lines)
{
    char rest[RF_PLOT_TEXT_MAX];
    snprintf(rest, sizeof rest, "%s", text);
    int n = 0;
    for (; rest[0] && n < max_lines; n++)
        take(rest, lines[n], RF_PLOT_TEXT_MAX, font, max_px, n == max_lines - 1, sep);
    return n;
}

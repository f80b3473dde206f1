/* plot_text.c - text as the figure's layout sees it: widths estimated from
 * DejaVu Sans advance widths, and lines broken where a reader expects. */
#include <stdio.h>
#include <string.h>

#include "plot_impl.h"

/* DejaVu Sans advance widths of ASCII 32..126, in 1/2048 em. */
static const unsigned short dejavu[95] = {
    651,  821,  942,  1716, 1303, 1946, 1597, 563,  799,  799,  1024, 1716, 651,  739,
    651,  690,  1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690,  690,
    1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604,
    604,  1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025,
    1403, 1251, 1403, 799,  690,  799,  1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260,
    721,  1300, 1298, 569,  569,  1186, 569,  1995, 1298, 1253, 1300, 1300, 842,  1067,
    803,  1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,  1303, 1716};

double rf__text_px(const char *s, double font_px)
{
    double units = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c >= 32 && *c < 127)
            units += dejavu[*c - 32];
        else if ((*c & 0xC0) != 0x80)
            units += 1716; /* a multi-byte character: count it wide */
    }
    return units / 2048.0 * font_px;
}

/* plot_impl.h; a cut falls after a '/' or before a ',' or a space. */
void rf__take_line(char *text, char *line, size_t cap, double font, double max_px, bool last)
{
    size_t n = strlen(text), cut = n;
    if (rf__text_px(text, font) > max_px) {
        double room = max_px - (last ? rf__text_px("...", font) : 0);
        size_t sep = 0, fit = 1;
        for (size_t i = 1; i < n; i++) {
            char save = text[i];
            text[i] = '\0';
            bool fits = rf__text_px(text, font) <= room;
            text[i] = save;
            if (!fits)
                break;
            fit = i;
            if (text[i - 1] == '/' || text[i] == ',' || text[i] == ' ')
                sep = i;
        }
        cut = sep ? sep : fit;
    }
    snprintf(line, cap, "%.*s%s", (int)cut, text, last && cut < n ? "..." : "");
    const char *rest = last ? text + n : text + cut;
    while (*rest == ',' || *rest == ' ')
        rest++;
    memmove(text, rest, strlen(rest) + 1);
}

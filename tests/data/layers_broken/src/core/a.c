#include "roofline/rf_a.h"
#include "roofline/rf_b.h"

int rf_a_count(void)
{
    return 1;
}

#include "b_one.h"
#include "roofline/rf_a.h"
#include "roofline/rf_b.h"

int rf_a_read(void)
{
    return 2;
}

int rf_b_load(void)
{
    return rf_a_read();
}

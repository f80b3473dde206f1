/* timer.c - the monotonic clock every measurement reads. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "roofline/rf_measure.h"

double rf_time_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

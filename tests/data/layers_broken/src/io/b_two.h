#include "b_one.h"

#include "b_two.h"

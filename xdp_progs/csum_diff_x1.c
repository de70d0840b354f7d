/* csum_diff_x1: 1 chained bpf_csum_diff calls; see csum_diff.h. */
#define NCALLS 1
#include "csum_diff.h"

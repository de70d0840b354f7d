/* csum_diff_x10: 10 chained bpf_csum_diff calls; see csum_diff.h. */
#define NCALLS 10
#include "csum_diff.h"

/* csum_diff_x20: 20 chained bpf_csum_diff calls; see csum_diff.h. */
#define NCALLS 20
#include "csum_diff.h"

/* csum_diff_x40: 40 chained bpf_csum_diff calls; see csum_diff.h. */
#define NCALLS 40
#include "csum_diff.h"

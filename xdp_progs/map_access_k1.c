/* map_access_k1: hash-map lookup with a 1-byte key; see map_access.h. */
#define KEY_SIZE 1
#include "map_access.h"

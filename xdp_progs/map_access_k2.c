/* map_access_k2: hash-map lookup with a 2-byte key; see map_access.h. */
#define KEY_SIZE 2
#include "map_access.h"

/* map_access_k4: hash-map lookup with a 4-byte key; see map_access.h. */
#define KEY_SIZE 4
#include "map_access.h"

/* map_access_k16: hash-map lookup with a 16-byte key; see map_access.h. */
#define KEY_SIZE 16
#include "map_access.h"

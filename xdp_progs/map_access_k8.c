/* map_access_k8: hash-map lookup with a 8-byte key; see map_access.h. */
#define KEY_SIZE 8
#include "map_access.h"

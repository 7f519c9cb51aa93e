#include "sim/world_hash_tracker.h"

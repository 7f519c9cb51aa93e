#include "sim/state_codec.h"

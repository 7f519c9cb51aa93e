#include "net/link_sim.h"

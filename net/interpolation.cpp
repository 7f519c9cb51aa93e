#include "net/interpolation.h"

#include "net/prediction.h"

#include "net/edit_codec.h"

#include "net/server_host.h"

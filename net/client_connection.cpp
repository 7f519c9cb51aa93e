#include "net/client_connection.h"

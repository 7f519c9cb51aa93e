// The loam-server process after option parsing: load the scene, generate the world,
// load the newest save, open the ServerHost and tick it at 60 Hz until the duration
// ends or SIGINT/SIGTERM arrives; save periodically and on the way out. With
// --http-port it serves the ops endpoint (server/ops_http.h) from before world
// generation; with AGONES_SDK_HTTP_PORT it reports to Agones (server/agones.h).
#pragma once

#include "net/tick_pacer.h"
#include "server/config.h"

namespace loam::server {

using net::TickPacer;

/// Exit codes of loam-server.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  ///< bind failed, scene failed to load or generate, final save failed
inline constexpr int kExitConfig = 2;   ///< bad flag, variable or config file, or a save that cannot be used here

/// Runs the server with parsed options. Installs SIGINT/SIGTERM handlers. Returns
/// the process exit code. Logs to stderr.
int runServer(const ServerOptions& options);

}  // namespace loam::server

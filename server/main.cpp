// loam-server: the headless host. Options come from --config FILE, LOAM_* variables
// and flags (server/config.h); the rest is server/server_loop.h.
#include <cstdio>

#include "server/config.h"
#include "server/log.h"
#include "server/server_loop.h"

extern char** environ;

int main(int argc, char** argv) {
  using loam::server::ParseResult;
  ParseResult parsed = loam::server::parseOptions(argc, argv, loam::server::environmentFrom(environ));
  switch (parsed.action) {
    case ParseResult::Action::Help:
      std::fputs(parsed.text.c_str(), stdout);
      return loam::server::kExitOk;
    case ParseResult::Action::Error:
      // Through the logger like every other line (one line, controls escaped).
      loam::server::logLine("error: loam-server: %s (see --help)", parsed.text.c_str());
      return loam::server::kExitConfig;
    case ParseResult::Action::Run:
      break;
  }
  return loam::server::runServer(parsed.options);
}

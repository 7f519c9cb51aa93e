// loam-client: parses the flags and runs the window loop or the offscreen shot
// (client/client_app.h). Exit codes: 0 ok, 1 runtime failure, 2 bad flags,
// 3 offscreen shot with validation errors.
#include <cstdio>

#include "client/client_app.h"
#include "client/options.h"

int main(int argc, char** argv) {
  const loam::client::ParseOutcome parsed = loam::client::parseOptions(argc, argv);
  if (!parsed.run) {
    std::fprintf(parsed.exitCode == 0 ? stdout : stderr, "%s\n", parsed.message.c_str());
    return parsed.exitCode;
  }
  return loam::client::runClient(parsed.options);
}

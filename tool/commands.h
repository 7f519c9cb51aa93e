// loam-tool's subcommands. Each lives in its own file and registers itself on the
// CLI11 app; main() only dispatches. A command's run function returns the process
// exit code (0 ok, 1 failure, 2 bad usage or input).
#pragma once

namespace CLI {
class App;
}

namespace loam::tool {

/// `loam-tool detmath-digest [--per-function] [--inputs N]`
void addDetmathDigestCommand(CLI::App& app, int& exitCode);

}  // namespace loam::tool

#include <CLI/CLI.hpp>

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "detmath/digest.h"
#include "tool/commands.h"

namespace loam::tool {

void addDetmathDigestCommand(CLI::App& app, int& exitCode) {
  struct Options {
    bool perFunction = false;
    int inputs = dm::kDigestInputsPerFunction;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("detmath-digest", "Print the 64-bit digest of detmath's outputs on fixed inputs");
  cmd->add_flag("--per-function", opt->perFunction, "Also print one digest per function (to find which differs)");
  cmd->add_option("--inputs", opt->inputs, "Inputs per function (the golden uses the default)")->check(CLI::Range(1, 10000000));
  cmd->callback([opt, &exitCode] {
    if (opt->perFunction) {
      dm::detmathDigestPerFunction(
          [](std::string_view name, std::uint64_t h) {
            std::printf("%-8.*s %016" PRIx64 "\n", static_cast<int>(name.size()), name.data(), h);
          },
          opt->inputs);
    }
    std::printf("%016" PRIx64 "\n", dm::detmathDigest(opt->inputs));
    exitCode = 0;
  });
}

}  // namespace loam::tool

#include <CLI/CLI.hpp>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/save/save.h"
#include "tool/commands.h"

namespace loam::tool {

void addSaveInfoCommand(CLI::App& app, int& exitCode) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("save-info", "Print a save file's header, brick count, blobs and sizes");
  cmd->add_option("FILE", *file, "Save file")->required();
  cmd->callback([file, &exitCode] {
    auto bytes = sim::readFileBytes(*file);
    if (!bytes) {
      std::fprintf(stderr, "loam-tool save-info: %s\n", bytes.error().message.c_str());
      exitCode = 1;
      return;
    }
    auto data = sim::decodeSave(*bytes);
    if (!data) {
      std::fprintf(stderr, "loam-tool save-info: %s: %s\n", file->c_str(), data.error().message.c_str());
      exitCode = 2;
      return;
    }
    const sim::SaveData& d = *data;
    std::printf("file               %s\n", file->c_str());
    std::printf("format version     %" PRIu32 "\n", d.header.formatVersion);
    std::printf("scene hash         %016" PRIx64 "\n", d.header.identity.sceneHash);
    std::printf("seed               %" PRIu64 "\n", d.header.identity.seed);
    std::printf("generator version  %" PRIu32 "\n", d.header.identity.generatorVersion);
    std::printf("tick               %" PRIu64 "\n", d.header.tick);
    std::printf("bounds (bricks)    [%d %d %d] .. [%d %d %d)\n", d.bounds.minBrick.x, d.bounds.minBrick.y,
                d.bounds.minBrick.z, d.bounds.maxBrick.x, d.bounds.maxBrick.y, d.bounds.maxBrick.z);
    std::printf("bricks             %zu (%" PRIu64 " whole, %" PRIu64 " as changes: %" PRIu64 " voxels)\n",
                d.bricks.size(), d.sizes.wholeBricks, d.sizes.deltaBricks, d.sizes.changedVoxels);
    std::printf("blobs              %zu\n", d.blobs.size());
    for (const sim::SaveBlob& b : d.blobs) std::printf("  %-24s %zu bytes\n", b.name.c_str(), b.bytes.size());
    std::printf("raw payload        %" PRIu64 " bytes\n", d.sizes.rawBytes);
    std::printf("compressed payload %" PRIu64 " bytes\n", d.sizes.compressedBytes);
    std::printf("file size          %" PRIu64 " bytes\n", d.sizes.fileBytes);
    exitCode = 0;
  });
}

}  // namespace loam::tool

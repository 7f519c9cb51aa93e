// loam-tool export-save / import-save: the world database (sim/save/world_db.h) to and
// from a single-file save (sim/save/save.h), for backups and restores.
#include <CLI/CLI.hpp>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/save/save.h"
#include "sim/save/world_db.h"
#include "tool/commands.h"

namespace loam::tool {

void addExportSaveCommand(CLI::App& app, int& exitCode) {
  struct Args {
    std::string db, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("export-save", "Write a world database's contents to a single-file save");
  cmd->add_option("--db", args->db, "World database (.loamdb)")->required();
  cmd->add_option("--out", args->out, "Save file to write (.loamsave)")->required();
  cmd->callback([args, &exitCode] {
    auto db = sim::WorldDb::open(args->db);
    if (!db) {
      std::fprintf(stderr, "loam-tool export-save: %s\n", db.error().message.c_str());
      exitCode = 2;
      return;
    }
    auto contents = (*db)->load();
    if (!contents) {
      std::fprintf(stderr, "loam-tool export-save: %s\n", contents.error().message.c_str());
      exitCode = 2;
      return;
    }
    if (!contents->damaged.empty()) {
      for (const std::string& line : contents->damaged) std::fprintf(stderr, "damaged %s\n", line.c_str());
      std::fprintf(stderr, "loam-tool export-save: %s has damaged rows; nothing written\n", args->db.c_str());
      exitCode = 2;
      return;
    }
    auto bytes = sim::encodeSave(contents->save);
    if (!bytes) {
      std::fprintf(stderr, "loam-tool export-save: %s\n", bytes.error().message.c_str());
      exitCode = 1;
      return;
    }
    if (auto w = sim::writeSaveFile(args->out, *bytes); !w) {
      std::fprintf(stderr, "loam-tool export-save: %s\n", w.error().message.c_str());
      exitCode = 1;
      return;
    }
    std::printf("exported %s (tick %" PRIu64 ", %zu bricks, %zu blobs) to %s, %zu bytes\n", args->db.c_str(),
                contents->save.header.tick, contents->save.bricks.size(), contents->save.blobs.size(),
                args->out.c_str(), bytes->size());
    exitCode = 0;
  });
}

void addImportSaveCommand(CLI::App& app, int& exitCode) {
  struct Args {
    std::string save, db;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("import-save", "Create a world database from a single-file save");
  cmd->add_option("--save", args->save, "Save file to read (.loamsave)")->required();
  cmd->add_option("--db", args->db, "World database to create (.loamdb; must not exist)")->required();
  cmd->callback([args, &exitCode] {
    auto bytes = sim::readFileBytes(args->save);
    if (!bytes) {
      std::fprintf(stderr, "loam-tool import-save: %s\n", bytes.error().message.c_str());
      exitCode = 1;
      return;
    }
    auto data = sim::decodeSave(*bytes);
    if (!data) {
      std::fprintf(stderr, "loam-tool import-save: %s: %s\n", args->save.c_str(), data.error().message.c_str());
      exitCode = 2;
      return;
    }
    auto db = sim::createWorldDbFromSave(args->db, *data);
    if (!db) {
      std::fprintf(stderr, "loam-tool import-save: %s\n", db.error().message.c_str());
      exitCode = 1;
      return;
    }
    std::printf("imported %s (tick %" PRIu64 ", %zu bricks, %zu blobs) into %s\n", args->save.c_str(),
                data->header.tick, data->bricks.size(), data->blobs.size(), args->db.c_str());
    exitCode = 0;
  });
}

}  // namespace loam::tool

// World database files (loam-server at start, loam-tool export-save): the first byte
// picks what the rest is.
//   0: the bytes of a database file, written to a temporary file, then WorldDb::open
//      and load (SQLite parses the file; the rows' keys, sizes, hashes and contents
//      are checked by world_db.cpp), then restoreState onto a copy of the server state;
//   1: one brick row's content for decodeBrickContent.
#include <unistd.h>

#include <string>

#include "fuzz/fuzz_support.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"

namespace {

using namespace loam;

void openAndLoad(std::span<const std::uint8_t> file) {
  static const std::string path = "/tmp/loam_fuzz_world_db_" + std::to_string(::getpid()) + ".loamdb";
  for (const char* ext : {"", "-wal", "-shm"}) ::unlink((path + ext).c_str());
  if (!sim::writeSaveFile(path, file)) return;
  if (auto db = sim::WorldDb::open(path)) {
    if (auto contents = (*db)->load()) {
      sim::SimState state = fuzz::baseState();
      (void)sim::restoreState(contents->save, state);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest = fuzz::bytesOf(data + 1, size - 1);
  switch (data[0] % 2) {
    case 0: openAndLoad(rest); break;
    case 1: {
      sim::SavedBrick brick;
      (void)sim::decodeBrickContent(rest, brick);
      break;
    }
    default: break;
  }
  return 0;
}

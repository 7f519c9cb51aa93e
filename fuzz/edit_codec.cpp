// The edit codec on the client (StepBatch.edits from a hostile server): decodeEdits
// never crashes, keeps to maxRecords, and what it accepts re-encodes to an edit log
// that decodes to the same records (the codec is canonical up to grouping).
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "net/edit_codec.h"
#include "sim/step/mirror.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  constexpr std::size_t kMaxRecords = 1u << 14;
  std::vector<sim::EditRecord> edits;
  if (!net::decodeEdits(fuzz::bytesOf(data, size), edits, kMaxRecords)) return 0;
  if (edits.size() > kMaxRecords) std::abort();
  std::vector<std::uint8_t> again;
  net::encodeEdits(edits, again);
  std::vector<sim::EditRecord> back;
  if (!net::decodeEdits(again, back, kMaxRecords) || back.size() != edits.size()) std::abort();
  // Applying them to a mirror is what the client does next (sweeps included).
  sim::SimState mirror = fuzz::baseState();
  sim::applyEdits(mirror, edits);
  return 0;
}

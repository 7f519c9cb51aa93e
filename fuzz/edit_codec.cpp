// The edit codec on the client (StepBatch.edits from a hostile server):
// decodeStepEdits and decodeEdits never crash and keep to their caps, and what they
// accept re-encodes to groups that decode to the same records (the codec is
// canonical up to grouping).
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "net/edit_codec.h"
#include "sim/step/mirror.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  constexpr std::size_t kMaxRecords = 1u << 14;
  std::vector<net::CellEdits> cells;
  if (!net::decodeStepEdits(fuzz::bytesOf(data, size), cells)) return 0;
  std::vector<sim::EditRecord> edits, all;
  std::vector<std::uint8_t> again;
  std::vector<sim::EditRecord> back;
  std::size_t budget = kMaxRecords;
  for (const net::CellEdits& c : cells) {
    if (!net::decodeEdits(c.edits, edits, budget)) return 0;
    if (net::editWeight(edits) > budget) std::abort();
    budget -= net::editWeight(edits);
    net::encodeEdits(edits, again);
    // The same records, perhaps regrouped (a hostile log may split a brick's groups).
    if (!net::decodeEdits(again, back, kMaxRecords) || back.size() != edits.size()) std::abort();
    all.insert(all.end(), edits.begin(), edits.end());
  }
  // Applying them to a mirror is what the client does next (sweeps included).
  sim::SimState mirror = fuzz::baseState();
  sim::applyEdits(mirror, all);
  return 0;
}

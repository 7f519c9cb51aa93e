// The edit codec on the client (StepBatch.edits from a hostile server): the input's
// first 4 bytes are the step's tick (little-endian), the rest the step's edits.
// decodeStepEdits and decodeEdits never crash and keep to their caps, every fire
// record they accept is one a follower can take (a brick corner; out, or burning at
// the tick for 1..65535 ticks with a valid uniform flag), and what they accept
// re-encodes to groups that decode to the same records (the codec is canonical up to
// grouping). What the client keeps of it (each record inside its cell, fire inside
// the world) then goes through applyStep on a mirror, which burns the fire itself.
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "net/edit_codec.h"
#include "sim/step/mirror.h"

namespace {

using namespace loam;

// Set records as of `tick` (32-bit, like FireChange's ticks) and out records.
bool followable(const sim::FireChange& f, std::uint32_t tick) {
  if (!(f.corner == sim::fireCellOf(f.corner))) return false;
  if (f.peak == 0) return f == sim::FireChange{f.corner};  // out: the brick alone
  if (f.endTick == 0) return false;                         // a set record is never read as out
  const std::uint32_t duration = f.endTick - f.start, age = tick - f.start;
  if (duration == 0 || duration > 65535 || age >= duration) return false;
  return f.flags == sim::kFireUniform || (f.flags == 0 && f.result == sim::kAir);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kMaxRecords = 1u << 14;
  if (size < 4) return 0;
  // Ticks past 2^32 - 2^16 (two years at 60 Hz) are left out: a fire record's end
  // (start + duration) would not fit FireChange's 32 bits.
  const std::uint32_t raw = data[0] | std::uint32_t{data[1]} << 8 | std::uint32_t{data[2]} << 16 |
                            std::uint32_t{data[3]} << 24;
  const std::uint32_t tick = raw % (0xffffffffu - 65535u);
  std::vector<net::CellEdits> cells;
  if (!net::decodeStepEdits(fuzz::bytesOf(data + 4, size - 4), cells)) return 0;
  std::vector<sim::EditRecord> edits, all, back;
  std::vector<sim::FireChange> fire, allFire, backFire;
  std::vector<std::uint8_t> again;
  const sim::SimState& base = fuzz::baseState();
  bool keep = true;  // what the client would apply: every record inside its cell (and fire inside the world)
  std::size_t budget = kMaxRecords;
  for (const net::CellEdits& c : cells) {
    if (!net::decodeEdits(c.edits, tick, edits, fire, budget)) return 0;
    if (edits.size() + fire.size() > budget) std::abort();
    budget -= edits.size() + fire.size();
    for (const sim::FireChange& f : fire)
      if (!followable(f, tick)) std::abort();
    net::encodeEdits(edits, fire, tick, again);
    // The same records, perhaps regrouped (a hostile log may split a brick's groups).
    if (!net::decodeEdits(again, tick, back, backFire, kMaxRecords) || back.size() != edits.size() || backFire != fire)
      std::abort();
    for (const sim::EditRecord& e : edits) keep = keep && sim::cellOf(sim::editBrick(e)) == c.cell;
    for (const sim::FireChange& f : fire) {
      const sim::BrickCoord b = sim::brickOf(f.corner);
      keep = keep && sim::cellOf(b) == c.cell && base.world.bounds().containsBrick(b);
    }
    all.insert(all.end(), edits.begin(), edits.end());
    allFire.insert(allFire.end(), fire.begin(), fire.end());
  }
  if (!keep) return 0;
  // Applying them to a mirror is what the client does next: the edits, then the
  // fire records, the mirror making the fire's edits itself.
  sim::SimState mirror = base;
  sim::StepRecords step;
  step.tick = tick;
  step.edits = all;
  step.fire = allFire;
  std::vector<sim::EditRecord> made;
  sim::applyStep(mirror, step, &made);
  return 0;
}

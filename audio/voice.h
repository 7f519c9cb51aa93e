// Voice: one running instance of a synthesis model (an impact, a fire, wind in a
// leaf cluster). Created on the control thread, then owned by the audio thread,
// which calls render() every block it is audible and skip() when it is virtual.
#pragma once
#include <array>
#include <cstdint>

namespace loam::audio {

/// A model's continuous inputs, refreshed by the control thread ~30-60 times a
/// second. The meaning of each slot is the model's (audio/models.h); models smooth
/// changes themselves so updates never click.
struct SynthParams {
  std::array<float, 6> v{};
};

class Voice {
 public:
  virtual ~Voice() = default;
  /// Writes frames (<= kBlockFrames) mono samples to out (overwrites). Audio thread:
  /// must not allocate, lock, log or wait. Returns false once a one-shot has ended
  /// (continuous models always return true).
  virtual bool render(float* out, int frames, const SynthParams& params) = 0;
  /// The voice is virtual (not heard) for frames: advance time cheaply, following
  /// params as render() would (levels, rates), so a voice made real again sounds as
  /// if it had played all along. Returns false once a one-shot has ended. Default:
  /// nothing to advance.
  virtual bool skip(int frames, const SynthParams& params) {
    (void)frames;
    (void)params;
    return true;
  }
  /// Rough loudness of the voice's output at gain 1 (linear RMS, for choosing which
  /// voices stay real). Default 0.3.
  virtual float loudness() const { return 0.3f; }
};

}  // namespace loam::audio

// FdnReverb: the room's reverberation, set from a RoomEstimate (audio/room_probe.h).
//
// A feedback delay network of 16 lines mixed through a Householder matrix
// (I - 2/N 11^T: lossless, one multiply-add per line). Delay lengths are distinct
// primes (so mutually prime: no shared resonances) spread geometrically over 1 to
// 2.5 times the mean free path's travel time. Each line ends in a 3-band loop filter:
// Linkwitz-Riley (8th order) crossovers at 500 Hz and 2 kHz, the low band aligned by
// an all-pass, so the bands sum to a pure all-pass and the loop gain at each band's
// centre is a linear mix of the three band gains; those gains are solved per line so
// that a component at 250 Hz / 1 kHz / 4 kHz loses 60 dB in the band's reverb time
// (the loop length includes the filters' group delay). Light modulation of each
// line's read position (cubic interpolation, +-1.5 samples, 0.1-1.2 Hz) breaks up
// metallic ringing. Stereo out from two orthogonal sign patterns over the lines.
//
// Changes: reverb times glide in log (time constant ~50 ms) and delay lengths slide
// at most 2% of a sample per sample, so setRoom() never clicks.
// Memory: every line is allocated at its maximum length at construction (1 MB);
// process() never allocates. Cost: ~0.3 ms CPU per 256-frame block (about 5% of one
// core; 16 lines x 18 biquads per sample), one instance per listener. Thread: setRoom() and process() from the same thread (the audio
// thread, e.g. through the engine's command queue); no locks inside.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace loam::audio {

/// Energy (sum of squares, both channels) of FdnReverb's impulse response for a room
/// of mean free path mfp (m) and reverb time rt (s): a fit 0.09 + 0.583 (rt/mfp)^0.82,
/// within 1.4 dB of the measured energy for mfp 0.7-24 m and rt 0.2-4 s. A reverb
/// level is set by dividing it out (audio/listener_acoustics.cpp).
inline float fdnImpulseEnergy(float mfp, float rt) noexcept {
  return 0.09f + 0.583f * std::pow(std::max(rt, 0.01f) / std::max(mfp, 0.1f), 0.82f);
}

class FdnReverb {
 public:
  static constexpr int kLines = 16;
  static constexpr int kMaxDelay = 16000;     ///< samples (mean free path up to ~40 m)
  static constexpr float kMaxMeanFreePath = 40.0f;

  /// Allocates the delay lines (16 x 16 k floats). key varies the modulation phases.
  explicit FdnReverb(std::uint64_t key = 0);

  /// New room: mean free path (m) and reverb times (s) for low/mid/high. Glides from
  /// the current values. No allocation.
  void setRoom(float meanFreePath, const std::array<float, 3>& rt60) noexcept;
  /// As setRoom() but takes effect at once (first use, tests).
  void jumpRoom(float meanFreePath, const std::array<float, 3>& rt60) noexcept;
  /// Reverberates frames mono samples of in into outL/outR (overwritten; wet only).
  /// in may alias neither output. No allocation, no locks.
  void process(const float* in, float* outL, float* outR, int frames) noexcept;
  /// Clears the tail (delay lines and filters).
  void reset() noexcept;

  /// Current delay lengths (samples) once slides settle: for tests.
  const std::array<float, kLines>& targetDelays() const noexcept { return targetLen_; }

 private:
  struct Bq {
    float b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0, z1 = 0, z2 = 0;
    float run(float x) noexcept {
      float y = b0 * x + z1;
      z1 = b1 * x - a1 * y + z2;
      z2 = b2 * x - a2 * y;
      return y;
    }
  };
  struct Line {
    std::vector<float> buf;
    int write = 0;
    float len = 1000;          // current delay (samples), slides to targetLen_
    // Crossovers at 500 Hz (A) and 2 kHz (B): Linkwitz-Riley 8th order, i.e. each
    // Butterworth-4 (two sections) twice; apB is B's all-pass (two sections).
    Bq lpA[4], hpA[4], lpB[4], hpB[4], apB[2];
    float g[3] = {0, 0, 0};    // band gains now
    float gStep[3] = {0, 0, 0};
    float modC = 1, modS = 0, modCosW = 1, modSinW = 0;  // quadrature oscillator
  };

  void designFilters() noexcept;
  void chooseDelays(float meanFreePath) noexcept;
  void targetGains(const Line& l, const float* rt, float* out) const noexcept;
  void blockGains(int frames, bool jump) noexcept;

  std::array<Line, kLines> lines_;
  std::array<float, kLines> targetLen_{};
  std::array<float, 3> rtTarget_{1, 1, 1}, rtNow_{1, 1, 1};
  float mfp_ = 3.0f;
  float bandMix_[3][3] = {};   // [centre k][band b]: |band b response| at centre k
  float groupDelay_[3] = {};   // loop filter group delay (samples) at each centre
};

}  // namespace loam::audio

// HRTF: binaural rendering of point sources around the listener's head.
//
// HrtfSet opens a SOFA file with libmysofa (Debian's MIT KEMAR set by default),
// resampled to 48 kHz and normalised on open, and hands out filter pairs for any
// direction, interpolated between the measured directions by libmysofa (its
// neighbourhood interpolation). The filters are cut to at most 256 taps (99.5% of the
// KEMAR set's energy at 48 kHz) with a short fade at the end.
//
// HrtfSource renders one source: direct convolution with the current pair; when the
// pair changes (the source or the head moved) the block is rendered with both pairs
// and crossfaded linearly, so moves never click. It also has a speaker-stereo mode
// (constant-power pan, for loudspeakers), crossfaded the same way.
//
// Threads: HrtfSet::filters() is control-thread work (libmysofa's lookup scratch is
// shared; not thread-safe). HrtfSource::setFilters()/setPan() and process() must be
// called from one thread (e.g. the audio thread applying queued commands); neither
// allocates. Cost: 2 x taps multiply-adds per sample (256 taps: ~25 M MAC/s per
// source, twice that in a crossfading block), so a mix binauralises its nearest few
// sources and pans the rest (or moves to partitioned FFT convolution later).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "audio/engine.h"  // Vec3f

struct MYSOFA_EASY;

namespace loam::audio {

/// The SOFA file Debian's libmysofa ships (MIT KEMAR, normal pinna).
inline constexpr const char* kDefaultSofaPath = "/usr/share/libmysofa/default.sofa";

/// A direction in the head's frame (SOFA axes): +front, +left, +up. Need not be unit.
struct HeadDirection {
  float front = 1, left = 0, up = 0;
};

/// The head-frame direction of world vector v for a listener with yaw (sim convention:
/// 0 = north = -z, clockwise seen from above; right = (cos yaw, 0, sin yaw)).
HeadDirection toHeadFrame(Vec3f v, float yaw) noexcept;

class HrtfSet {
 public:
  static constexpr int kMaxTaps = 256;

  /// Opens a SOFA file at 48 kHz (normalised). nullptr on failure, with the reason
  /// in *error when given. Allocates (libmysofa loads the whole set, ~1 MB).
  static std::unique_ptr<HrtfSet> open(const std::string& path = kDefaultSofaPath, std::string* error = nullptr);
  ~HrtfSet();
  HrtfSet(const HrtfSet&) = delete;
  HrtfSet& operator=(const HrtfSet&) = delete;

  /// Taps per ear of every filter (<= kMaxTaps).
  int taps() const noexcept { return taps_; }
  /// Writes the interpolated filter pair for direction d (taps() floats each). The
  /// file's broadband delays, if any, are folded into the taps. Control thread only;
  /// no allocation.
  void filters(HeadDirection d, float* left, float* right) const noexcept;

 private:
  HrtfSet() = default;
  MYSOFA_EASY* easy_ = nullptr;
  int fileTaps_ = 0;
  int taps_ = 0;
  mutable std::vector<float> scratchL_, scratchR_;
  std::vector<float> fade_;
};

/// Filter pairs precomputed from an HrtfSet on a direction grid (azimuth every
/// kAzimuthStep degrees, elevation every kElevationStep from -40 to +90), each
/// interpolated by libmysofa between the measured directions. Immutable once built,
/// so the audio thread may read it while the control thread does other things.
/// Memory: 2 KB per direction (72 x 14 = 1008 directions: 2 MB).
class HrtfTable {
 public:
  static constexpr int kAzimuthStep = 5;
  static constexpr int kElevationStep = 10;
  /// Builds the grid (control thread; ~1.3 k libmysofa lookups; allocates).
  explicit HrtfTable(const HrtfSet& set);
  int taps() const noexcept { return taps_; }
  /// Index of the grid direction nearest to d (any length; zero: straight ahead). No allocation.
  int nearest(HeadDirection d) const noexcept;
  const float* left(int index) const noexcept { return &data_[static_cast<std::size_t>(index) * 2 * taps_]; }
  const float* right(int index) const noexcept { return left(index) + taps_; }
  int size() const noexcept { return count_; }

 private:
  int taps_ = 0, count_ = 0;
  std::vector<float> data_;
};

/// The process-wide table of Debian's default set, built on first use (thread-safe
/// static); nullptr when the SOFA file can't be opened (reason in *error on that call).
const HrtfTable* defaultHrtfTable(std::string* error = nullptr);

class HrtfSource {
 public:
  /// A renderer for filters of `taps` taps (HrtfSet::taps()). Allocates its buffers.
  explicit HrtfSource(int taps);

  /// New binaural filter pair (taps floats each), used from the next block on with a
  /// one-block crossfade. No allocation.
  void setFilters(const float* left, const float* right) noexcept;
  /// Speaker-stereo mode: constant-power pan by d's azimuth (left-right component of
  /// the horizontal direction; overhead sources stay centred). Crossfades likewise.
  void setPan(HeadDirection d) noexcept;
  /// Renders frames (<= kBlockFrames) mono samples into outL/outR (overwritten).
  void process(const float* in, float* outL, float* outR, int frames) noexcept;
  /// Clears the input history (a new sound).
  void reset() noexcept;

 private:
  void convolve(const float* h, float* out, int frames) const noexcept;

  int taps_;
  bool binaural_ = true, nextBinaural_ = true, pending_ = false, primed_ = false;
  std::vector<float> curL_, curR_, nextL_, nextR_;
  std::vector<float> hist_;  // taps-1 past samples then the current block
  float gainL_ = 0.70710678f, gainR_ = 0.70710678f, nextGainL_ = 0.70710678f, nextGainR_ = 0.70710678f;
  std::vector<float> tmpB_;  // the incoming state's block while crossfading
};

}  // namespace loam::audio

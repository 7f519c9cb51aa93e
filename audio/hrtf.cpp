#include "audio/hrtf.h"

#include <mysofa.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "audio/dsp.h"

namespace loam::audio {

namespace {
constexpr int kFadeTaps = 32;  // raised-cosine fade at the cut
}

HeadDirection toHeadFrame(Vec3f v, float yaw) noexcept {
  float rx = std::cos(yaw), rz = std::sin(yaw);  // right
  float fx = rz, fz = -rx;                       // forward = (sin yaw, 0, -cos yaw)
  return {v.x * fx + v.z * fz, -(v.x * rx + v.z * rz), v.y};
}

std::unique_ptr<HrtfSet> HrtfSet::open(const std::string& path, std::string* error) {
  int filterLength = 0, err = 0;
  MYSOFA_EASY* easy = mysofa_open(path.c_str(), static_cast<float>(kSampleRate), &filterLength, &err);
  if (!easy || err != MYSOFA_OK || filterLength <= 0) {
    if (easy) mysofa_close(easy);
    if (error) *error = path + ": libmysofa error " + std::to_string(err);
    return nullptr;
  }
  std::unique_ptr<HrtfSet> s(new HrtfSet());
  s->easy_ = easy;
  s->fileTaps_ = filterLength;
  s->taps_ = std::min(filterLength, kMaxTaps);
  s->scratchL_.assign(static_cast<std::size_t>(filterLength), 0.0f);
  s->scratchR_.assign(static_cast<std::size_t>(filterLength), 0.0f);
  s->fade_.assign(static_cast<std::size_t>(s->taps_), 1.0f);
  if (filterLength > s->taps_) {
    for (int i = 0; i < kFadeTaps; ++i) {
      float x = static_cast<float>(i + 1) / (kFadeTaps + 1);
      s->fade_[static_cast<std::size_t>(s->taps_ - kFadeTaps + i)] = 0.5f + 0.5f * std::cos(kPi * x);
    }
  }
  return s;
}

HrtfSet::~HrtfSet() {
  if (easy_) mysofa_close(easy_);
}

void HrtfSet::filters(HeadDirection d, float* left, float* right) const noexcept {
  float len = std::sqrt(d.front * d.front + d.left * d.left + d.up * d.up);
  if (len < 1e-6f) d = {1, 0, 0};
  float delayL = 0, delayR = 0;
  mysofa_getfilter_float(easy_, d.front, d.left, d.up, scratchL_.data(), scratchR_.data(), &delayL, &delayR);
  // Broadband delays (seconds; zero in the KEMAR set) become a shift of the taps.
  int shiftL = std::clamp(static_cast<int>(std::lround(delayL * kSampleRate)), 0, taps_ - 1);
  int shiftR = std::clamp(static_cast<int>(std::lround(delayR * kSampleRate)), 0, taps_ - 1);
  for (int i = 0; i < taps_; ++i) {
    float fl = i >= shiftL ? scratchL_[static_cast<std::size_t>(i - shiftL)] : 0.0f;
    float fr = i >= shiftR ? scratchR_[static_cast<std::size_t>(i - shiftR)] : 0.0f;
    left[i] = fl * fade_[static_cast<std::size_t>(i)];
    right[i] = fr * fade_[static_cast<std::size_t>(i)];
  }
}

namespace {
constexpr int kAzimuths = 360 / HrtfTable::kAzimuthStep;
constexpr int kMinElevation = -40, kMaxElevation = 90;
constexpr int kElevations = (kMaxElevation - kMinElevation) / HrtfTable::kElevationStep + 1;

/// The head-frame direction of grid point (azimuth ai, elevation ei): azimuth counter-
/// clockwise from the front towards the left (SOFA), elevation up.
HeadDirection gridDirection(int ai, int ei) noexcept {
  float az = static_cast<float>(ai * HrtfTable::kAzimuthStep) * (kPi / 180.0f);
  float el = static_cast<float>(kMinElevation + ei * HrtfTable::kElevationStep) * (kPi / 180.0f);
  return {std::cos(el) * std::cos(az), std::cos(el) * std::sin(az), std::sin(el)};
}
}  // namespace

HrtfTable::HrtfTable(const HrtfSet& set) : taps_(set.taps()), count_(kAzimuths * kElevations) {
  data_.assign(static_cast<std::size_t>(count_) * 2 * static_cast<std::size_t>(taps_), 0.0f);
  for (int ei = 0; ei < kElevations; ++ei) {
    for (int ai = 0; ai < kAzimuths; ++ai) {
      int index = ei * kAzimuths + ai;
      float* l = &data_[static_cast<std::size_t>(index) * 2 * static_cast<std::size_t>(taps_)];
      set.filters(gridDirection(ai, ei), l, l + taps_);
    }
  }
}

int HrtfTable::nearest(HeadDirection d) const noexcept {
  float h = std::sqrt(d.front * d.front + d.left * d.left);
  if (h < 1e-9f && std::fabs(d.up) < 1e-9f) d = {1, 0, 0};  // zero: straight ahead
  float az = std::atan2(d.left, d.front) * (180.0f / kPi);  // -180..180
  float el = std::atan2(d.up, h) * (180.0f / kPi);          // -90..90
  int ai = static_cast<int>(std::lround(az / HrtfTable::kAzimuthStep));
  ai = ((ai % kAzimuths) + kAzimuths) % kAzimuths;
  int ei = static_cast<int>(std::lround((el - static_cast<float>(kMinElevation)) / HrtfTable::kElevationStep));
  ei = std::clamp(ei, 0, kElevations - 1);
  return ei * kAzimuths + ai;
}

const HrtfTable* defaultHrtfTable(std::string* error) {
  struct Holder {
    std::unique_ptr<HrtfTable> table;
    std::string error;
    Holder() {
      if (auto set = HrtfSet::open(kDefaultSofaPath, &error)) table = std::make_unique<HrtfTable>(*set);
    }
  };
  static const Holder holder;  // built once, thread-safe (magic static)
  if (!holder.table && error) *error = holder.error;
  return holder.table.get();
}

HrtfSource::HrtfSource(int taps) : taps_(std::clamp(taps, 1, HrtfSet::kMaxTaps)) {
  std::size_t t = static_cast<std::size_t>(taps_);
  curL_.assign(t, 0.0f);
  curR_.assign(t, 0.0f);
  nextL_.assign(t, 0.0f);
  nextR_.assign(t, 0.0f);
  hist_.assign(t - 1 + kBlockFrames, 0.0f);
  tmpB_.assign(2 * kBlockFrames, 0.0f);
}

void HrtfSource::setFilters(const float* left, const float* right) noexcept {
  std::memcpy(nextL_.data(), left, static_cast<std::size_t>(taps_) * sizeof(float));
  std::memcpy(nextR_.data(), right, static_cast<std::size_t>(taps_) * sizeof(float));
  nextBinaural_ = true;
  pending_ = true;
}

void HrtfSource::setPan(HeadDirection d) noexcept {
  float h = std::sqrt(d.front * d.front + d.left * d.left);
  float pan = h > 1e-6f ? -d.left / h : 0.0f;  // -1 left .. 1 right
  pan *= h / std::sqrt(h * h + d.up * d.up + 1e-12f);  // overhead: towards the centre
  nextGainL_ = std::cos((pan + 1.0f) * kPi * 0.25f);
  nextGainR_ = std::sin((pan + 1.0f) * kPi * 0.25f);
  nextBinaural_ = false;
  pending_ = true;
}

void HrtfSource::reset() noexcept {
  std::fill(hist_.begin(), hist_.end(), 0.0f);
  primed_ = false;  // a new sound: its first state is taken at once, not crossfaded
}

void HrtfSource::convolve(const float* h, float* out, int frames) const noexcept {
  // out[n] = sum_k h[k] x[n - k]; x[n - k] = hist_[taps - 1 + n - k]. Outputs in
  // chunks of 16 stay in registers over all taps (4-5x faster than an axpy per tap,
  // which reloads and stores out each tap); every output sums its taps in order
  // 0..taps-1 either way, so all paths give the same samples.
  const float* x = hist_.data() + (taps_ - 1);
  int n0 = 0;
#if defined(__SSE__)
  for (; n0 + 16 <= frames; n0 += 16) {
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const float* xs = x + n0;
    for (int k = 0; k < taps_; ++k, --xs) {
      const __m128 hk = _mm_set1_ps(h[k]);
      a0 = _mm_add_ps(a0, _mm_mul_ps(hk, _mm_loadu_ps(xs)));
      a1 = _mm_add_ps(a1, _mm_mul_ps(hk, _mm_loadu_ps(xs + 4)));
      a2 = _mm_add_ps(a2, _mm_mul_ps(hk, _mm_loadu_ps(xs + 8)));
      a3 = _mm_add_ps(a3, _mm_mul_ps(hk, _mm_loadu_ps(xs + 12)));
    }
    _mm_storeu_ps(out + n0, a0);
    _mm_storeu_ps(out + n0 + 4, a1);
    _mm_storeu_ps(out + n0 + 8, a2);
    _mm_storeu_ps(out + n0 + 12, a3);
  }
  for (int n = n0; n < frames; ++n) {  // a short block's tail
    float acc = 0.0f;
    for (int k = 0; k < taps_; ++k) acc += h[k] * x[n - k];
    out[n] = acc;
  }
#else
  // Elsewhere: an axpy per tap, which the compiler vectorises.
  std::fill(out, out + frames, 0.0f);
  for (int k = 0; k < taps_; ++k) {
    const float hk = h[k];
    const float* xs = x - k;
    for (int n = n0; n < frames; ++n) out[n] += hk * xs[n];
  }
#endif
}

void HrtfSource::process(const float* in, float* outL, float* outR, int frames) noexcept {
  frames = std::min(frames, kBlockFrames);
  std::memcpy(hist_.data() + (taps_ - 1), in, static_cast<std::size_t>(frames) * sizeof(float));
  auto takeNext = [this] {  // the pending state becomes the current one
    binaural_ = nextBinaural_;
    curL_.swap(nextL_);
    curR_.swap(nextR_);
    gainL_ = nextGainL_;
    gainR_ = nextGainR_;
    pending_ = false;
  };
  if (!primed_) {  // the first state is taken at once, not faded in from silence
    if (pending_) takeNext();
    primed_ = true;
  }
  auto render = [&](bool binaural, const std::vector<float>& hl, const std::vector<float>& hr, float gl, float gr,
                    float* l, float* r) {
    if (binaural) {
      convolve(hl.data(), l, frames);
      convolve(hr.data(), r, frames);
    } else {
      for (int n = 0; n < frames; ++n) {
        l[n] = gl * in[n];
        r[n] = gr * in[n];
      }
    }
  };
  render(binaural_, curL_, curR_, gainL_, gainR_, outL, outR);
  if (pending_) {
    float* l = tmpB_.data();
    float* r = tmpB_.data() + kBlockFrames;
    render(nextBinaural_, nextL_, nextR_, nextGainL_, nextGainR_, l, r);
    for (int n = 0; n < frames; ++n) {
      float w = static_cast<float>(n + 1) / static_cast<float>(frames);
      outL[n] += w * (l[n] - outL[n]);
      outR[n] += w * (r[n] - outR[n]);
    }
    takeNext();
  }
  // Keep the last taps-1 inputs for the next block.
  std::memmove(hist_.data(), hist_.data() + frames, static_cast<std::size_t>(taps_ - 1) * sizeof(float));
}

}  // namespace loam::audio

#include "audio/hrtf.h"

#include <mysofa.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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

void HrtfSource::reset() noexcept { std::fill(hist_.begin(), hist_.end(), 0.0f); }

void HrtfSource::convolve(const float* h, float* out, int frames) const noexcept {
  // out[n] = sum_k h[k] x[n - k]; x[n - k] = hist_[taps - 1 + n - k]. Loop over taps
  // outside so the inner loop is a plain axpy the compiler vectorises.
  std::fill(out, out + frames, 0.0f);
  const float* x = hist_.data() + (taps_ - 1);
  for (int k = 0; k < taps_; ++k) {
    const float hk = h[k];
    const float* xs = x - k;
    for (int n = 0; n < frames; ++n) out[n] += hk * xs[n];
  }
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

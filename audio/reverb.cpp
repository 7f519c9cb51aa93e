#include "audio/reverb.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define LOAM_REVERB_FTZ 1
#endif

#include "audio/dsp.h"

namespace loam::audio {

namespace {

constexpr int kBufSize = 16384;  // power of two > kMaxDelay + interpolation and modulation room
constexpr int kBufMask = kBufSize - 1;
constexpr float kModDepth = 1.5f;        // samples
constexpr float kSlidePerSample = 0.02f; // delay change, samples per sample
constexpr double kCrossA = 500.0, kCrossB = 2000.0;
// Butterworth-4 section Qs: a Linkwitz-Riley 8 is these two sections, twice.
constexpr double kQs[2] = {0.54119610014619698, 1.3065629648763766};
constexpr float kSoundSpeed = 343.0f;

using Cd = std::complex<double>;

struct Coefs {
  double b0, b1, b2, a1, a2;
};

/// RBJ cookbook designs: 0 low-pass, 1 high-pass, 2 all-pass.
Coefs design(double hz, double q, int kind) {
  double w = 2.0 * std::numbers::pi * hz / kSampleRate, c = std::cos(w), s = std::sin(w), alpha = s / (2.0 * q);
  double a0 = 1.0 + alpha, b0, b1, b2;
  if (kind == 0) { b0 = (1 - c) / 2; b1 = 1 - c; b2 = (1 - c) / 2; }
  else if (kind == 1) { b0 = (1 + c) / 2; b1 = -(1 + c); b2 = (1 + c) / 2; }
  else { b0 = 1 - alpha; b1 = -2 * c; b2 = 1 + alpha; }
  return {b0 / a0, b1 / a0, b2 / a0, -2 * c / a0, (1 - alpha) / a0};
}

Cd response(const Coefs& k, double hz) {
  double w = 2.0 * std::numbers::pi * hz / kSampleRate;
  Cd z1 = std::polar(1.0, -w), z2 = z1 * z1;
  return (k.b0 + k.b1 * z1 + k.b2 * z2) / (1.0 + k.a1 * z1 + k.a2 * z2);
}

bool isPrime(int n) {
  if (n < 2) return false;
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

/// In-place 16-point Walsh-Hadamard transform scaled by 1/4 (orthonormal, lossless).
inline void hadamard16(float* v) noexcept {
  for (int h = 1; h < 16; h <<= 1) {
    for (int i = 0; i < 16; i += h << 1) {
      for (int j = i; j < i + h; ++j) {
        float a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
  for (int i = 0; i < 16; ++i) v[i] *= 0.25f;
}

// Sign patterns for input and the two outputs (fixed: distinct, balanced).
constexpr float kIn[16] = {1, -1, 1, 1, -1, 1, -1, -1, 1, 1, -1, 1, -1, -1, 1, -1};
constexpr float kOutL[16] = {1, 1, -1, 1, -1, -1, 1, -1, 1, -1, 1, 1, -1, 1, -1, -1};
constexpr float kOutR[16] = {1, -1, -1, -1, 1, -1, 1, 1, -1, 1, 1, -1, -1, 1, 1, -1};

}  // namespace

FdnReverb::FdnReverb(std::uint64_t key) {
  KeyedRng rng(combineKey(key, 0x726576u));
  for (int i = 0; i < kLines; ++i) {
    Line& l = lines_[static_cast<std::size_t>(i)];
    l.buf.assign(kBufSize, 0.0f);
    double hz = 0.1 + 1.1 * (i + rng.uniform()) / kLines;  // 0.1-1.2 Hz, distinct per line
    double w = 2.0 * std::numbers::pi * hz / kSampleRate, ph = 2.0 * std::numbers::pi * rng.uniform();
    l.modCosW = static_cast<float>(std::cos(w));
    l.modSinW = static_cast<float>(std::sin(w));
    l.modC = static_cast<float>(std::cos(ph));
    l.modS = static_cast<float>(std::sin(ph));
  }
  designFilters();
  jumpRoom(mfp_, rtTarget_);
}

void FdnReverb::designFilters() noexcept {
  Coefs lpA[2], hpA[2], lpB[2], hpB[2], apB[2];
  for (int q = 0; q < 2; ++q) {
    lpA[q] = design(kCrossA, kQs[q], 0);
    hpA[q] = design(kCrossA, kQs[q], 1);
    lpB[q] = design(kCrossB, kQs[q], 0);
    hpB[q] = design(kCrossB, kQs[q], 1);
    apB[q] = design(kCrossB, kQs[q], 2);
  }
  auto set = [](Bq& b, const Coefs& c) {
    b.b0 = static_cast<float>(c.b0); b.b1 = static_cast<float>(c.b1); b.b2 = static_cast<float>(c.b2);
    b.a1 = static_cast<float>(c.a1); b.a2 = static_cast<float>(c.a2);
  };
  for (Line& l : lines_) {
    for (int s = 0; s < 4; ++s) {
      set(l.lpA[s], lpA[s & 1]); set(l.hpA[s], hpA[s & 1]); set(l.lpB[s], lpB[s & 1]); set(l.hpB[s], hpB[s & 1]);
    }
    set(l.apB[0], apB[0]);
    set(l.apB[1], apB[1]);
  }
  // Each branch's response: a Butterworth-4 squared.
  auto bw4sq = [](const Coefs* k, double hz) {
    Cd h = response(k[0], hz) * response(k[1], hz);
    return h * h;
  };
  // Band magnitudes at the centres, and the group delay of the (all-pass) sum.
  auto total = [&](double hz) {
    return (bw4sq(lpA, hz) + bw4sq(hpA, hz)) * response(apB[0], hz) * response(apB[1], hz);
  };
  const double centres[3] = {250.0, 1000.0, 4000.0};
  for (int k = 0; k < 3; ++k) {
    double f = centres[k];
    double la = std::abs(bw4sq(lpA, f)), ha = std::abs(bw4sq(hpA, f));
    double lb = std::abs(bw4sq(lpB, f)), hb = std::abs(bw4sq(hpB, f));
    bandMix_[k][0] = static_cast<float>(la);
    bandMix_[k][1] = static_cast<float>(ha * lb);
    bandMix_[k][2] = static_cast<float>(ha * hb);
    double df = 1.0, dw = 2.0 * std::numbers::pi * 2.0 * df / kSampleRate;
    double dph = std::arg(total(f + df) / total(f - df));
    groupDelay_[k] = static_cast<float>(-dph / dw);
  }
}

void FdnReverb::chooseDelays(float meanFreePath) noexcept {
  float mfp = std::clamp(meanFreePath, 0.5f, kMaxMeanFreePath);
  // Shortest line ~ one mean free path of travel, at least 5 ms (shorter lines make
  // the network ring at audible pitches); longest 2.5x that.
  double base = std::max(static_cast<double>(mfp) / kSoundSpeed * kSampleRate, 240.0);
  int used[kLines] = {};
  for (int i = 0; i < kLines; ++i) {
    int n = static_cast<int>(base * std::pow(2.5, static_cast<double>(i) / (kLines - 1)));
    n = std::min(n, kMaxDelay - 64);
    for (;; ++n) {
      if (!isPrime(n)) continue;
      bool dup = false;
      for (int j = 0; j < i; ++j) dup = dup || used[j] == n;
      if (!dup) break;
    }
    used[i] = n;
    targetLen_[static_cast<std::size_t>(i)] = static_cast<float>(n);
  }
}

void FdnReverb::targetGains(const Line& l, const float* rt, float* out) const noexcept {
  // Wanted loop gain at each centre, then solve bandMix_ * g = t (Cramer).
  double t[3];
  for (int k = 0; k < 3; ++k) {
    double loop = static_cast<double>(l.len) + groupDelay_[k];
    t[k] = std::pow(10.0, -3.0 * loop / (kSampleRate * std::max(0.05, static_cast<double>(rt[k]))));
  }
  double m[3][3];
  for (int k = 0; k < 3; ++k)
    for (int b = 0; b < 3; ++b) m[k][b] = bandMix_[k][b];
  auto det3 = [](double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  };
  double d = det3(m);
  for (int b = 0; b < 3; ++b) {
    double mb[3][3];
    for (int k = 0; k < 3; ++k)
      for (int c = 0; c < 3; ++c) mb[k][c] = c == b ? t[k] : m[k][c];
    out[b] = static_cast<float>(std::clamp(det3(mb) / d, 0.0, 0.99995));
  }
}

void FdnReverb::setRoom(float meanFreePath, const std::array<float, 3>& rt60) noexcept {
  mfp_ = meanFreePath;
  for (int b = 0; b < 3; ++b) rtTarget_[static_cast<std::size_t>(b)] = std::clamp(rt60[static_cast<std::size_t>(b)], 0.05f, 30.0f);
  chooseDelays(meanFreePath);
}

void FdnReverb::jumpRoom(float meanFreePath, const std::array<float, 3>& rt60) noexcept {
  setRoom(meanFreePath, rt60);
  rtNow_ = rtTarget_;
  for (int i = 0; i < kLines; ++i) lines_[static_cast<std::size_t>(i)].len = targetLen_[static_cast<std::size_t>(i)];
  blockGains(kBlockFrames, true);
}

void FdnReverb::blockGains(int frames, bool jump) noexcept {
  if (!jump) {
    float k = 1.0f - std::exp(-static_cast<float>(frames) / (0.05f * kSampleRate));
    for (int b = 0; b < 3; ++b) {
      std::size_t i = static_cast<std::size_t>(b);
      rtNow_[i] = std::exp(std::log(rtNow_[i]) + k * (std::log(rtTarget_[i]) - std::log(rtNow_[i])));
    }
  }
  for (Line& l : lines_) {
    float g[3];
    targetGains(l, rtNow_.data(), g);
    for (int b = 0; b < 3; ++b) {
      if (jump) {
        l.g[b] = g[b];
        l.gStep[b] = 0;
      } else {
        l.gStep[b] = (g[b] - l.g[b]) / static_cast<float>(frames);
      }
    }
  }
}

void FdnReverb::reset() noexcept {
  for (Line& l : lines_) {
    std::fill(l.buf.begin(), l.buf.end(), 0.0f);
    for (int s = 0; s < 4; ++s) {
      l.lpA[s].z1 = l.lpA[s].z2 = l.hpA[s].z1 = l.hpA[s].z2 = 0;
      l.lpB[s].z1 = l.lpB[s].z2 = l.hpB[s].z1 = l.hpB[s].z2 = 0;
    }
    l.apB[0].z1 = l.apB[0].z2 = l.apB[1].z1 = l.apB[1].z2 = 0;
  }
}

void FdnReverb::process(const float* in, float* outL, float* outR, int frames) noexcept {
#ifdef LOAM_REVERB_FTZ
  // Tails decay into denormals; flush them (restored on return).
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u);
#endif
  for (int start = 0; start < frames; start += kBlockFrames) {
    const int n = std::min(kBlockFrames, frames - start);
    blockGains(n, false);
    float slide[kLines];
    for (int i = 0; i < kLines; ++i) {
      const Line& l = lines_[static_cast<std::size_t>(i)];
      slide[i] = std::clamp((targetLen_[static_cast<std::size_t>(i)] - l.len) / static_cast<float>(n), -kSlidePerSample,
                            kSlidePerSample);
    }
    for (int f = 0; f < n; ++f) {
      float v[kLines];
      const float x = in[start + f];
      float sl = 0, sr = 0;
      for (int i = 0; i < kLines; ++i) {
        Line& l = lines_[static_cast<std::size_t>(i)];
        // Modulated read with cubic (Catmull-Rom) interpolation.
        float c = l.modC * l.modCosW - l.modS * l.modSinW;
        l.modS = l.modS * l.modCosW + l.modC * l.modSinW;
        l.modC = c;
        l.len += slide[i];
        float pos = static_cast<float>(l.write) - l.len - kModDepth * l.modS;
        float fl = std::floor(pos);
        float fr = pos - fl;
        int i1 = static_cast<int>(fl);
        float xm1 = l.buf[static_cast<std::size_t>((i1 - 1) & kBufMask)], x0 = l.buf[static_cast<std::size_t>(i1 & kBufMask)];
        float x1 = l.buf[static_cast<std::size_t>((i1 + 1) & kBufMask)], x2 = l.buf[static_cast<std::size_t>((i1 + 2) & kBufMask)];
        float a = 0.5f * (x1 - xm1), b = xm1 - 2.5f * x0 + 2.0f * x1 - 0.5f * x2, cc = 0.5f * (x2 - xm1) + 1.5f * (x0 - x1);
        float out = ((cc * fr + b) * fr + a) * fr + x0;
        sl += kOutL[i] * out;
        sr += kOutR[i] * out;
        // 3-band loop filter (all bands share one all-pass phase).
        float lo = out, rest = out;
        for (Bq& q : l.lpA) lo = q.run(lo);
        lo = l.apB[1].run(l.apB[0].run(lo));
        for (Bq& q : l.hpA) rest = q.run(rest);
        float mid = rest, hi = rest;
        for (Bq& q : l.lpB) mid = q.run(mid);
        for (Bq& q : l.hpB) hi = q.run(hi);
        l.g[0] += l.gStep[0];
        l.g[1] += l.gStep[1];
        l.g[2] += l.gStep[2];
        v[i] = l.g[0] * lo + l.g[1] * mid + l.g[2] * hi;
      }
      hadamard16(v);
      for (int i = 0; i < kLines; ++i) {
        Line& l = lines_[static_cast<std::size_t>(i)];
        l.buf[static_cast<std::size_t>(l.write)] = v[i] + 0.25f * kIn[i] * x;
        l.write = (l.write + 1) & kBufMask;
      }
      outL[start + f] = 0.25f * sl;
      outR[start + f] = 0.25f * sr;
    }
    // Keep the modulation oscillators on the unit circle.
    for (Line& l : lines_) {
      float r = 1.0f / std::sqrt(l.modC * l.modC + l.modS * l.modS);
      l.modC *= r;
      l.modS *= r;
    }
  }
#ifdef LOAM_REVERB_FTZ
  _mm_setcsr(csr);
#endif
}

}  // namespace loam::audio

#include "audio/spectrum.h"

#include <kissfft/kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace loam::audio {
namespace {

constexpr int kFrame = 2048;
constexpr int kHop = 1024;

struct FftrDeleter {
  void operator()(kiss_fftr_state* s) const { kiss_fftr_free(s); }
};

/// Calls fn(power spectrum of one Hann-windowed frame) for every frame (a short
/// signal is zero-padded into one frame).
template <class F>
void forEachPowerFrame(std::span<const float> x, int fftSize, int hop, F&& fn) {
  std::unique_ptr<kiss_fftr_state, FftrDeleter> cfg(kiss_fftr_alloc(fftSize, 0, nullptr, nullptr));
  std::vector<float> in(static_cast<std::size_t>(fftSize));
  std::vector<kiss_fft_cpx> out(static_cast<std::size_t>(fftSize / 2 + 1));
  std::vector<double> power(out.size());
  std::size_t n = x.size();
  for (std::size_t start = 0; start == 0 || start + static_cast<std::size_t>(fftSize) <= n;
       start += static_cast<std::size_t>(hop)) {
    for (int i = 0; i < fftSize; ++i) {
      std::size_t j = start + static_cast<std::size_t>(i);
      float w = 0.5f - 0.5f * std::cos(2.0f * 3.14159265f * static_cast<float>(i) / static_cast<float>(fftSize));
      in[static_cast<std::size_t>(i)] = j < n ? x[j] * w : 0.0f;
    }
    kiss_fftr(cfg.get(), in.data(), out.data());
    for (std::size_t k = 0; k < out.size(); ++k) {
      power[k] = static_cast<double>(out[k].r) * out[k].r + static_cast<double>(out[k].i) * out[k].i;
    }
    fn(power);
    if (n < static_cast<std::size_t>(fftSize)) break;
  }
}

}  // namespace

std::vector<float> toMono(std::span<const float> interleaved, int channels) {
  std::vector<float> mono(interleaved.size() / static_cast<std::size_t>(channels));
  for (std::size_t i = 0; i < mono.size(); ++i) {
    float s = 0;
    for (int c = 0; c < channels; ++c) s += interleaved[i * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)];
    mono[i] = s / static_cast<float>(channels);
  }
  return mono;
}

double rms(std::span<const float> mono) {
  if (mono.empty()) return 0;
  double sum = 0;
  for (float s : mono) sum += static_cast<double>(s) * s;
  return std::sqrt(sum / static_cast<double>(mono.size()));
}

double spectralCentroid(std::span<const float> mono, int sampleRate) {
  double weighted = 0, total = 0;
  double binHz = static_cast<double>(sampleRate) / kFrame;
  forEachPowerFrame(mono, kFrame, kHop, [&](const std::vector<double>& p) {
    for (std::size_t k = 1; k < p.size(); ++k) {
      weighted += p[k] * static_cast<double>(k) * binHz;
      total += p[k];
    }
  });
  return total > 0 ? weighted / total : 0;
}

double spectralFlatness(std::span<const float> mono, int sampleRate) {
  double binHz = static_cast<double>(sampleRate) / kFrame;
  auto lo = static_cast<std::size_t>(50.0 / binHz) + 1, hi = static_cast<std::size_t>(16000.0 / binHz);
  double sumFlat = 0, sumEnergy = 0;
  forEachPowerFrame(mono, kFrame, kHop, [&](const std::vector<double>& p) {
    double logSum = 0, sum = 0;
    std::size_t count = 0;
    for (std::size_t k = lo; k <= hi && k < p.size(); ++k, ++count) {
      logSum += std::log(p[k] + 1e-20);
      sum += p[k];
    }
    if (count == 0 || sum <= 0) return;
    double flat = std::exp(logSum / static_cast<double>(count)) / (sum / static_cast<double>(count));
    sumFlat += flat * sum;
    sumEnergy += sum;
  });
  return sumEnergy > 0 ? sumFlat / sumEnergy : 0;
}

double bandShare(std::span<const float> mono, int sampleRate, double loHz, double hiHz) {
  double in = 0, total = 0, binHz = static_cast<double>(sampleRate) / kFrame;
  forEachPowerFrame(mono, kFrame, kHop, [&](const std::vector<double>& p) {
    for (std::size_t k = 1; k < p.size(); ++k) {
      double f = static_cast<double>(k) * binHz;
      total += p[k];
      if (f >= loHz && f < hiHz) in += p[k];
    }
  });
  return total > 0 ? in / total : 0;
}

std::vector<std::vector<float>> spectrogramDb(std::span<const float> mono, int fftSize, int hop) {
  std::vector<std::vector<float>> frames;
  forEachPowerFrame(mono, fftSize, hop, [&](const std::vector<double>& p) {
    std::vector<float> db(p.size());
    for (std::size_t k = 0; k < p.size(); ++k) db[k] = static_cast<float>(10.0 * std::log10(p[k] + 1e-12));
    frames.push_back(std::move(db));
  });
  return frames;
}

}  // namespace loam::audio

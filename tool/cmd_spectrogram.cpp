// `loam-tool spectrogram`: draws a WAV's spectrogram as a PNG (time left to right,
// frequency bottom to top on a log or linear axis, level as colour over a dB range
// below the loudest bin). For docs/AUDIO.md and for looking at renders by eye.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <stb/stb_image_write.h>

#include "audio/offline_render.h"
#include "audio/spectrum.h"
#include "tool/commands.h"

namespace loam::tool {
namespace {

/// A dark-to-bright colour ramp (black, indigo, magenta, orange, pale yellow) for t in 0..1.
std::array<std::uint8_t, 3> heat(float t) {
  static constexpr float kStops[5][3] = {{0, 0, 4}, {60, 15, 110}, {185, 50, 110}, {250, 140, 30}, {252, 250, 200}};
  t = std::clamp(t, 0.0f, 1.0f) * 4.0f;
  int i = std::min(3, static_cast<int>(t));
  float f = t - static_cast<float>(i);
  std::array<std::uint8_t, 3> c{};
  for (int k = 0; k < 3; ++k) {
    c[static_cast<std::size_t>(k)] =
        static_cast<std::uint8_t>(std::lround(kStops[i][k] + (kStops[i + 1][k] - kStops[i][k]) * f));
  }
  return c;
}

}  // namespace

void addSpectrogramCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string in, out;
    int fft = 2048;
    int hop = 512;
    int height = 512;
    int maxWidth = 2400;
    double range = 75.0;
    bool linear = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("spectrogram", "Draw a WAV's spectrogram as a PNG");
  cmd->add_option("in", opt->in, "Input WAV (any format libsndfile reads)")->required();
  cmd->add_option("out", opt->out, "Output PNG")->required();
  cmd->add_option("--fft", opt->fft, "FFT size (power of two)")->check(CLI::Range(64, 65536));
  cmd->add_option("--hop", opt->hop, "Hop in samples")->check(CLI::Range(1, 65536));
  cmd->add_option("--height", opt->height, "Image height in pixels")->check(CLI::Range(64, 4096));
  cmd->add_option("--max-width", opt->maxWidth, "Frames are merged (max) to keep at most this many columns")
      ->check(CLI::Range(16, 65536));
  cmd->add_option("--range", opt->range, "dB below the loudest bin drawn (the rest is black)")
      ->check(CLI::Range(10.0, 200.0));
  cmd->add_flag("--linear", opt->linear, "Linear frequency axis (default: logarithmic, 20 Hz to Nyquist)");
  cmd->callback([opt, &exitCode] {
    if ((opt->fft & (opt->fft - 1)) != 0) {
      std::fprintf(stderr, "loam-tool spectrogram: --fft must be a power of two\n");
      exitCode = 2;
      return;
    }
    int channels = 0, rate = 0;
    auto wav = audio::readWav(opt->in, channels, rate);
    if (!wav) {
      std::fprintf(stderr, "loam-tool spectrogram: %s\n", wav.error().message.c_str());
      exitCode = 2;
      return;
    }
    std::vector<float> mono = audio::toMono(*wav, channels);
    auto frames = audio::spectrogramDb(mono, opt->fft, opt->hop);
    if (frames.empty()) {
      std::fprintf(stderr, "loam-tool spectrogram: %s is shorter than one FFT frame\n", opt->in.c_str());
      exitCode = 2;
      return;
    }
    const int bins = static_cast<int>(frames[0].size());
    const int per = static_cast<int>((frames.size() + static_cast<std::size_t>(opt->maxWidth) - 1) /
                                     static_cast<std::size_t>(opt->maxWidth));
    const int width =
        static_cast<int>((frames.size() + static_cast<std::size_t>(per) - 1) / static_cast<std::size_t>(per));
    const int height = opt->height;
    float top = -1e30f;
    for (const auto& f : frames) top = std::max(top, *std::max_element(f.begin(), f.end()));
    const double nyquist = rate / 2.0, binHz = static_cast<double>(rate) / opt->fft;
    const double fLo = opt->linear ? 0.0 : 20.0;
    // Row r (0 = top) covers [freq(r + 1), freq(r)); each pixel shows the loudest bin in it.
    auto freq = [&](double r) {
      double t = 1.0 - r / height;
      return opt->linear ? t * nyquist : fLo * std::pow(nyquist / fLo, t);
    };
    // Rows narrower than a bin (the low end of a log axis) interpolate between the two
    // bins around the row's centre instead of repeating one bin as a block.
    std::vector<int> binLo(static_cast<std::size_t>(height)), binHi(static_cast<std::size_t>(height));
    std::vector<float> interp(static_cast<std::size_t>(height), -1.0f);
    for (int r = 0; r < height; ++r) {
      int lo = static_cast<int>(std::floor(freq(r + 1) / binHz));
      int hi = static_cast<int>(std::ceil(freq(r) / binHz));
      lo = std::clamp(lo, 0, bins - 1);
      hi = std::clamp(hi, lo + 1, bins);
      binLo[static_cast<std::size_t>(r)] = lo;
      binHi[static_cast<std::size_t>(r)] = hi;
      double centre = freq(r + 0.5) / binHz;
      if (hi - lo <= 2 && centre + 1 < bins) interp[static_cast<std::size_t>(r)] = static_cast<float>(centre);
    }
    std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
    for (int x = 0; x < width; ++x) {
      for (int r = 0; r < height; ++r) {
        float db = -1e30f;
        for (int f = x * per; f < std::min<int>((x + 1) * per, static_cast<int>(frames.size())); ++f) {
          const auto& col = frames[static_cast<std::size_t>(f)];
          if (float c = interp[static_cast<std::size_t>(r)]; c >= 0.0f) {
            auto b = static_cast<std::size_t>(c);
            float t = c - static_cast<float>(b);
            db = std::max(db, col[b] + (col[b + 1] - col[b]) * t);
            continue;
          }
          for (int b = binLo[static_cast<std::size_t>(r)]; b < binHi[static_cast<std::size_t>(r)]; ++b) {
            db = std::max(db, col[static_cast<std::size_t>(b)]);
          }
        }
        auto c = heat(1.0f + (db - top) / static_cast<float>(opt->range));
        std::uint8_t* px =
            &rgb[(static_cast<std::size_t>(r) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3];
        px[0] = c[0];
        px[1] = c[1];
        px[2] = c[2];
      }
    }
    // Faint guide lines: 100 Hz, 1 kHz, 10 kHz (log axis) or every 5 kHz (linear).
    std::vector<double> guides;
    if (opt->linear) {
      for (double g = 5000; g < nyquist; g += 5000) guides.push_back(g);
    } else {
      guides = {100.0, 1000.0, 10000.0};
    }
    for (double g : guides) {
      double t = opt->linear ? g / nyquist : std::log(g / fLo) / std::log(nyquist / fLo);
      int r = static_cast<int>(std::lround((1.0 - t) * height));
      if (r < 0 || r >= height) continue;
      for (int x = 0; x < width; x += 4) {
        std::uint8_t* px =
            &rgb[(static_cast<std::size_t>(r) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3];
        px[0] = px[1] = px[2] = 128;
      }
    }
    if (!stbi_write_png(opt->out.c_str(), width, height, 3, rgb.data(), width * 3)) {
      std::fprintf(stderr, "loam-tool spectrogram: cannot write %s\n", opt->out.c_str());
      exitCode = 1;
      return;
    }
    std::fprintf(stderr, "spectrogram: %d x %d px, %zu frames (fft %d, hop %d), %s axis, %.0f dB range\n", width,
                 height, frames.size(), opt->fft, opt->hop, opt->linear ? "linear" : "log", opt->range);
    exitCode = 0;
  });
}

}  // namespace loam::tool

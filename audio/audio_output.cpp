// AudioOutput: PortAudio's default output device (see audio_output.h).
//
// The device may ask for any number of frames per callback; the engine renders whole
// blocks of kBlockFrames. A one-block ring between them holds the rest of the last
// block: the callback copies from it and renders another block when it runs out.
// Nothing in the callback allocates, locks, logs or waits.
#include "audio/audio_output.h"

#include <portaudio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#if defined(__unix__)
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#endif

namespace loam::audio {
namespace {

constexpr std::int64_t kBlockNs = std::int64_t{1'000'000'000} * kBlockFrames / kSampleRate;

/// This thread's CPU time in ns (0 where the platform has no per-thread clock).
std::int64_t threadCpuNs() noexcept {
#if defined(__unix__)
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
#else
  return 0;
#endif
}

/// Pa_Initialize with stderr muted: on machines without a sound card ALSA and JACK
/// print dozens of lines while PortAudio probes them; the caller logs one clear line
/// instead. (Other threads' stderr output during these ~40 ms is lost too.)
PaError initialiseQuietly() {
#if defined(__unix__)
  std::fflush(stderr);
  int saved = dup(STDERR_FILENO);
  int null = ::open("/dev/null", O_WRONLY);
  if (saved >= 0 && null >= 0) dup2(null, STDERR_FILENO);
  if (null >= 0) close(null);
  PaError err = Pa_Initialize();
  std::fflush(stderr);
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
  }
  return err;
#else
  return Pa_Initialize();
#endif
}

}  // namespace

struct AudioOutput::Impl {
  AudioEngine* engine = nullptr;
  PaStream* stream = nullptr;
  bool initialised = false;
  std::array<float, kBlockFrames * 2> block{};
  int used = kBlockFrames;  ///< frames of `block` already played
  std::atomic<std::uint64_t> callbacks{0};
  std::atomic<std::uint64_t> underruns{0};
  std::atomic<std::uint64_t> blocks{0}, slowBlocks{0}, slowBlocksCpu{0};
  std::atomic<std::int64_t> maxBlockNs{0}, maxBlockCpuNs{0};
  double latencyMs = 0;
  std::string device;

  ~Impl() {
    if (stream) {
      Pa_StopStream(stream);
      Pa_CloseStream(stream);
    }
    if (initialised) Pa_Terminate();
  }

  static int callback(const void* /*input*/, void* output, unsigned long frames,
                      const PaStreamCallbackTimeInfo* /*time*/, PaStreamCallbackFlags flags, void* user) noexcept {
    auto* self = static_cast<Impl*>(user);
    self->callbacks.fetch_add(1, std::memory_order_relaxed);
    if (flags & paOutputUnderflow) self->underruns.fetch_add(1, std::memory_order_relaxed);
    auto* out = static_cast<float*>(output);
    unsigned long done = 0;
    while (done < frames) {
      if (self->used >= kBlockFrames) {
        // Timed: a block that takes longer than it lasts is a dropout in the making.
        auto t0 = std::chrono::steady_clock::now();
        std::int64_t c0 = threadCpuNs();
        self->engine->renderBlock(self->block.data());
        std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        std::int64_t cpu = threadCpuNs() - c0;
        self->blocks.fetch_add(1, std::memory_order_relaxed);
        if (ns > kBlockNs) self->slowBlocks.fetch_add(1, std::memory_order_relaxed);
        if (cpu > kBlockNs) self->slowBlocksCpu.fetch_add(1, std::memory_order_relaxed);
        if (ns > self->maxBlockNs.load(std::memory_order_relaxed)) self->maxBlockNs.store(ns, std::memory_order_relaxed);
        if (cpu > self->maxBlockCpuNs.load(std::memory_order_relaxed))
          self->maxBlockCpuNs.store(cpu, std::memory_order_relaxed);
        self->used = 0;
      }
      unsigned long n = std::min<unsigned long>(frames - done, static_cast<unsigned long>(kBlockFrames - self->used));
      std::memcpy(out + done * 2, self->block.data() + self->used * 2, n * 2 * sizeof(float));
      self->used += static_cast<int>(n);
      done += n;
    }
    return paContinue;
  }
};

sim::Result<std::unique_ptr<AudioOutput>> AudioOutput::open(AudioEngine& engine) {
  auto impl = std::make_unique<Impl>();
  impl->engine = &engine;
  PaError err = initialiseQuietly();
  if (err != paNoError) return sim::makeError(std::string("no audio output device: ") + Pa_GetErrorText(err));
  impl->initialised = true;
  PaDeviceIndex dev = Pa_GetDefaultOutputDevice();
  if (dev == paNoDevice) {
    int count = Pa_GetDeviceCount();
    return sim::makeError("no audio output device: PortAudio found no default output (" +
                          std::to_string(count < 0 ? 0 : count) + " devices)");
  }
  const PaDeviceInfo* info = Pa_GetDeviceInfo(dev);
  if (!info || info->maxOutputChannels < 2) {
    return sim::makeError("no audio output device: the default device has no stereo output");
  }
  PaStreamParameters params{};
  params.device = dev;
  params.channelCount = 2;
  params.sampleFormat = paFloat32;
  params.suggestedLatency = info->defaultLowOutputLatency;
  params.hostApiSpecificStreamInfo = nullptr;
  err = Pa_OpenStream(&impl->stream, nullptr, &params, kSampleRate, paFramesPerBufferUnspecified, paNoFlag,
                      &Impl::callback, impl.get());
  if (err != paNoError) {
    impl->stream = nullptr;
    return sim::makeError(std::string("no audio output device: cannot open ") + (info->name ? info->name : "?") + ": " +
                          Pa_GetErrorText(err));
  }
  err = Pa_StartStream(impl->stream);
  if (err != paNoError) {
    return sim::makeError(std::string("no audio output device: cannot start ") + (info->name ? info->name : "?") +
                          ": " + Pa_GetErrorText(err));
  }
  if (const PaStreamInfo* si = Pa_GetStreamInfo(impl->stream)) impl->latencyMs = si->outputLatency * 1000.0;
  impl->device = info->name ? info->name : "";
  return std::unique_ptr<AudioOutput>(new AudioOutput(std::move(impl)));
}

AudioOutput::AudioOutput(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AudioOutput::~AudioOutput() = default;

AudioOutputStats AudioOutput::stats() const {
  AudioOutputStats s;
  s.callbacks = impl_->callbacks.load(std::memory_order_relaxed);
  s.underruns = impl_->underruns.load(std::memory_order_relaxed);
  s.latencyMs = impl_->latencyMs;
  s.device = impl_->device;
  s.blocks = impl_->blocks.load(std::memory_order_relaxed);
  s.slowBlocks = impl_->slowBlocks.load(std::memory_order_relaxed);
  s.maxBlockMs = static_cast<double>(impl_->maxBlockNs.load(std::memory_order_relaxed)) / 1e6;
  s.slowBlocksCpu = impl_->slowBlocksCpu.load(std::memory_order_relaxed);
  s.maxBlockCpuMs = static_cast<double>(impl_->maxBlockCpuNs.load(std::memory_order_relaxed)) / 1e6;
  return s;
}

}  // namespace loam::audio

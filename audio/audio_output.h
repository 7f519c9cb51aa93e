// AudioOutput: plays an AudioEngine through PortAudio's default output device at
// 48 kHz stereo with low latency. The PortAudio callback only calls renderBlock
// (pulling whole engine blocks through a small fixed ring when the device asks for
// other sizes) and counts underruns. No device: open() fails with a clear message and
// the caller runs silent.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include "audio/engine.h"
#include "sim/core/result.h"

namespace loam::audio {

struct AudioOutputStats {
  std::uint64_t callbacks = 0;
  std::uint64_t underruns = 0;   ///< output underflow flags reported by PortAudio
  double latencyMs = 0;          ///< the stream's output latency
  std::uint64_t blocks = 0;      ///< engine blocks rendered in callbacks
  std::uint64_t slowBlocks = 0;  ///< blocks whose rendering took longer than the block lasts (5.33 ms), wall clock
  /// ... counting only the audio thread's own CPU time: the work, without the time
  /// the thread was not running (preempted, or the machine stalled)
  std::uint64_t slowBlocksCpu = 0;
  double maxBlockMs = 0;         ///< the slowest block's rendering time (wall clock)
  double maxBlockCpuMs = 0;      ///< the most CPU time one block took
  std::string device;
};

class AudioOutput {
 public:
  /// Opens and starts the default device. Errors: "no audio output device" etc.
  static sim::Result<std::unique_ptr<AudioOutput>> open(AudioEngine& engine);
  ~AudioOutput();  ///< stops the stream and terminates PortAudio
  AudioOutput(const AudioOutput&) = delete;
  AudioOutput& operator=(const AudioOutput&) = delete;
  AudioOutputStats stats() const;

 private:
  struct Impl;
  explicit AudioOutput(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::audio

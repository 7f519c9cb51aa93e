// Spectral measurements on rendered audio (kissfft): what tests assert on and what
// `loam-tool spectrogram` draws. Frames of 2048 samples with a Hann window, hop 1024.
#pragma once
#include <span>
#include <vector>

namespace loam::audio {

/// Averages the channels of interleaved samples.
std::vector<float> toMono(std::span<const float> interleaved, int channels);
/// Root mean square level.
double rms(std::span<const float> mono);
/// Energy-weighted mean frequency (Hz) over the whole signal's power spectrum.
double spectralCentroid(std::span<const float> mono, int sampleRate);
/// Geometric over arithmetic mean of the power spectrum (0 tonal .. 1 white noise),
/// over bins from 50 Hz to 16 kHz, averaged over frames weighted by their energy.
double spectralFlatness(std::span<const float> mono, int sampleRate);
/// Share of the power spectrum between loHz and hiHz (0..1).
double bandShare(std::span<const float> mono, int sampleRate, double loHz, double hiHz);
/// Magnitudes in dB (frames x (fftSize/2+1) bins), for spectrograms.
std::vector<std::vector<float>> spectrogramDb(std::span<const float> mono, int fftSize, int hop);

}  // namespace loam::audio

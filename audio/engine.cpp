// AudioEngine: command/retire rings between the control and audio threads, the
// emitter table, real/virtual voice selection, spatialisation and the master bus.
// Everything the audio thread touches is sized in the constructor (engine.h).
#include "audio/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <unordered_map>
#include <vector>

namespace loam::audio {
namespace {

/// Wait-free single-producer/single-consumer ring of trivially copyable items.
/// One slot stays empty to tell full from empty. Sized once; push/pop never allocate.
template <class T>
class SpscRing {
 public:
  explicit SpscRing(std::size_t capacity) : items_(capacity + 1) {}
  std::size_t capacity() const { return items_.size() - 1; }
  /// Producer only. False when full.
  bool push(const T& item) {
    std::size_t tail = tail_.load(std::memory_order_relaxed);
    std::size_t next = tail + 1 == items_.size() ? 0 : tail + 1;
    if (next == head_.load(std::memory_order_acquire)) return false;
    items_[tail] = item;
    tail_.store(next, std::memory_order_release);
    return true;
  }
  /// Consumer only. False when empty.
  bool pop(T& item) {
    std::size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    item = items_[head];
    head_.store(head + 1 == items_.size() ? 0 : head + 1, std::memory_order_release);
    return true;
  }

 private:
  std::vector<T> items_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

enum class CmdType : std::uint8_t { Start, Update, Stop, Listener, MasterGain };

struct Cmd {
  CmdType type = CmdType::Update;
  EmitterId id = 0;
  std::uint64_t serial = 0;  ///< Start: which start this is (alive() bookkeeping)
  Voice* voice = nullptr;    ///< Start: ownership passes to the audio side
  EmitterState state;
  Listener listener;
  float gain = 1.0f;
};

/// A voice handed back to the control thread for deletion.
struct Retired {
  EmitterId id = 0;
  std::uint64_t serial = 0;
  Voice* voice = nullptr;
};

constexpr float kRefDistance = 1.0f;     ///< m: full level at and inside 1 m
constexpr float kMaxDistance = 1000.0f;  ///< m: attenuation stops falling
constexpr float kHysteresis = 2.0f;      ///< a real voice must be beaten by 6 dB to lose its place
constexpr float kInaudible = 1e-6f;      ///< audibility below -120 dB is never made real
constexpr float kFadeStep = 1.0f / kFadeFrames;

struct Slot {
  bool used = false;
  bool stopping = false;  ///< fading out, then retired
  bool real = false;      ///< rendered last block (or fading out this block)
  bool fresh = true;      ///< never rendered nor skipped: enters without a fade
  bool want = false;      ///< chosen to be real this block (scratch)
  bool hold = false;      ///< fresh and wanted but no place yet: wait, keep the attack (scratch)
  EmitterId id = 0;
  std::uint64_t serial = 0;
  Voice* voice = nullptr;
  EmitterState state;
  float fade = 0.0f;        ///< current fade gain 0..1
  float gainL = 0.0f, gainR = 0.0f;  ///< last block's end gains (interpolated per block)
  OnePole air;
  float score = 0.0f;       ///< audibility this block
};

/// Open-addressing id -> slot map, sized at construction (load <= 0.5); deletion by
/// backward shift, so there are no tombstones and lookups stay short.
class IdMap {
 public:
  explicit IdMap(int maxEntries) {
    std::size_t cap = 16;
    while (cap < static_cast<std::size_t>(maxEntries) * 2) cap <<= 1;
    keys_.assign(cap, 0);
    vals_.assign(cap, -1);
    mask_ = cap - 1;
  }
  int find(EmitterId id) const {
    for (std::size_t i = home(id);; i = (i + 1) & mask_) {
      if (vals_[i] < 0) return -1;
      if (keys_[i] == id) return vals_[i];
    }
  }
  void set(EmitterId id, int slot) {
    std::size_t i = home(id);
    while (vals_[i] >= 0 && keys_[i] != id) i = (i + 1) & mask_;
    keys_[i] = id;
    vals_[i] = slot;
  }
  void erase(EmitterId id) {
    std::size_t i = home(id);
    while (true) {
      if (vals_[i] < 0) return;
      if (keys_[i] == id) break;
      i = (i + 1) & mask_;
    }
    // Backward-shift deletion: move later entries of the cluster into the hole when
    // their home position allows it.
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_; vals_[j] >= 0; j = (j + 1) & mask_) {
      std::size_t h = home(keys_[j]);
      bool movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
      if (movable) {
        keys_[hole] = keys_[j];
        vals_[hole] = vals_[j];
        hole = j;
      }
    }
    vals_[hole] = -1;
  }

 private:
  std::size_t home(EmitterId id) const { return static_cast<std::size_t>(mixKey(id)) & mask_; }
  std::vector<EmitterId> keys_;
  std::vector<int> vals_;
  std::size_t mask_ = 0;
};

/// Soft knee above kKnee: transparent below, saturates at kCeiling (< 1, so float
/// rounding of tanh never reaches full scale).
inline float softClip(float x) {
  constexpr float kKnee = 0.8f, kCeiling = 0.99f;
  float a = std::fabs(x);
  if (a <= kKnee) return x;
  float y = kKnee + (kCeiling - kKnee) * std::tanh((a - kKnee) / (kCeiling - kKnee));
  return x < 0 ? -y : y;
}

}  // namespace

struct AudioEngine::Impl {
  EngineConfig config;

  // ---- control side ----
  std::vector<Cmd> pending;  ///< queued since (or left over from) the last commit
  std::unordered_map<EmitterId, std::uint64_t> alive;  ///< id -> serial of its live start
  std::uint64_t nextSerial = 1;
  std::atomic<std::uint64_t> queueFull{0};

  // ---- shared ----
  SpscRing<Cmd> commands;
  SpscRing<Retired> retired;

  // ---- audio side ----
  std::vector<Slot> slots;
  IdMap ids;
  std::vector<int> freeSlots;   ///< stack of unused slot indices
  std::vector<int> usedSlots;   ///< indices of used slots (unordered)
  std::vector<int> usedPos;     ///< slot index -> position in usedSlots
  std::vector<int> ranked;      ///< scratch: candidates by score
  std::vector<float> mono;      ///< scratch: one voice's block
  std::vector<float> mixL, mixR;
  Listener listener;
  float masterTarget = 1.0f, master = 1.0f;

  std::atomic<int> statEmitters{0}, statReal{0}, statVirtual{0};
  std::atomic<std::uint64_t> statBlocks{0}, statStarted{0}, statFinished{0}, statDropped{0};

  explicit Impl(const EngineConfig& c)
      : config(c),
        commands(static_cast<std::size_t>(std::max(1, c.queueCapacity))),
        // Every voice the audio side can hold between two collections: the slots,
        // the commands left in the ring at the last collection plus one commit's worth.
        retired(static_cast<std::size_t>(std::max(1, c.maxEmitters)) +
                2 * static_cast<std::size_t>(std::max(1, c.queueCapacity)) + 1),
        slots(static_cast<std::size_t>(std::max(1, c.maxEmitters))),
        ids(std::max(1, c.maxEmitters)) {
    config.realVoices = std::max(0, c.realVoices);
    config.maxEmitters = std::max(1, c.maxEmitters);
    config.queueCapacity = std::max(1, c.queueCapacity);
    pending.reserve(static_cast<std::size_t>(config.queueCapacity));
    freeSlots.reserve(slots.size());
    for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) freeSlots.push_back(i);
    usedSlots.reserve(slots.size());
    usedPos.assign(slots.size(), -1);
    ranked.reserve(slots.size());
    mono.assign(kBlockFrames, 0.0f);
    mixL.assign(kBlockFrames, 0.0f);
    mixR.assign(kBlockFrames, 0.0f);
  }

  ~Impl() {
    for (Cmd& c : pending)
      if (c.type == CmdType::Start) delete c.voice;
    Cmd c;
    while (commands.pop(c))
      if (c.type == CmdType::Start) delete c.voice;
    Retired r;
    while (retired.pop(r)) delete r.voice;
    for (Slot& s : slots)
      if (s.used) delete s.voice;
  }

  // ---- audio thread ----

  /// Hands the slot's voice back and frees the slot. The retire ring cannot be full
  /// (see its capacity); if it somehow were, the voice would leak rather than block.
  void retire(int index) {
    Slot& s = slots[static_cast<std::size_t>(index)];
    retired.push(Retired{s.id, s.serial, s.voice});
    if (!s.stopping && ids.find(s.id) == index) ids.erase(s.id);
    s = Slot{};
    freeSlots.push_back(index);
    int pos = usedPos[static_cast<std::size_t>(index)];
    int last = usedSlots.back();
    usedSlots[static_cast<std::size_t>(pos)] = last;
    usedPos[static_cast<std::size_t>(last)] = pos;
    usedSlots.pop_back();
    usedPos[static_cast<std::size_t>(index)] = -1;
  }

  /// Marks a slot as fading out; it no longer answers to its id.
  void beginStop(int index) {
    Slot& s = slots[static_cast<std::size_t>(index)];
    if (s.stopping) return;
    if (ids.find(s.id) == index) ids.erase(s.id);
    s.stopping = true;
  }

  void apply(const Cmd& c) {
    switch (c.type) {
      case CmdType::Start: {
        int old = ids.find(c.id);
        if (old >= 0) beginStop(old);
        if (freeSlots.empty()) {
          statDropped.fetch_add(1, std::memory_order_relaxed);
          retired.push(Retired{c.id, c.serial, c.voice});
          return;
        }
        int index = freeSlots.back();
        freeSlots.pop_back();
        usedPos[static_cast<std::size_t>(index)] = static_cast<int>(usedSlots.size());
        usedSlots.push_back(index);
        Slot& s = slots[static_cast<std::size_t>(index)];
        s = Slot{};
        s.used = true;
        s.id = c.id;
        s.serial = c.serial;
        s.voice = c.voice;
        s.state = c.state;
        ids.set(c.id, index);
        statStarted.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      case CmdType::Update: {
        int index = ids.find(c.id);
        if (index >= 0) slots[static_cast<std::size_t>(index)].state = c.state;
        return;
      }
      case CmdType::Stop: {
        int index = ids.find(c.id);
        if (index >= 0) beginStop(index);
        return;
      }
      case CmdType::Listener: listener = c.listener; return;
      case CmdType::MasterGain: masterTarget = c.gain; return;
    }
  }

  float distanceTo(const Vec3f& p) const {
    float dx = p.x - listener.position.x, dy = p.y - listener.position.y, dz = p.z - listener.position.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  }

  float audibility(const Slot& s) const {
    float a = std::fabs(s.state.gain) * s.voice->loudness() * std::max(0.0f, s.state.priority);
    if (!s.state.ambient) a *= kRefDistance / std::clamp(distanceTo(s.state.position), kRefDistance, kMaxDistance);
    return a;
  }

  /// Target left/right gains and air-absorption cutoff for a real voice.
  void spatialise(const Slot& s, float& gl, float& gr, float& cutoffHz) const {
    const EmitterState& st = s.state;
    float g = st.gain;
    float pan = 0.0f;
    cutoffHz = 20000.0f;
    if (!st.ambient) {
      float d = std::clamp(distanceTo(st.position), kRefDistance, kMaxDistance);
      g *= kRefDistance / d;
      // Air absorption: highs go first with distance (about 7 kHz at 50 m).
      cutoffHz = std::clamp(22000.0f / (1.0f + d / 25.0f), 1000.0f, 20000.0f);
    }
    // Direction in the listener's frame: right = (cos yaw, 0, sin yaw) for the sim's
    // yaw (0 = north = -z, clockwise seen from above).
    float dx = st.position.x - listener.position.x, dz = st.position.z - listener.position.z;
    float horiz = std::sqrt(dx * dx + dz * dz);
    if (horiz > 1e-4f) {
      float right = (dx * std::cos(listener.yaw) + dz * std::sin(listener.yaw)) / horiz;
      // Sources overhead or inside the head drift to the centre instead of snapping.
      float nearBlend = std::min(1.0f, horiz / 0.5f);
      pan = right * nearBlend;
    }
    pan *= 1.0f - std::clamp(st.width, 0.0f, 1.0f);
    float theta = (pan + 1.0f) * (kPi / 4.0f);
    gl = g * std::cos(theta);
    gr = g * std::sin(theta);
  }

  /// Renders (or skips) one slot and mixes it. Returns false when the voice ended.
  bool renderReal(Slot& s, float fadeTarget) {
    float gl = 0, gr = 0, cutoff = 20000.0f;
    spatialise(s, gl, gr, cutoff);
    if (s.fresh) {
      // A new voice starts from its own silence: no fade-in to blunt its attack.
      s.fade = fadeTarget;
      s.gainL = gl;
      s.gainR = gr;
      s.fresh = false;
    } else if (s.fade <= 0.0f) {
      s.gainL = gl;  // resuming from virtual: the fade covers any gain change
      s.gainR = gr;
    }
    s.air.setCutoff(cutoff);
    bool more = s.voice->render(mono.data(), kBlockFrames, s.state.params);
    float l0 = s.gainL, r0 = s.gainR;
    float dl = (gl - l0) / kBlockFrames, dr = (gr - r0) / kBlockFrames;
    float fade = s.fade;
    for (int i = 0; i < kBlockFrames; ++i) {
      if (fade < fadeTarget) fade = std::min(fadeTarget, fade + kFadeStep);
      else if (fade > fadeTarget) fade = std::max(fadeTarget, fade - kFadeStep);
      float x = s.air.lowpass(mono[static_cast<std::size_t>(i)]) * fade;
      float fi = static_cast<float>(i + 1);
      mixL[static_cast<std::size_t>(i)] += x * (l0 + dl * fi);
      mixR[static_cast<std::size_t>(i)] += x * (r0 + dr * fi);
    }
    s.fade = fade;
    s.gainL = gl;
    s.gainR = gr;
    return more;
  }

  void block(float* out) {
    Cmd c;
    while (commands.pop(c)) apply(c);

    std::fill(mixL.begin(), mixL.end(), 0.0f);
    std::fill(mixR.begin(), mixR.end(), 0.0f);

    // Virtual voices being stopped have nothing to fade: retire them now.
    for (std::size_t k = 0; k < usedSlots.size();) {
      int index = usedSlots[k];
      const Slot& s = slots[static_cast<std::size_t>(index)];
      if (s.stopping && !s.real) {
        retire(index);  // swaps the last entry into k
        continue;
      }
      ++k;
    }

    // Rank by audibility; real voices get a hysteresis bonus so near ties don't
    // flap. Ties break on start order, so the choice is repeatable.
    ranked.clear();
    int realNow = 0;  // rendered last block: each renders this block too (stay or fade out)
    for (int index : usedSlots) {
      Slot& s = slots[static_cast<std::size_t>(index)];
      s.want = false;
      s.hold = false;
      if (s.real) ++realNow;
      if (s.stopping) continue;
      s.score = audibility(s);
      if (s.score <= kInaudible) continue;
      if (s.real) s.score *= kHysteresis;
      ranked.push_back(index);
    }
    std::sort(ranked.begin(), ranked.end(), [this](int a, int b) {
      const Slot& sa = slots[static_cast<std::size_t>(a)];
      const Slot& sb = slots[static_cast<std::size_t>(b)];
      if (sa.score != sb.score) return sa.score > sb.score;
      return sa.serial < sb.serial;
    });
    // The wanted set is the top `limit`. Voices leaving it fade out this block and
    // still take a place; newcomers only get places already free, so at most `limit`
    // voices render in any block (a newcomer may wait one block).
    const int limit = config.realVoices;
    int keep = std::min(limit, static_cast<int>(ranked.size()));
    int room = limit - realNow;
    for (int k = 0; k < keep; ++k) {
      Slot& s = slots[static_cast<std::size_t>(ranked[static_cast<std::size_t>(k)])];
      if (s.real) {
        s.want = true;
      } else if (room > 0) {
        s.want = true;
        --room;
      } else if (s.fresh) {
        s.hold = true;  // a place frees up next block; skipping would lose the attack
      }
    }

    int rendered = 0, virt = 0;
    std::uint64_t finished = 0;
    for (std::size_t k = 0; k < usedSlots.size();) {
      int index = usedSlots[k];
      Slot& s = slots[static_cast<std::size_t>(index)];
      bool more = true;
      bool wanted = s.want;
      if (s.real || wanted) {
        ++rendered;
        more = renderReal(s, wanted ? 1.0f : 0.0f);
        s.real = wanted;
        if (!wanted && s.stopping) {
          retire(index);
          continue;
        }
      } else if (s.hold) {
        ++virt;
      } else {
        ++virt;
        s.fresh = false;
        more = s.voice->skip(kBlockFrames, s.state.params);
      }
      if (!more) {
        ++finished;
        retire(index);
        continue;
      }
      ++k;
    }

    // Master: gain ramped across the block, then a soft knee so nothing overs.
    float m0 = master, dm = (masterTarget - master) / kBlockFrames;
    for (int i = 0; i < kBlockFrames; ++i) {
      float g = m0 + dm * static_cast<float>(i + 1);
      out[2 * i] = softClip(mixL[static_cast<std::size_t>(i)] * g);
      out[2 * i + 1] = softClip(mixR[static_cast<std::size_t>(i)] * g);
    }
    master = masterTarget;

    statEmitters.store(static_cast<int>(usedSlots.size()), std::memory_order_relaxed);
    statReal.store(rendered, std::memory_order_relaxed);
    statVirtual.store(virt, std::memory_order_relaxed);
    statFinished.fetch_add(finished, std::memory_order_relaxed);
    statBlocks.fetch_add(1, std::memory_order_relaxed);
  }
};

AudioEngine::AudioEngine(EngineConfig config) : impl_(std::make_unique<Impl>(config)) {}
AudioEngine::~AudioEngine() = default;

void AudioEngine::start(EmitterId id, std::unique_ptr<Voice> voice, const EmitterState& state) {
  if (!voice) return;
  Cmd c;
  c.type = CmdType::Start;
  c.id = id;
  c.serial = impl_->nextSerial++;
  c.voice = voice.release();
  c.state = state;
  impl_->pending.push_back(c);
  impl_->alive[id] = c.serial;
}

void AudioEngine::update(EmitterId id, const EmitterState& state) {
  if (!impl_->alive.contains(id)) return;
  Cmd c;
  c.type = CmdType::Update;
  c.id = id;
  c.state = state;
  impl_->pending.push_back(c);
}

void AudioEngine::stop(EmitterId id) {
  if (impl_->alive.erase(id) == 0) return;
  Cmd c;
  c.type = CmdType::Stop;
  c.id = id;
  impl_->pending.push_back(c);
}

void AudioEngine::setListener(const Listener& listener) {
  Cmd c;
  c.type = CmdType::Listener;
  c.listener = listener;
  impl_->pending.push_back(c);
}

void AudioEngine::setMasterGain(float gain) {
  Cmd c;
  c.type = CmdType::MasterGain;
  c.gain = gain;
  impl_->pending.push_back(c);
}

void AudioEngine::commit() {
  Impl& m = *impl_;
  // Collect first: the retire ring's capacity assumes one collection per commit.
  Retired r;
  while (m.retired.pop(r)) {
    auto it = m.alive.find(r.id);
    if (it != m.alive.end() && it->second == r.serial) m.alive.erase(it);
    delete r.voice;
  }
  // Publish in order, at most one ring's worth per commit; the rest waits.
  std::size_t sent = 0, cap = m.commands.capacity();
  while (sent < m.pending.size() && sent < cap && m.commands.push(m.pending[sent])) ++sent;
  if (sent < m.pending.size()) m.queueFull.fetch_add(1, std::memory_order_relaxed);
  m.pending.erase(m.pending.begin(), m.pending.begin() + static_cast<std::ptrdiff_t>(sent));
}

bool AudioEngine::alive(EmitterId id) const { return impl_->alive.contains(id); }

void AudioEngine::renderBlock(float* out) { impl_->block(out); }

EngineStats AudioEngine::stats() const {
  const Impl& m = *impl_;
  EngineStats s;
  s.emitters = m.statEmitters.load(std::memory_order_relaxed);
  s.realVoices = m.statReal.load(std::memory_order_relaxed);
  s.virtualVoices = m.statVirtual.load(std::memory_order_relaxed);
  s.blocks = m.statBlocks.load(std::memory_order_relaxed);
  s.started = m.statStarted.load(std::memory_order_relaxed);
  s.finished = m.statFinished.load(std::memory_order_relaxed);
  s.dropped = m.statDropped.load(std::memory_order_relaxed);
  s.queueFull = m.queueFull.load(std::memory_order_relaxed);
  return s;
}

}  // namespace loam::audio

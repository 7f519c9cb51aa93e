// AudioEngine: command/retire rings between the control and audio threads, the
// emitter table, real/virtual voice selection, per-voice band filter, spatialisation
// (HRTF for the loudest point sources, constant-power pan for the rest), the reverb
// and early-reflection sends and the master bus.
// Everything the audio thread touches is sized in the constructor (engine.h).
#include "audio/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <span>
#include <unordered_map>
#include <vector>

#include "audio/early_reflections.h"
#include "audio/hrtf.h"
#include "audio/reverb.h"

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

constexpr float kHysteresis = 2.0f;      ///< a real voice must be beaten by 6 dB to lose its place
constexpr float kInaudible = 1e-6f;      ///< audibility below -120 dB is never made real
constexpr float kFadeStep = 1.0f / kFadeFrames;
constexpr float kBandLowHz = 500.0f, kBandHighHz = 2000.0f;  ///< per-voice 3-band split
/// Room reverb level glides with a ~50 ms time constant (per-block step).
const float kRoomGlide = 1.0f - std::exp(-static_cast<float>(kBlockFrames) / (0.05f * kSampleRate));
constexpr float kMaxReverbGain = 4.0f;  ///< as RoomAcoustics::reverbGain's cap

/// Latest-value mailbox (triple buffer) for the room: the control thread publishes
/// whole values, the audio thread takes the newest; wait-free, no allocation.
class RoomMailbox {
 public:
  /// Producer only.
  void publish(const RoomAcoustics& room) {
    buf_[static_cast<std::size_t>(back_)] = room;
    back_ = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel) & kIndex;
  }
  /// Consumer only: the newest value since the last take, or nullptr.
  const RoomAcoustics* take() {
    if ((middle_.load(std::memory_order_acquire) & kFresh) == 0) return nullptr;
    front_ = middle_.exchange(front_, std::memory_order_acq_rel) & kIndex;
    return &buf_[static_cast<std::size_t>(front_)];
  }

 private:
  static constexpr int kIndex = 3, kFresh = 4;
  std::array<RoomAcoustics, 3> buf_{};
  int back_ = 0;                      // producer's
  alignas(64) std::atomic<int> middle_{1};
  alignas(64) int front_ = 2;         // consumer's
};

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
  float distGain = 0.0f;    ///< last block's end gain x distance (binaural input, early send)
  float revGain = 0.0f;     ///< last block's end reverb send
  float earlyGain = 0.0f;   ///< last block's end early-reflection send
  std::array<float, kMaxReflectionTaps> tapLowpass{};  ///< its reflections' low-pass states
  std::array<float, 3> bands{1, 1, 1};  ///< last block's end band gains
  OnePole air, bandLow, bandHigh;       ///< air absorption; 500 Hz and 2 kHz splits
  float score = 0.0f;       ///< audibility this block
  float placeScore = 0.0f;  ///< scratch: rank for the binaural places
  int place = -1;           ///< binaural place (HrtfSource) held, or -1
  int hrtfIndex = -1;       ///< HrtfTable direction the place was last given
  bool placeIn = false;     ///< scratch: among the binaural set this block
  bool placeEnter = false;  ///< got its place this block
  bool placeBridge = false; ///< entering while audible by pan: pan first, HRTF next block
  bool placeLeave = false;  ///< leaves its place after this block (crossfading to pan)
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
  RoomAcoustics pendingRoom;
  bool roomPending = false;

  // ---- shared ----
  SpscRing<Cmd> commands;
  SpscRing<Retired> retired;
  RoomMailbox rooms;

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

  // Binaural: the table (process-wide, immutable) and a few places (HrtfSources)
  // lent to the loudest point sources; nothing per slot.
  const HrtfTable* table = nullptr;
  std::vector<std::unique_ptr<HrtfSource>> places;
  std::vector<int> placeOwner;  ///< place -> slot index, or -1
  std::vector<int> freePlaces;  ///< stack of unowned places
  std::vector<int> binCand;     ///< scratch: point sources wanting a place
  std::vector<float> binIn, binL, binR;  ///< scratch: a place's input and output

  // Acoustics: one reverb fed by a mono send, one reflector each impulsive voice adds
  // its own taps to.
  std::unique_ptr<FdnReverb> reverb;
  std::unique_ptr<EarlyReflector> reflector;
  std::vector<float> revSend, earlyIn, wetL, wetR;  ///< earlyIn: one voice's block for the reflector
  RoomAcoustics curRoom;        ///< the last room taken
  bool haveRoom = false;
  float roomGain = 0.0f, roomGainTarget = 0.0f;

  std::atomic<int> statEmitters{0}, statReal{0}, statVirtual{0}, statBinaural{0};
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
    config.binauralVoices = std::clamp(c.binauralVoices, 0, config.realVoices);
    pending.reserve(static_cast<std::size_t>(config.queueCapacity));
    freeSlots.reserve(slots.size());
    for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) freeSlots.push_back(i);
    usedSlots.reserve(slots.size());
    usedPos.assign(slots.size(), -1);
    ranked.reserve(slots.size());
    mono.assign(kBlockFrames, 0.0f);
    mixL.assign(kBlockFrames, 0.0f);
    mixR.assign(kBlockFrames, 0.0f);

    if (config.spatial == Spatialisation::Binaural && config.binauralVoices > 0) table = defaultHrtfTable();
    if (table) {
      for (int p = 0; p < config.binauralVoices; ++p) places.push_back(std::make_unique<HrtfSource>(table->taps()));
      placeOwner.assign(places.size(), -1);
      for (int p = static_cast<int>(places.size()) - 1; p >= 0; --p) freePlaces.push_back(p);
      freePlaces.reserve(places.size());
      binCand.reserve(slots.size());
      binIn.assign(kBlockFrames, 0.0f);
      binL.assign(kBlockFrames, 0.0f);
      binR.assign(kBlockFrames, 0.0f);
    }
    if (config.acoustics) {
      reverb = std::make_unique<FdnReverb>();
      reflector = std::make_unique<EarlyReflector>();
      revSend.assign(kBlockFrames, 0.0f);
      earlyIn.assign(kBlockFrames, 0.0f);
      wetL.assign(kBlockFrames, 0.0f);
      wetR.assign(kBlockFrames, 0.0f);
    }
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

  void releasePlace(Slot& s) {
    if (s.place < 0) return;
    placeOwner[static_cast<std::size_t>(s.place)] = -1;
    freePlaces.push_back(s.place);
    s.place = -1;
    s.hrtfIndex = -1;
    s.placeLeave = false;
  }

  /// Hands the slot's voice back and frees the slot. The retire ring cannot be full
  /// (see its capacity); if it somehow were, the voice would leak rather than block.
  void retire(int index) {
    Slot& s = slots[static_cast<std::size_t>(index)];
    releasePlace(s);
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
        s.bandLow.setCutoff(kBandLowHz);
        s.bandHigh.setCutoff(kBandHighHz);
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

  /// Sorts slot indices by a score, highest first; ties by start order (deterministic).
  void sortByScore(std::vector<int>& indices, float Slot::*score) {
    std::sort(indices.begin(), indices.end(), [this, score](int a, int b) {
      const Slot& sa = slots[static_cast<std::size_t>(a)];
      const Slot& sb = slots[static_cast<std::size_t>(b)];
      if (sa.*score != sb.*score) return sa.*score > sb.*score;
      return sa.serial < sb.serial;
    });
  }

  /// Takes the newest room.
  void applyRoom() {
    if (const RoomAcoustics* r = rooms.take()) {
      curRoom = *r;
      float mfp = std::isfinite(curRoom.meanFreePath) ? curRoom.meanFreePath : 3.0f;
      std::array<float, 3> rt = curRoom.rt60;
      for (float& t : rt) t = std::isfinite(t) ? std::clamp(t, 0.05f, 20.0f) : 0.3f;
      float g = curRoom.reverbGain;
      roomGainTarget = std::isfinite(g) ? std::clamp(g, 0.0f, kMaxReverbGain) : 0.0f;
      if (!haveRoom) {  // the first room is taken at once: nothing to glide from
        reverb->jumpRoom(mfp, rt);
        roomGain = roomGainTarget;
      } else {
        reverb->setRoom(mfp, rt);
      }
      haveRoom = true;
    }
  }

  float distanceTo(const Vec3f& p) const {
    float dx = p.x - listener.position.x, dy = p.y - listener.position.y, dz = p.z - listener.position.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  }

  float audibility(const Slot& s) const {
    const EmitterState& st = s.state;
    float a = std::fabs(st.gain) * s.voice->loudness() * std::max(0.0f, st.priority);
    if (!st.ambient) a *= kRefDistance / std::clamp(distanceTo(st.position), kRefDistance, kMaxDistance);
    // What propagation lets through: the loudest band, or the reverb when that is louder
    // (a source behind a wall takes no voice from one in the open).
    float heard = std::max({st.bands[0], st.bands[1], st.bands[2]});
    if (haveRoom) heard = std::max(heard, st.reverbSend * roomGainTarget);
    return a * std::clamp(heard, 0.0f, 1.0f);
  }

  static bool pointSource(const EmitterState& st) { return !st.ambient && st.width < 0.5f; }

  /// The world direction the sound arrives from: the acoustic direction when given,
  /// else the straight line from the listener.
  Vec3f arrival(const EmitterState& st) const {
    const Vec3f& d = st.direction;
    if (d.x != 0.0f || d.y != 0.0f || d.z != 0.0f) return d;
    return {st.position.x - listener.position.x, st.position.y - listener.position.y,
            st.position.z - listener.position.z};
  }

  /// Target left/right pan gains, gain x distance, and air-absorption cutoff for a real voice.
  void spatialise(const Slot& s, float& gl, float& gr, float& g, float& cutoffHz) const {
    const EmitterState& st = s.state;
    g = st.gain;
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
    const Vec3f& dir = st.direction;
    bool given = dir.x != 0.0f || dir.y != 0.0f || dir.z != 0.0f;
    float dx = given ? dir.x : st.position.x - listener.position.x;
    float dz = given ? dir.z : st.position.z - listener.position.z;
    float horiz = std::sqrt(dx * dx + dz * dz);
    if (horiz > 1e-4f) {
      float right = (dx * std::cos(listener.yaw) + dz * std::sin(listener.yaw)) / horiz;
      // Sources overhead or inside the head drift to the centre instead of snapping
      // (a given direction has no distance: judge by its elevation instead).
      float nearBlend;
      if (given) nearBlend = std::min(1.0f, horiz / (0.5f * std::sqrt(horiz * horiz + dir.y * dir.y)));
      else nearBlend = std::min(1.0f, horiz / 0.5f);
      pan = right * nearBlend;
    }
    pan *= 1.0f - std::clamp(st.width, 0.0f, 1.0f);
    float theta = (pan + 1.0f) * (kPi / 4.0f);
    gl = g * std::cos(theta);
    gr = g * std::sin(theta);
  }

  static std::array<float, 3> saneBands(const std::array<float, 3>& b) {
    std::array<float, 3> out{};
    for (int k = 0; k < 3; ++k) {
      float v = b[static_cast<std::size_t>(k)];
      out[static_cast<std::size_t>(k)] = std::isfinite(v) ? std::clamp(v, 0.0f, 16.0f) : 1.0f;
    }
    return out;
  }

  /// Renders (or skips) one slot and mixes it. Returns false when the voice ended.
  bool renderReal(Slot& s, float fadeTarget) {
    const EmitterState& st = s.state;
    float gl = 0, gr = 0, g = 0, cutoff = 20000.0f;
    spatialise(s, gl, gr, g, cutoff);
    std::array<float, 3> bands = saneBands(st.bands);
    float rev = 0.0f, early = 0.0f;
    if (reverb) {
      float send = std::isfinite(st.reverbSend) ? std::max(0.0f, st.reverbSend) : 0.0f;
      rev = st.gain * send;
      early = st.impulsive ? g : 0.0f;
    }
    if (s.fresh || s.fade <= 0.0f) {
      // A new voice starts from its own silence: no fade-in to blunt its attack.
      // Resuming from virtual: the fade covers any gain change.
      if (s.fresh) {
        s.fade = fadeTarget;
        s.fresh = false;
      }
      s.gainL = gl;
      s.gainR = gr;
      s.distGain = g;
      s.revGain = rev;
      s.earlyGain = early;
      s.bands = bands;
    }
    s.air.setCutoff(cutoff);
    bool more = s.voice->render(mono.data(), kBlockFrames, st.params);

    // Air absorption, the three bands, the fade: mono becomes the voice's dry signal.
    float fade = s.fade;
    bool flat = s.bands == std::array<float, 3>{1, 1, 1} && bands == std::array<float, 3>{1, 1, 1};
    float b0[3] = {s.bands[0], s.bands[1], s.bands[2]};
    float db[3] = {(bands[0] - b0[0]) / kBlockFrames, (bands[1] - b0[1]) / kBlockFrames,
                   (bands[2] - b0[2]) / kBlockFrames};
    for (int i = 0; i < kBlockFrames; ++i) {
      if (fade < fadeTarget) fade = std::min(fadeTarget, fade + kFadeStep);
      else if (fade > fadeTarget) fade = std::max(fadeTarget, fade - kFadeStep);
      float y = s.air.lowpass(mono[static_cast<std::size_t>(i)]);
      float lo = s.bandLow.lowpass(y), mid = s.bandHigh.lowpass(y);  // run always: states stay current
      if (!flat) {
        float fi = static_cast<float>(i + 1);
        float hi = y - mid;
        mid -= lo;
        y = (b0[0] + db[0] * fi) * lo + (b0[1] + db[1] * fi) * mid + (b0[2] + db[2] * fi) * hi;
      }
      mono[static_cast<std::size_t>(i)] = y * fade;
    }
    s.fade = fade;
    s.bands = bands;

    // Sends: the reverb hears the source's level (not its distance), the reflections
    // its level at the listener.
    if (reverb) {
      float r0 = s.revGain, dr = (rev - r0) / kBlockFrames;
      float e0 = s.earlyGain, de = (early - e0) / kBlockFrames;
      if (r0 != 0.0f || rev != 0.0f) {
        for (int i = 0; i < kBlockFrames; ++i)
          revSend[static_cast<std::size_t>(i)] += mono[static_cast<std::size_t>(i)] * (r0 + dr * static_cast<float>(i + 1));
      }
      const int taps = std::clamp(st.tapCount, 0, kMaxReflectionTaps);
      if ((e0 != 0.0f || early != 0.0f) && taps > 0) {
        for (int i = 0; i < kBlockFrames; ++i)
          earlyIn[static_cast<std::size_t>(i)] = mono[static_cast<std::size_t>(i)] * (e0 + de * static_cast<float>(i + 1));
        reflector->add(earlyIn.data(), kBlockFrames,
                       std::span<const ReflectionTap>(st.taps.data(), static_cast<std::size_t>(taps)), listener.yaw,
                       s.tapLowpass);
      }
      s.revGain = rev;
      s.earlyGain = early;
    }

    if (s.place >= 0) {
      renderBinaural(s, g);
    } else {
      float l0 = s.gainL, r0 = s.gainR;
      float dl = (gl - l0) / kBlockFrames, dr = (gr - r0) / kBlockFrames;
      for (int i = 0; i < kBlockFrames; ++i) {
        float x = mono[static_cast<std::size_t>(i)];
        float fi = static_cast<float>(i + 1);
        mixL[static_cast<std::size_t>(i)] += x * (l0 + dl * fi);
        mixR[static_cast<std::size_t>(i)] += x * (r0 + dr * fi);
      }
    }
    s.gainL = gl;
    s.gainR = gr;
    s.distGain = g;
    return more;
  }

  /// The slot's dry mono (in `mono`) through its HRTF place, scaled by gain x distance.
  void renderBinaural(Slot& s, float g) {
    HrtfSource& src = *places[static_cast<std::size_t>(s.place)];
    HeadDirection hd = toHeadFrame(arrival(s.state), listener.yaw);
    if (s.placeEnter) {
      src.reset();
      s.hrtfIndex = -1;
      // Heard by pan until now: start with the same pan, crossfade to the HRTF next block.
      if (s.placeBridge) src.setPan(hd);
    }
    if (s.placeLeave) {
      src.setPan(hd);  // crossfades to the pan it continues with next block
    } else if (!s.placeEnter || !s.placeBridge) {
      int index = table->nearest(hd);
      if (index != s.hrtfIndex) {
        src.setFilters(table->left(index), table->right(index));
        s.hrtfIndex = index;
      }
    }
    s.placeEnter = false;
    s.placeBridge = false;
    float g0 = s.distGain, dg = (g - g0) / kBlockFrames;
    for (int i = 0; i < kBlockFrames; ++i)
      binIn[static_cast<std::size_t>(i)] = mono[static_cast<std::size_t>(i)] * (g0 + dg * static_cast<float>(i + 1));
    src.process(binIn.data(), binL.data(), binR.data(), kBlockFrames);
    for (int i = 0; i < kBlockFrames; ++i) {
      mixL[static_cast<std::size_t>(i)] += binL[static_cast<std::size_t>(i)];
      mixR[static_cast<std::size_t>(i)] += binR[static_cast<std::size_t>(i)];
    }
  }

  /// Lends the binaural places to the loudest point sources rendered this block.
  /// Holders get a 2x bonus so near ties don't flap between HRTF and pan; a holder
  /// that loses crossfades to pan over one block before its place is free.
  void assignPlaces() {
    if (places.empty()) return;
    binCand.clear();
    for (int index : ranked) {
      Slot& s = slots[static_cast<std::size_t>(index)];
      if (!s.want || !pointSource(s.state)) continue;
      s.placeScore = s.score * (s.place >= 0 && !s.placeLeave ? 2.0f : 1.0f);
      binCand.push_back(index);
    }
    sortByScore(binCand, &Slot::placeScore);
    int n = std::min(static_cast<int>(places.size()), static_cast<int>(binCand.size()));
    for (int k = 0; k < n; ++k) slots[static_cast<std::size_t>(binCand[static_cast<std::size_t>(k)])].placeIn = true;
    for (std::size_t p = 0; p < places.size(); ++p) {
      int owner = placeOwner[p];
      if (owner < 0) continue;
      Slot& s = slots[static_cast<std::size_t>(owner)];
      if (!s.real && !s.want) releasePlace(s);               // not rendered any more
      else if (s.want && !s.placeIn) s.placeLeave = true;  // still heard: by pan from next block
      // real && !want: fading out, keeps its place to the end of the fade
    }
    for (int k = 0; k < n && !freePlaces.empty(); ++k) {
      Slot& s = slots[static_cast<std::size_t>(binCand[static_cast<std::size_t>(k)])];
      if (s.place >= 0) continue;
      s.place = freePlaces.back();
      freePlaces.pop_back();
      placeOwner[static_cast<std::size_t>(s.place)] = binCand[static_cast<std::size_t>(k)];
      s.placeEnter = true;
      s.placeBridge = !s.fresh && s.real && s.fade > 0.0f;
      s.placeLeave = false;
    }
  }

  void block(float* out) {
    Cmd c;
    while (commands.pop(c)) apply(c);
    if (reverb) applyRoom();

    std::fill(mixL.begin(), mixL.end(), 0.0f);
    std::fill(mixR.begin(), mixR.end(), 0.0f);
    if (reverb) std::fill(revSend.begin(), revSend.end(), 0.0f);

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
      s.placeIn = false;
      if (s.real) ++realNow;
      if (s.stopping) continue;
      s.score = audibility(s);
      if (s.score <= kInaudible) continue;
      if (s.real) s.score *= kHysteresis;
      ranked.push_back(index);
    }
    sortByScore(ranked, &Slot::score);
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
    assignPlaces();

    int rendered = 0, virt = 0, binaural = 0;
    std::uint64_t finished = 0;
    for (std::size_t k = 0; k < usedSlots.size();) {
      int index = usedSlots[k];
      Slot& s = slots[static_cast<std::size_t>(index)];
      bool more = true;
      bool wanted = s.want;
      if (s.real || wanted) {
        ++rendered;
        if (s.place >= 0) ++binaural;
        more = renderReal(s, wanted ? 1.0f : 0.0f);
        s.real = wanted;
        if (s.placeLeave || !wanted) releasePlace(s);
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

    if (reverb && haveRoom) {  // no room yet: nothing to hear, and the lines stay silent
      // The room: reverberant field (level glides).
      reverb->process(revSend.data(), wetL.data(), wetR.data(), kBlockFrames);
      float g0 = roomGain, next = roomGain + (roomGainTarget - roomGain) * kRoomGlide;
      if (std::fabs(next - roomGainTarget) < 1e-5f) next = roomGainTarget;
      float dg = (next - g0) / kBlockFrames;
      for (int i = 0; i < kBlockFrames; ++i) {
        float gi = g0 + dg * static_cast<float>(i + 1);
        mixL[static_cast<std::size_t>(i)] += wetL[static_cast<std::size_t>(i)] * gi;
        mixR[static_cast<std::size_t>(i)] += wetR[static_cast<std::size_t>(i)] * gi;
      }
      roomGain = next;
    }
    if (reflector) {  // the impulsive voices' reflections, added by renderReal
      reflector->process(wetL.data(), wetR.data(), kBlockFrames);
      for (int i = 0; i < kBlockFrames; ++i) {
        mixL[static_cast<std::size_t>(i)] += wetL[static_cast<std::size_t>(i)];
        mixR[static_cast<std::size_t>(i)] += wetR[static_cast<std::size_t>(i)];
      }
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
    statBinaural.store(binaural, std::memory_order_relaxed);
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

void AudioEngine::setRoom(const RoomAcoustics& room) {
  impl_->pendingRoom = room;
  impl_->roomPending = true;
}

void AudioEngine::commit() {
  Impl& m = *impl_;
  if (m.roomPending) {  // latest value wins; the audio side takes it at its next block
    m.rooms.publish(m.pendingRoom);
    m.roomPending = false;
  }
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
  s.binauralVoices = m.statBinaural.load(std::memory_order_relaxed);
  s.binaural = !m.places.empty();
  return s;
}

}  // namespace loam::audio

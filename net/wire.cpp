// Wire helpers: verification of inbound roots and record converters.
//
// EventRec layout per kind (kind = sim::Event alternative index). Fields not listed
// are written as 0 and ignored when read. `actor_kind` is always checked to be a
// sim::Actor::Kind (0 None, 1 Player, 2 Animal); enum-valued fields are range checked
// and an out-of-range value makes fromWire return false.
//
//  kind  event            x,y,z     actor_kind, actor    value         material        small
//  0     Ignited          position  by (Actor)           -             material        -
//  1     Extinguished     position  -                    -             cause (0..3)    -
//  2     Landed           position  who (Actor)          impactSpeed   material        -
//  3     Footstep         position  who (Actor)          speed         surface         -
//  4     Dig              position  who (Actor)          voxels (u32)  material        radius
//  5     Fracture         position  -                    voxels (u32)  material        -
//  6     Splash           position  who (Actor)          speed         -               -
//  7     AnimalCall       position  2 (Animal), animal   -             species (0..2)  call (0..2)
//  8     Chat             not an EventRec: travels as StepBatch.chat (ChatLine)
//  9     CommandRejected  -         1 (Player), player   sequence(u32) reason (0..13)  commandIndex (*)
//  10    PlayerJoined     -         1 (Player), player   -             -               -
//  11    PlayerLeft       -         1 (Player), player   -             -               -
//
// (*) a CommandKind (net/protocol.h): the sim::CommandBody alternative index.
//
// u32 values travel bit-cast in the int32 `value`. PlayerJoined carries no name: the
// name travels in StepBatch.joined, and fromWire yields the event with an empty name
// for the StepBatch reader to fill from `joined` (matching by player id).
#include "net/wire.h"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

#include "net/protocol.h"

namespace loam::net {

namespace {

// Deepest legal nesting is root -> body -> vector -> table -> string (5); twice that
// leaves room for additions while bounding recursion on hostile input.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
// A client message holds at most three tables (ClientMessage, Action, its body).
constexpr flatbuffers::uoffset_t kMaxClientTables = 64;
// Server messages hold one table per chat line / joined name; the size cap bounds
// the rest, this only stops pathological sharing of one table from many offsets.
constexpr flatbuffers::uoffset_t kMaxServerTables = 1u << 16;
// Struct vectors are read in place: the widest scalar in the schema is 8 bytes
// (CellHashRec.hash, uint64 fields), and the verifier checks alignment only relative
// to the buffer start, so the start itself must be 8-aligned (malloc'd ENet packets are).
constexpr std::uintptr_t kBufferAlign = 8;

template <class Root>
const Root* verifyRoot(std::span<const std::uint8_t> bytes, std::size_t maxBytes, flatbuffers::uoffset_t maxTables) {
  if (bytes.empty() || bytes.size() > maxBytes || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) return nullptr;
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % kBufferAlign != 0) return nullptr;
  flatbuffers::Verifier::Options opts;
  opts.max_depth = kMaxDepth;
  opts.max_tables = maxTables;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), opts);
  if (!verifier.VerifyBuffer<Root>(nullptr)) return nullptr;
  return flatbuffers::GetRoot<Root>(bytes.data());
}

// FlatBuffers' verifier checks a vector's length word to 4 bytes, not its elements to
// their struct's alignment: a hostile buffer can place a vector of 8-byte-aligned
// structs (ColumnHashRec, CellHashRec) 4 bytes off, and reading them in place is
// undefined behaviour (found by fuzz_client_message). Such vectors are checked here.
static_assert(alignof(wire::InputRec) <= 4 && alignof(wire::PlayerPoseRec) <= 4 && alignof(wire::AnimalRec) <= 4 &&
                  alignof(wire::FireRec) <= 4 && alignof(wire::CellRef) <= 4 && alignof(wire::EventRec) <= 4 &&
                  alignof(wire::ActionResultRec) <= 4,
              "a struct vector needs 8-byte alignment: check it with structsAligned");
template <class T>
bool structsAligned(const flatbuffers::Vector<const T*>* v) {
  return !v || reinterpret_cast<std::uintptr_t>(v->Data()) % alignof(T) == 0;
}

// The generated union verifier accepts unknown types (forward compatibility); this
// protocol has no optional members, so an unknown or missing body is malformed.
template <class Enum>
bool knownBody(Enum type, const void* body) {
  const auto t = static_cast<std::uint8_t>(type);
  return t > static_cast<std::uint8_t>(Enum::NONE) && t <= static_cast<std::uint8_t>(Enum::MAX) && body != nullptr;
}

// The records below hold every field of their sim record's table; a field added to
// a table must be added to the schema's struct and to these converters.
static_assert(std::tuple_size_v<decltype(sim::kPlayerStateFields)> == 13,
              "new PlayerState field: add it to PlayerStateRec (net/schema/loam.fbs) and toWire/fromWire");
static_assert(sim::encodedSize(sim::kAnimalFields) == sizeof(wire::AnimalRec),
              "new Animal field: add it to AnimalRec (net/schema/loam.fbs) and toWire/fromWire");
static_assert(std::tuple_size_v<decltype(sim::kFireChangeFields)> == 6,
              "new FireChange field: add it to FireRec (net/schema/loam.fbs) and toWire/fromWire");

// Alternative indices of a variant (Event kinds, named for the switch in fromWire;
// CommandBody kinds, checked against CommandKind).
template <class T, class Variant = sim::Event>
constexpr std::uint8_t kindOf() {
  constexpr std::size_t n = std::variant_size_v<Variant>;
  return static_cast<std::uint8_t>([]<std::size_t... I>(std::index_sequence<I...>) {
    std::size_t found = n;
    ((std::is_same_v<std::variant_alternative_t<I, Variant>, T> ? (found = I, 0) : 0), ...);
    return found;
  }(std::make_index_sequence<n>{}));
}
static_assert(std::variant_size_v<sim::Event> == 12, "new event kind: extend toWire, fromWire and the table above");
static_assert(kindOf<sim::IgnitedEvent>() == 0 && kindOf<sim::PlayerLeftEvent>() == 11);

constexpr std::uint8_t kMaxExtinguishCause = static_cast<std::uint8_t>(sim::ExtinguishCause::Removed);
constexpr std::uint8_t kMaxRejectReason = static_cast<std::uint8_t>(sim::RejectReason::NoLineOfSight);
constexpr std::uint8_t kMaxActorKind = static_cast<std::uint8_t>(sim::Actor::Kind::Animal);
constexpr std::uint8_t kMaxSpecies = static_cast<std::uint8_t>(sim::AnimalSpecies::Dog);
constexpr std::uint8_t kMaxCallKind = static_cast<std::uint8_t>(sim::AnimalCallKind::Greet);

template <class T>
constexpr bool commandKindIs(CommandKind kind) {
  return kindOf<T, sim::CommandBody>() == static_cast<std::uint8_t>(kind);
}
static_assert(std::variant_size_v<sim::CommandBody> == kCommandKindCount, "new command: extend CommandKind");
static_assert(commandKindIs<sim::JoinCommand>(CommandKind::Join) &&
              commandKindIs<sim::LeaveCommand>(CommandKind::Leave) &&
              commandKindIs<sim::InputCommand>(CommandKind::Input) && commandKindIs<sim::DigCommand>(CommandKind::Dig) &&
              commandKindIs<sim::PlaceCommand>(CommandKind::Place) &&
              commandKindIs<sim::PourCommand>(CommandKind::Pour) &&
              commandKindIs<sim::IgniteCommand>(CommandKind::Ignite) &&
              commandKindIs<sim::SetTimeCommand>(CommandKind::SetTime) &&
              commandKindIs<sim::SetWeatherCommand>(CommandKind::SetWeather) &&
              commandKindIs<sim::ChatCommand>(CommandKind::Chat) &&
              commandKindIs<sim::TeleportCommand>(CommandKind::Teleport));

wire::EventRec rec(std::uint8_t kind, sim::VoxelCoord p, sim::Actor a, std::int32_t value, std::uint8_t material,
                   std::uint8_t small) noexcept {
  return wire::EventRec(p.x, p.y, p.z, a.id, value, kind, static_cast<std::uint8_t>(a.kind), material, small);
}

constexpr sim::VoxelCoord kNoPos{};
sim::Actor player(sim::PlayerId id) noexcept { return {sim::Actor::Kind::Player, id.value}; }
std::int32_t fromU32(std::uint32_t v) noexcept { return static_cast<std::int32_t>(v); }  // modular since C++20
std::uint32_t toU32(std::int32_t v) noexcept { return static_cast<std::uint32_t>(v); }

}  // namespace

const wire::ClientMessage* verifyClientMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes) {
  const wire::ClientMessage* root = verifyRoot<wire::ClientMessage>(bytes, maxBytes, kMaxClientTables);
  if (!root || !knownBody(root->body_type(), root->body())) return nullptr;
  // An Action's inner union is read by type too: the same rule applies one level down.
  if (const wire::Action* action = root->body_as_Action(); action && !knownBody(action->body_type(), action->body()))
    return nullptr;
  if (const wire::ColumnHashes* c = root->body_as_ColumnHashes(); c && !structsAligned(c->columns())) return nullptr;
  return root;
}

const wire::ServerMessage* verifyServerMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes) {
  const wire::ServerMessage* root = verifyRoot<wire::ServerMessage>(bytes, maxBytes, kMaxServerTables);
  if (!root || !knownBody(root->body_type(), root->body())) return nullptr;
  if (const wire::GeneratedCellHashes* g = root->body_as_GeneratedCellHashes(); g && !structsAligned(g->cells()))
    return nullptr;
  return root;
}

const wire::ServerMessage* openServerMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes,
                                             std::vector<std::uint8_t>& scratch) {
  const wire::ServerMessage* root = verifyServerMessage(bytes, maxBytes);
  if (!root || root->body_type() != wire::ServerBody::Compressed) return root;
  const wire::Compressed* c = root->body_as_Compressed();
  if (!c->bytes() || !decompressExact({c->bytes()->data(), c->bytes()->size()}, c->raw_size(), maxBytes, scratch))
    return nullptr;
  const wire::ServerMessage* inner = verifyServerMessage(scratch, maxBytes);
  if (!inner || inner->body_type() == wire::ServerBody::Compressed) return nullptr;
  return inner;
}

bool compressIfSmaller(std::span<const std::uint8_t> data, std::size_t margin, std::vector<std::uint8_t>& out) {
  out.resize(ZSTD_compressBound(data.size()));
  const std::size_t z = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 1);
  if (ZSTD_isError(z) || z + margin > data.size()) return false;
  out.resize(z);
  return true;
}

bool decompressExact(std::span<const std::uint8_t> frame, std::size_t rawSize, std::size_t maxBytes,
                     std::vector<std::uint8_t>& out) {
  if (rawSize == 0 || rawSize > maxBytes) return false;
  // The frame must declare rawSize itself, so a few bytes claiming maxBytes do not
  // get maxBytes of scratch (zstd checks the declared size while decoding).
  if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != rawSize) return false;
  out.resize(rawSize);
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  return !ZSTD_isError(n) && n == rawSize;
}

bool compressServerMessage(const std::uint8_t* data, std::size_t size, flatbuffers::FlatBufferBuilder& out,
                           std::vector<std::uint8_t>& scratch) {
  // The envelope costs about 40 bytes: compress only when that clearly pays.
  if (!compressIfSmaller({data, size}, 65, scratch)) return false;
  out.Clear();
  auto payload = out.CreateVector(scratch.data(), scratch.size());
  out.Finish(wire::CreateServerMessage(out, wire::ServerBody::Compressed,
                                       wire::CreateCompressed(out, static_cast<std::uint32_t>(size), payload).Union()));
  return true;
}

wire::InputRec toWire(const sim::PlayerInput& input) noexcept {
  return wire::InputRec(input.sequence, input.yaw, input.pitch, input.moveForward, input.moveRight, input.buttons);
}

sim::PlayerInput fromWire(const wire::InputRec& rec) noexcept {
  sim::PlayerInput in;
  in.sequence = rec.sequence();
  in.moveForward = rec.move_forward();
  in.moveRight = rec.move_right();
  in.yaw = rec.yaw();
  in.pitch = rec.pitch();
  in.buttons = rec.buttons();
  return in;
}

wire::PlayerStateRec toWire(const sim::PlayerState& s) noexcept {
  return wire::PlayerStateRec(s.position.x, s.position.y, s.position.z, s.velocity.x, s.velocity.y, s.velocity.z,
                              s.lastInput, s.stride, s.impactSpeed, s.yaw, s.pitch, sim::packMotionFlags(s),
                              s.motionEvents, s.surface);
}

sim::PlayerState fromWire(const wire::PlayerStateRec& rec) noexcept {
  sim::PlayerState s;
  s.position = {rec.px(), rec.py(), rec.pz()};
  s.velocity = {rec.vx(), rec.vy(), rec.vz()};
  s.yaw = rec.yaw();
  s.pitch = rec.pitch();
  sim::unpackMotionFlags(s, rec.flags());  // unassigned bits are ignored
  s.lastInput = rec.last_input();
  s.stride = rec.stride();
  s.motionEvents = rec.motion_events();
  s.surface = rec.surface();
  s.impactSpeed = rec.impact_speed();
  return s;
}

wire::PlayerPoseRec poseToWire(sim::PlayerId id, const sim::PlayerState& s) noexcept {
  return wire::PlayerPoseRec(id.value, s.position.x, s.position.y, s.position.z, s.yaw, s.pitch,
                             sim::packMotionFlags(s));
}

wire::AnimalRec toWire(const sim::Animal& a) noexcept {
  return wire::AnimalRec(a.id.value, a.position.x, a.position.y, a.position.z, a.velocity.x, a.velocity.y,
                         a.velocity.z, a.yaw, static_cast<std::uint8_t>(a.species), a.mode);
}

sim::Animal fromWire(const wire::AnimalRec& rec) noexcept {
  sim::Animal a;
  a.id = sim::AnimalId{rec.id()};
  // This signature cannot fail: an unknown species becomes Bird (the smallest box)
  // rather than an enum value no switch handles. Readers wanting to drop such
  // records check rec.species() themselves.
  a.species = rec.species() <= kMaxSpecies ? static_cast<sim::AnimalSpecies>(rec.species()) : sim::AnimalSpecies::Bird;
  a.position = {rec.px(), rec.py(), rec.pz()};
  a.velocity = {rec.vx(), rec.vy(), rec.vz()};
  a.yaw = rec.yaw();
  a.mode = rec.mode();
  return a;
}

namespace {
bool fitsInt16(std::int32_t v) noexcept { return v >= INT16_MIN && v <= INT16_MAX; }
}  // namespace

std::int32_t clampedVoxel(std::int64_t v) noexcept {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX));
}

bool toWire(const sim::FireChange& c, sim::CellCoord cell, wire::FireRec& out) noexcept {
  const sim::BrickCoord b = sim::brickOf(c.corner);
  const std::int32_t x = b.x - cell.x * sim::kCellBricks, z = b.z - cell.z * sim::kCellBricks;
  if (x < 0 || x >= sim::kCellBricks || z < 0 || z >= sim::kCellBricks || !fitsInt16(b.y)) return false;
  out = wire::FireRec(c.start, c.endTick, static_cast<std::int16_t>(b.y), static_cast<std::uint8_t>(x),
                      static_cast<std::uint8_t>(z), c.peak, c.flags, c.result);
  return true;
}

sim::FireChange fromWire(const wire::FireRec& rec, sim::CellCoord cell) noexcept {
  sim::FireChange c;
  c.corner = {clampedVoxel((std::int64_t{cell.x} * sim::kCellBricks + rec.x()) * sim::kBrickSize),
              rec.y() * sim::kBrickSize,
              clampedVoxel((std::int64_t{cell.z} * sim::kCellBricks + rec.z()) * sim::kBrickSize)};
  c.start = rec.start();
  c.endTick = rec.end_tick();
  c.peak = rec.peak();
  c.flags = rec.flags() & sim::kFireUniform;
  c.result = rec.result();
  return c;
}

bool toWire(const sim::Event& event, wire::EventRec& out) noexcept {
  const auto kind = static_cast<std::uint8_t>(event.index());
  return std::visit(
      [&](const auto& e) -> bool {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, sim::IgnitedEvent>) {
          out = rec(kind, e.position, e.by, 0, e.material, 0);
        } else if constexpr (std::is_same_v<T, sim::ExtinguishedEvent>) {
          out = rec(kind, e.position, {}, 0, static_cast<std::uint8_t>(e.cause), 0);
        } else if constexpr (std::is_same_v<T, sim::LandedEvent>) {
          out = rec(kind, e.position, e.who, e.impactSpeed, e.material, 0);
        } else if constexpr (std::is_same_v<T, sim::FootstepEvent>) {
          out = rec(kind, e.position, e.who, e.speed, e.surface, 0);
        } else if constexpr (std::is_same_v<T, sim::DigEvent>) {
          out = rec(kind, e.position, e.who, fromU32(e.voxels), e.material, e.radius);
        } else if constexpr (std::is_same_v<T, sim::FractureEvent>) {
          out = rec(kind, e.position, {}, fromU32(e.voxels), e.material, 0);
        } else if constexpr (std::is_same_v<T, sim::SplashEvent>) {
          out = rec(kind, e.position, e.who, e.speed, 0, 0);
        } else if constexpr (std::is_same_v<T, sim::AnimalCallEvent>) {
          out = rec(kind, e.position, {sim::Actor::Kind::Animal, e.animal}, 0, e.species, e.call);
        } else if constexpr (std::is_same_v<T, sim::ChatEvent>) {
          return false;  // ChatLine in StepBatch.chat
        } else if constexpr (std::is_same_v<T, sim::CommandRejectedEvent>) {
          out = rec(kind, kNoPos, player(e.player), fromU32(e.sequence), static_cast<std::uint8_t>(e.reason),
                    e.commandIndex);
        } else if constexpr (std::is_same_v<T, sim::PlayerJoinedEvent>) {
          out = rec(kind, kNoPos, player(e.player), 0, 0, 0);  // name: StepBatch.joined
        } else {
          static_assert(std::is_same_v<T, sim::PlayerLeftEvent>, "unhandled event kind");
          out = rec(kind, kNoPos, player(e.player), 0, 0, 0);
        }
        return true;
      },
      event);
}

bool fromWire(const wire::EventRec& r, sim::Event& out) noexcept {
  if (r.actor_kind() > kMaxActorKind) return false;
  const sim::VoxelCoord pos{r.x(), r.y(), r.z()};
  const sim::Actor actor{static_cast<sim::Actor::Kind>(r.actor_kind()), r.actor()};
  const sim::PlayerId pid{r.actor()};
  switch (r.kind()) {
    case kindOf<sim::IgnitedEvent>():
      out = sim::IgnitedEvent{pos, r.material(), actor};
      return true;
    case kindOf<sim::ExtinguishedEvent>():
      if (r.material() > kMaxExtinguishCause) return false;
      out = sim::ExtinguishedEvent{pos, static_cast<sim::ExtinguishCause>(r.material())};
      return true;
    case kindOf<sim::LandedEvent>():
      out = sim::LandedEvent{actor, pos, r.material(), r.value()};
      return true;
    case kindOf<sim::FootstepEvent>():
      out = sim::FootstepEvent{actor, pos, r.material(), r.value()};
      return true;
    case kindOf<sim::DigEvent>():
      out = sim::DigEvent{actor, pos, r.small(), r.material(), toU32(r.value())};
      return true;
    case kindOf<sim::FractureEvent>():
      out = sim::FractureEvent{pos, r.material(), toU32(r.value())};
      return true;
    case kindOf<sim::SplashEvent>():
      out = sim::SplashEvent{actor, pos, r.value()};
      return true;
    case kindOf<sim::AnimalCallEvent>():
      if (r.material() > kMaxSpecies || r.small() > kMaxCallKind) return false;
      out = sim::AnimalCallEvent{r.actor(), r.material(), r.small(), pos};
      return true;
    case kindOf<sim::CommandRejectedEvent>():
      if (r.material() > kMaxRejectReason || r.small() >= kCommandKindCount) return false;
      out = sim::CommandRejectedEvent{pid, toU32(r.value()), r.small(), static_cast<sim::RejectReason>(r.material())};
      return true;
    case kindOf<sim::PlayerJoinedEvent>():
      out = sim::PlayerJoinedEvent{pid, {}};  // the StepBatch reader fills the name from `joined`
      return true;
    case kindOf<sim::PlayerLeftEvent>():
      out = sim::PlayerLeftEvent{pid};
      return true;
    default:
      return false;  // ChatEvent (never an EventRec) or a kind this build does not know
  }
}

bool validText(const flatbuffers::String* s, std::size_t maxBytes) noexcept {
  if (s == nullptr || s->size() == 0 || s->size() > maxBytes) return false;
  for (std::uint8_t c : std::string_view(s->c_str(), s->size())) {
    if (c < 0x20 || c == 0x7f) return false;  // control bytes: terminal and log injection
  }
  return true;
}

bool isAction(const sim::CommandBody& body) noexcept {
  return std::holds_alternative<sim::DigCommand>(body) || std::holds_alternative<sim::PlaceCommand>(body) ||
         std::holds_alternative<sim::PourCommand>(body) || std::holds_alternative<sim::IgniteCommand>(body) ||
         std::holds_alternative<sim::ChatCommand>(body);
}

flatbuffers::Offset<wire::Action> encodeAction(flatbuffers::FlatBufferBuilder& b, std::uint32_t afterInput,
                                               std::uint32_t sequence, const sim::CommandBody& body) {
  wire::ActionBody type = wire::ActionBody::NONE;
  flatbuffers::Offset<void> off;
  if (auto* d = std::get_if<sim::DigCommand>(&body)) {
    type = wire::ActionBody::Dig;
    off = wire::CreateDig(b, d->target.x, d->target.y, d->target.z, static_cast<std::uint8_t>(d->radius)).Union();
  } else if (auto* p = std::get_if<sim::PlaceCommand>(&body)) {
    type = wire::ActionBody::Place;
    off = wire::CreatePlace(b, p->target.x, p->target.y, p->target.z, static_cast<std::uint8_t>(p->face),
                            static_cast<std::uint8_t>(p->size), p->material)
              .Union();
  } else if (auto* w = std::get_if<sim::PourCommand>(&body)) {
    type = wire::ActionBody::Pour;
    off = wire::CreatePour(b, w->position.x, w->position.y, w->position.z, w->amount).Union();
  } else if (auto* i = std::get_if<sim::IgniteCommand>(&body)) {
    type = wire::ActionBody::Ignite;
    off = wire::CreateIgnite(b, i->position.x, i->position.y, i->position.z).Union();
  } else if (auto* c = std::get_if<sim::ChatCommand>(&body)) {
    type = wire::ActionBody::Chat;
    off = wire::CreateChat(b, b.CreateString(c->text.bytes.data(), c->text.length)).Union();
  } else {
    return {};
  }
  return wire::CreateAction(b, afterInput, type, off, sequence);
}

bool decodeAction(const wire::Action& msg, sim::CommandBody& out) noexcept {
  if (msg.body() == nullptr) return false;
  switch (msg.body_type()) {
    case wire::ActionBody::NONE: return false;
    case wire::ActionBody::Dig: {
      const wire::Dig& d = *msg.body_as_Dig();
      if (!sim::validToolSize(d.radius())) return false;
      out = sim::DigCommand{{d.x(), d.y(), d.z()}, static_cast<sim::ToolSize>(d.radius())};
      return true;
    }
    case wire::ActionBody::Place: {
      const wire::Place& p = *msg.body_as_Place();
      if (!sim::validFace(p.face()) || !sim::validToolSize(p.size())) return false;
      out = sim::PlaceCommand{{p.x(), p.y(), p.z()}, static_cast<sim::Face>(p.face()),
                              static_cast<sim::ToolSize>(p.size()), p.material()};
      return true;
    }
    case wire::ActionBody::Pour: {
      const wire::Pour& p = *msg.body_as_Pour();
      if (p.amount() == 0 || p.amount() > sim::kMaxPourAmount) return false;
      out = sim::PourCommand{{p.x(), p.y(), p.z()}, p.amount()};
      return true;
    }
    case wire::ActionBody::Ignite: {
      const wire::Ignite& i = *msg.body_as_Ignite();
      out = sim::IgniteCommand{{i.x(), i.y(), i.z()}};
      return true;
    }
    case wire::ActionBody::Chat: {
      const wire::Chat& c = *msg.body_as_Chat();
      if (!validText(c.text(), sim::kMaxChatBytes)) return false;
      out = sim::ChatCommand{sim::ChatText::from(std::string_view(c.text()->c_str(), c.text()->size()))};
      return true;
    }
  }
  return false;  // a body type this build does not know (the verifier refuses those)
}

bool validActionResult(const wire::ActionResultRec& rec) noexcept {
  if (rec.command() >= kCommandKindCount) return false;
  if (rec.outcome() == kActionApplied) return rec.reason() == 0;
  return rec.outcome() == kActionRejected && rec.reason() <= kMaxRejectReason;
}

const char* messageName(wire::ServerBody type) noexcept {
  switch (type) {
    case wire::ServerBody::NONE: return "None";
    case wire::ServerBody::Welcome: return "Welcome";
    case wire::ServerBody::Reject: return "Reject";
    case wire::ServerBody::GeneratedCellHashes: return "GeneratedCellHashes";
    case wire::ServerBody::JoinSnapshot: return "JoinSnapshot";
    case wire::ServerBody::StepBatch: return "StepBatch";
    case wire::ServerBody::CellState: return "CellState";
    case wire::ServerBody::Snapshot: return "Snapshot";
    case wire::ServerBody::Compressed: return "Compressed";
    case wire::ServerBody::AuthChallenge: return "AuthChallenge";
    case wire::ServerBody::JoinChunk: return "JoinChunk";
    case wire::ServerBody::Rejections: return "Rejections";
    case wire::ServerBody::ActionResults: return "ActionResults";
    case wire::ServerBody::Stream: return "Stream";
    case wire::ServerBody::SurfaceChanges: return "SurfaceChanges";
  }
  return "Unknown";  // a value from the wire outside the union
}

const char* messageName(wire::ClientBody type) noexcept {
  switch (type) {
    case wire::ClientBody::NONE: return "None";
    case wire::ClientBody::Hello: return "Hello";
    case wire::ClientBody::WorldReady: return "WorldReady";
    case wire::ClientBody::CellHashRequest: return "CellHashRequest";
    case wire::ClientBody::Inputs: return "Inputs";
    case wire::ClientBody::Action: return "Action";
    case wire::ClientBody::AuthProof: return "AuthProof";
    case wire::ClientBody::JoinProgress: return "JoinProgress";
    case wire::ClientBody::CellsDropped: return "CellsDropped";
    case wire::ClientBody::ColumnHashes: return "ColumnHashes";
  }
  return "Unknown";
}

}  // namespace loam::net

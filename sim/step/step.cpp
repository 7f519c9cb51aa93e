#include "sim/step/step.h"

#include "sim/step/edit_footprint.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>

#include "sim/systems/motion.h"
#include "sim/systems/sim_context.h"
#include "sim/world/grid_walk.h"
#include "sim/world/voxel_collision.h"

namespace loam::sim {

namespace {

void reject(SimContext& ctx, const Command& c, RejectReason why) {
  ctx.emit(CommandRejectedEvent{c.player, c.sequence, static_cast<std::uint8_t>(c.body.index()), why});
}

Actor actorOf(PlayerId id) { return Actor{Actor::Kind::Player, id.value}; }

std::int32_t mmPerSecond(std::int64_t unitsPerTick) {
  return static_cast<std::int32_t>(unitsPerTick * kTicksPerSecond * 1000 / kUnitsPerMetre);
}

// Lazily refilled token bucket: tokens at `tick`, given tokens at `since`.
std::int32_t tokensNow(std::int32_t tokens, std::uint64_t since, std::uint64_t tick, std::int32_t perTick,
                       std::int32_t burst) {
  std::uint64_t dt = tick > since ? tick - since : 0;
  std::uint64_t refill = dt * static_cast<std::uint64_t>(perTick);
  std::uint64_t t = static_cast<std::uint64_t>(tokens) + refill;
  return t > static_cast<std::uint64_t>(burst) ? burst : static_cast<std::int32_t>(t);
}

bool canSpendEdit(const SimState& s, const Player& p) {
  return tokensNow(p.budget.editTokens, p.budget.editTick, s.tick, s.rules.editTokensPerTick, s.rules.editTokenBurst) >=
         s.rules.editTokenCost;
}

void spendEdit(const SimState& s, Player& p) {
  p.budget.editTokens =
      tokensNow(p.budget.editTokens, p.budget.editTick, s.tick, s.rules.editTokensPerTick, s.rules.editTokenBurst) -
      s.rules.editTokenCost;
  p.budget.editTick = s.tick;
}

bool inReach(const SimState& s, const Player& p, VoxelCoord target) {
  std::int64_t r = s.rules.reach;
  return distanceSquared(eyePosition(p.motion), voxelCentre(target)) <= r * r;
}

// Sight lines walk the one grid walk in doubles. Every input is exact in a double
// (units are integers; a voxel is 1024 units, a power of two) and the walk uses only
// + - * / and floor, each correctly rounded on every platform under loam_flags: the
// verdict is the same everywhere, as integer code would be.
using SightWalk = GridWalk<double, GridTies::LowAxis, GridBoundaries::FromCell>;

// A sight line ends on the target's surface; crossings this close to the end are
// the end itself (rounding of a line that grazes the voxels beside the target).
constexpr double kSightEndSlack = 1e-9;

// Whether the segment eye -> end (units) reaches `target` or its end without
// entering a colliding voxel first. The eye's own voxel never blocks.
bool clearSegment(const SimState& s, Vec3i eye, Vec3i end, VoxelCoord target) {
  constexpr double kVoxel = kUnitsPerVoxel;
  const double o[3] = {eye.x / kVoxel, eye.y / kVoxel, eye.z / kVoxel};
  const double d[3] = {(std::int64_t{end.x} - eye.x) / kVoxel, (std::int64_t{end.y} - eye.y) / kVoxel,
                       (std::int64_t{end.z} - eye.z) / kVoxel};
  SightWalk walk(o, d, 0.0, 1);
  const VoxelCoord from = voxelOf(eye), to = voxelOf(end);
  // Each step crosses one boundary: the walk needs at most this many (+ slack).
  const std::int64_t maxSteps = std::abs(std::int64_t{to.x} - from.x) + std::abs(std::int64_t{to.y} - from.y) +
                                std::abs(std::int64_t{to.z} - from.z) + 3;
  for (std::int64_t n = 0; n < maxSteps; ++n) {
    const std::array<int, 3>& c = walk.cube();
    const VoxelCoord v{c[0], c[1], c[2]};
    if (v == target) return true;
    if (n > 0 && s.world.bounds().containsVoxel(v) && s.lut.collides[s.world.get(v)]) return false;
    if (walk.exitT() >= 1.0 - kSightEndSlack) return true;
    walk.advance();
  }
  return true;
}

// The eye sees some of `target`: a clear segment to the point of its box nearest the
// eye, or to the centre of one of the faces turned toward the eye (a voxel in a
// floor seen at a low angle, a block half hidden behind another). The target itself
// never blocks: for Place it is the solid voxel clicked, placed against.
bool inSight(const SimState& s, const Player& p, VoxelCoord target) {
  const Vec3i eye = eyePosition(p.motion);
  const std::int32_t lo[3] = {target.x * kUnitsPerVoxel, target.y * kUnitsPerVoxel, target.z * kUnitsPerVoxel};
  const std::int32_t e[3] = {eye.x, eye.y, eye.z};
  std::int32_t nearest[3];
  for (int a = 0; a < 3; ++a) nearest[a] = std::clamp(e[a], lo[a], lo[a] + kUnitsPerVoxel);
  if (clearSegment(s, eye, {nearest[0], nearest[1], nearest[2]}, target)) return true;
  const Vec3i centre = voxelCentre(target);
  for (int a = 0; a < 3; ++a) {
    if (e[a] >= lo[a] && e[a] <= lo[a] + kUnitsPerVoxel) continue;  // no face on this axis faces the eye
    std::int32_t face[3] = {centre.x, centre.y, centre.z};
    face[a] = nearest[a];
    if (clearSegment(s, eye, {face[0], face[1], face[2]}, target)) return true;
  }
  return false;
}

// Common checks for dig / place / pour / ignite: the target is in the world and, for
// a player, within reach of its eye, in its sight and paid for with an edit token. The server
// (player 0: console, scenario events, fire tests) has no reach and no budget.
// Returns false after emitting the rejection; `who` is the player or null (server).
bool editAllowed(SimState& s, SimContext& ctx, const Command& c, VoxelCoord target, Player*& who) {
  who = nullptr;
  if (c.player != kServerPlayer) {
    who = s.findPlayer(c.player);
    if (!who) {
      reject(ctx, c, RejectReason::UnknownPlayer);
      return false;
    }
  }
  if (!s.world.bounds().containsVoxel(target)) {
    reject(ctx, c, RejectReason::OutOfBounds);
    return false;
  }
  if (who && !inReach(s, *who, target)) {
    reject(ctx, c, RejectReason::OutOfReach);
    return false;
  }
  if (who && !inSight(s, *who, target)) {
    reject(ctx, c, RejectReason::NoLineOfSight);
    return false;
  }
  if (who && !canSpendEdit(s, *who)) {
    reject(ctx, c, RejectReason::RateLimited);
    return false;
  }
  return true;
}

Actor actorOf(const Player* p) { return p ? actorOf(p->id) : Actor{}; }

void spendEdit(const SimState& s, Player* p) {
  if (p) spendEdit(s, *p);
}

void doJoin(SimState& s, SimContext& ctx, const Command& c, const JoinCommand& j) {
  if (c.player == kServerPlayer) return reject(ctx, c, RejectReason::BadPlayerId);
  if (s.findPlayer(c.player)) return reject(ctx, c, RejectReason::AlreadyJoined);
  if (s.players.size() >= s.rules.maxPlayers) return reject(ctx, c, RejectReason::WorldFull);
  if (j.name.length == 0 || j.name.length > kMaxNameBytes) return reject(ctx, c, RejectReason::BadArgument);
  Player p;
  p.id = c.player;
  p.name = j.name;
  const Spawn& sp = s.spawns[c.player.value % s.spawns.size()];
  p.motion.position = sp.position;
  p.motion.yaw = sp.yaw;
  p.budget.editTokens = s.rules.editTokenBurst;
  p.budget.editTick = s.tick;
  p.budget.chatTokens = s.rules.chatTokenBurst;
  p.budget.chatTick = s.tick;
  p.budget.pourTokens = s.rules.pourUnitsBurst;
  p.budget.pourTick = s.tick;
  auto it = std::lower_bound(s.players.begin(), s.players.end(), c.player,
                             [](const Player& a, PlayerId v) { return a.id < v; });
  s.players.insert(it, p);
  ctx.emit(PlayerJoinedEvent{c.player, j.name});
}

void doLeave(SimState& s, SimContext& ctx, const Command& c) {
  auto it = std::lower_bound(s.players.begin(), s.players.end(), c.player,
                             [](const Player& a, PlayerId v) { return a.id < v; });
  if (it == s.players.end() || it->id != c.player) return reject(ctx, c, RejectReason::UnknownPlayer);
  s.players.erase(it);
  ctx.emit(PlayerLeftEvent{c.player});
}

void doInput(SimState& s, SimContext& ctx, const Command& c, const InputCommand& in) {
  Player* p = s.findPlayer(c.player);
  if (!p) return reject(ctx, c, RejectReason::UnknownPlayer);
  // Stale or duplicate inputs are normal on an unreliable channel: ignore silently.
  if (in.input.sequence <= p->motion.lastInput) return;
  if (p->budget.inputTick != s.tick) {
    p->budget.inputTick = s.tick;
    p->budget.inputsInTick = 0;
  }
  if (p->budget.inputsInTick >= s.rules.maxInputsPerTick) return;  // the client will reconcile
  ++p->budget.inputsInTick;
  p->motion = motionStep(p->motion, in.input, s.world, s.lut, &s.scratch.collision);
  const PlayerState& m = p->motion;
  if (m.motionEvents == 0) return;
  const VoxelCoord at = voxelOf(m.position);
  if (m.motionEvents & kMotionLanded) {
    ctx.emit(LandedEvent{actorOf(p->id), at, m.surface, mmPerSecond(m.impactSpeed)});
  }
  if (m.motionEvents & kMotionSplash) {
    ctx.emit(SplashEvent{actorOf(p->id), at, mmPerSecond(m.impactSpeed)});
  }
  if (m.motionEvents & kMotionFootstep) {
    std::int64_t v2 = std::int64_t{m.velocity.x} * m.velocity.x + std::int64_t{m.velocity.z} * m.velocity.z;
    ctx.emit(FootstepEvent{actorOf(p->id), at, m.surface, mmPerSecond(isqrt64(static_cast<std::uint64_t>(v2)))});
  }
}

// Voxels in the largest dig's bounding cube: room for any dig sphere.
constexpr std::size_t kMaxDigVoxels = (2 * 8 + 1) * (2 * 8 + 1) * (2 * 8 + 1);
static_assert(static_cast<int>(ToolSize::Cm40) == 8, "kMaxDigVoxels covers the largest tool");

void doDig(SimState& s, SimContext& ctx, const Command& c, const DigCommand& d) {
  if (!validToolSize(d.radius)) return reject(ctx, c, RejectReason::BadArgument);
  Player* p = nullptr;
  if (!editAllowed(s, ctx, c, d.target, p)) return;
  std::vector<std::uint32_t>& counts = s.scratch.counts;
  std::fill(counts.begin(), counts.end(), 0u);
  // One walk of the sphere collects what would be dug; a dig that would remove
  // nothing is rejected before anything changes.
  std::vector<VoxelCoord>& dug = s.scratch.voxels;
  dug.clear();
  forEachDugVoxel(d, s.world.bounds(), s.lut, [&](VoxelCoord v) { return s.world.get(v); },
                  [&](VoxelCoord v, MaterialId m) {
                    ++counts[m];
                    dug.push_back(v);
                  });
  const auto total = static_cast<std::uint32_t>(dug.size());
  if (total == 0) return reject(ctx, c, RejectReason::NothingToDig);
  spendEdit(s, p);
  for (const VoxelCoord& v : dug) ctx.setVoxel(v, kAir);
  emitDigEvents(actorOf(p), d, counts, [&](const Event& e) { ctx.emit(e); });
}

bool rangeHitsPlayer(const SimState& s, const VoxelRange& r) {
  for (const Player& p : s.players) {
    const PlayerState& m = p.motion;
    const std::int32_t h = m.crouching ? kPlayerCrouchHeight : kPlayerHeight;
    const std::int32_t lo[3] = {m.position.x - kPlayerHalfWidth, m.position.y, m.position.z - kPlayerHalfWidth};
    const std::int32_t hi[3] = {m.position.x + kPlayerHalfWidth, m.position.y + h, m.position.z + kPlayerHalfWidth};
    bool overlap = true;
    for (int a = 0; a < 3; ++a) {
      overlap = overlap && r.lo[a] * kUnitsPerVoxel < hi[a] && r.hi[a] * kUnitsPerVoxel > lo[a];
    }
    if (overlap) return true;
  }
  return false;
}

void doPlace(SimState& s, SimContext& ctx, const Command& c, const PlaceCommand& pc) {
  if (!validToolSize(pc.size) || !validFace(pc.face)) return reject(ctx, c, RejectReason::BadArgument);
  if (pc.material >= s.lut.count || !s.lut.placeable[pc.material]) return reject(ctx, c, RejectReason::BadMaterial);
  Player* p = nullptr;
  if (!editAllowed(s, ctx, c, pc.target, p)) return;
  const MaterialId hit = s.world.get(pc.target);
  if (hit == kAir || s.lut.liquid[hit]) return reject(ctx, c, RejectReason::BadArgument);  // no face to place on
  const VoxelRange r = placeRange(pc);
  if (!s.world.bounds().containsVoxel({r.lo[0], r.lo[1], r.lo[2]}) ||
      !s.world.bounds().containsVoxel({r.hi[0] - 1, r.hi[1] - 1, r.hi[2] - 1})) {
    return reject(ctx, c, RejectReason::OutOfBounds);
  }
  if (rangeHitsPlayer(s, r)) return reject(ctx, c, RejectReason::Blocked);
  const auto get = [&](VoxelCoord v) { return s.world.get(v); };
  std::uint32_t n = 0;
  forEachPlacedVoxel(pc, s.lut, get, [&](VoxelCoord) { ++n; });
  if (n == 0) return reject(ctx, c, RejectReason::Blocked);
  spendEdit(s, p);
  // A brick-aligned 40 cm cube over an all-fillable brick is one brick-level record.
  const bool aligned = pc.size == ToolSize::Cm40 && (r.lo[0] & 7) == 0 && (r.lo[1] & 7) == 0 && (r.lo[2] & 7) == 0;
  if (aligned && n == static_cast<std::uint32_t>(kBrickVoxels)) {
    ctx.fillBrick(brickOf({r.lo[0], r.lo[1], r.lo[2]}), pc.material);
    return;
  }
  forEachPlacedVoxel(pc, s.lut, get, [&](VoxelCoord v) { ctx.setVoxel(v, pc.material); });
}

void doPour(SimState& s, SimContext& ctx, const Command& c, const PourCommand& pc) {
  if (pc.amount == 0 || pc.amount > kMaxPourAmount) return reject(ctx, c, RejectReason::BadArgument);
  Player* p = nullptr;
  if (!editAllowed(s, ctx, c, pc.position, p)) return;
  if (p && waterFull(s.water)) return reject(ctx, c, RejectReason::WaterLimit);  // the server may still pour
  // Each player's own share of the water: a budget in water units (SimRules).
  const std::int32_t share = p ? tokensNow(p->budget.pourTokens, p->budget.pourTick, s.tick, s.rules.pourUnitsPerTick,
                                           s.rules.pourUnitsBurst)
                               : 0;
  if (p && share < static_cast<std::int64_t>(pc.amount)) return reject(ctx, c, RejectReason::WaterLimit);
  if (!pourWater(s.water, ctx, pc.position, pc.amount)) return reject(ctx, c, RejectReason::Blocked);
  spendEdit(s, p);
  if (p) {
    p->budget.pourTokens = share - static_cast<std::int32_t>(pc.amount);
    p->budget.pourTick = s.tick;
  }
}

void doIgnite(SimState& s, SimContext& ctx, const Command& c, const IgniteCommand& ic) {
  Player* p = nullptr;
  if (!editAllowed(s, ctx, c, ic.position, p)) return;
  if (!igniteFire(s.fire, ctx, ic.position, actorOf(p))) return reject(ctx, c, RejectReason::NotFlammable);
  spendEdit(s, p);
}

void doSetTime(SimState& s, SimContext& ctx, const Command& c, const SetTimeCommand& tc) {
  if (c.player != kServerPlayer) return reject(ctx, c, RejectReason::BadPlayerId);
  if (tc.timeOfDay >= s.weather.dayLength) return reject(ctx, c, RejectReason::BadArgument);
  setTimeOfDay(s.weather, ctx, tc.timeOfDay);
}

void doSetWeather(SimState& s, SimContext& ctx, const Command& c, const SetWeatherCommand& wc) {
  if (c.player != kServerPlayer) return reject(ctx, c, RejectReason::BadPlayerId);
  if (wc.rain > 1000) return reject(ctx, c, RejectReason::BadArgument);
  setWeather(s.weather, ctx, wc.rain, wc.windDirection, wc.windStrength);
}

// The admin's teleport. The box is checked in plan before the column is read, so a
// bad x,z never generates anything on a streamed world. The player never lands
// inside something: on the ground, a box that overlaps a collider beside the column
// (a trunk, an overhang) is lifted a voxel at a time, at most kTeleportLiftVoxels;
// with a height, a box that overlaps one is refused (Blocked).
constexpr std::int32_t kTeleportLiftVoxels = 64;  // 3.2 m
void doTeleport(SimState& s, SimContext& ctx, const Command& c, const TeleportCommand& tc) {
  if (c.player != kServerPlayer) return reject(ctx, c, RejectReason::BadPlayerId);
  Player* p = s.findPlayer(tc.target);
  if (!p) return reject(ctx, c, RejectReason::UnknownPlayer);
  const WorldBounds& bounds = s.world.bounds();
  Vec3i at = tc.position;
  if (tc.onGround) {
    const std::int32_t midY = (bounds.minBrick.y + bounds.maxBrick.y) / 2 * kBrickSize * kUnitsPerVoxel;
    if (!playerBoxInside(bounds, {at.x, midY, at.z})) return reject(ctx, c, RejectReason::OutOfBounds);
    const std::optional<std::int32_t> ground = groundHeight(s.world, s.lut, voxelOfUnit(at.x), voxelOfUnit(at.z));
    if (!ground) return reject(ctx, c, RejectReason::Blocked);
    at.y = *ground;
  }
  if (!playerBoxInside(bounds, at)) return reject(ctx, c, RejectReason::OutOfBounds);
  auto blocked = [&] { return boxCollides(s.world, s.lut, boxAtFeet(at, kPlayerHalfWidth, kPlayerHeight)); };
  for (std::int32_t lift = 0; tc.onGround && lift < kTeleportLiftVoxels && blocked(); ++lift) at.y += kUnitsPerVoxel;
  if (!playerBoxInside(bounds, at)) return reject(ctx, c, RejectReason::OutOfBounds);
  if (blocked()) return reject(ctx, c, RejectReason::Blocked);
  PlayerState& m = p->motion;
  m.position = at;
  m.velocity = {};
  m.onGround = tc.onGround;
  m.swimming = false;
  m.running = false;
  m.stride = 0;
  m.motionEvents = 0;
  m.impactSpeed = 0;
}

void doChat(SimState& s, SimContext& ctx, const Command& c, const ChatCommand& cc) {
  if (cc.text.length == 0 || cc.text.length > kMaxChatBytes) return reject(ctx, c, RejectReason::BadArgument);
  if (c.player != kServerPlayer) {
    Player* p = s.findPlayer(c.player);
    if (!p) return reject(ctx, c, RejectReason::UnknownPlayer);
    std::int32_t t =
        tokensNow(p->budget.chatTokens, p->budget.chatTick, s.tick, s.rules.chatTokensPerTick, s.rules.chatTokenBurst);
    if (t < s.rules.chatTokenCost) return reject(ctx, c, RejectReason::RateLimited);
    p->budget.chatTokens = t - s.rules.chatTokenCost;
    p->budget.chatTick = s.tick;
  }
  ctx.emit(ChatEvent{c.player, cc.text});
}

void apply(SimState& s, SimContext& ctx, const Command& c) {
  // The variant index order is fixed (commands.h); each alternative has one handler.
  if (auto* j = std::get_if<JoinCommand>(&c.body)) return doJoin(s, ctx, c, *j);
  if (std::get_if<LeaveCommand>(&c.body)) return doLeave(s, ctx, c);
  if (auto* i = std::get_if<InputCommand>(&c.body)) return doInput(s, ctx, c, *i);
  if (auto* d = std::get_if<DigCommand>(&c.body)) return doDig(s, ctx, c, *d);
  if (auto* p = std::get_if<PlaceCommand>(&c.body)) return doPlace(s, ctx, c, *p);
  if (auto* w = std::get_if<PourCommand>(&c.body)) return doPour(s, ctx, c, *w);
  if (auto* f = std::get_if<IgniteCommand>(&c.body)) return doIgnite(s, ctx, c, *f);
  if (auto* t = std::get_if<SetTimeCommand>(&c.body)) return doSetTime(s, ctx, c, *t);
  if (auto* w = std::get_if<SetWeatherCommand>(&c.body)) return doSetWeather(s, ctx, c, *w);
  if (auto* m = std::get_if<ChatCommand>(&c.body)) return doChat(s, ctx, c, *m);
  if (auto* t = std::get_if<TeleportCommand>(&c.body)) return doTeleport(s, ctx, c, *t);
}

// Player records for this step: merge-walk the players before and after (both
// sorted by id): Left for ids that vanished, Joined for new ids, Updated for
// changed records.
void recordPlayerChanges(const std::vector<Player>& before, const std::vector<Player>& after, StepOutput& out) {
  std::size_t i = 0, j = 0;
  while (i < before.size() || j < after.size()) {
    if (j == after.size() || (i < before.size() && before[i].id < after[j].id)) {
      PlayerChange ch;
      ch.kind = PlayerChange::Kind::Left;
      ch.player.id = before[i].id;
      out.players.push_back(ch);
      ++i;
    } else if (i == before.size() || after[j].id < before[i].id) {
      out.players.push_back(PlayerChange{PlayerChange::Kind::Joined, after[j]});
      ++j;
    } else {
      if (!(before[i] == after[j])) out.players.push_back(PlayerChange{PlayerChange::Kind::Updated, after[j]});
      ++i;
      ++j;
    }
  }
}

// The scene's ignition points due at the tick this step starts from: ignites by the
// server, before every command (the server's own commands sort first anyway).
void igniteScheduled(SimState& s, SimContext& ctx) {
  const std::uint64_t from = s.tick - 1;
  for (const ScheduledIgnition& i : s.fire.schedule) {
    if (i.tick != from) continue;
    const std::int32_t y = i.onGround ? topVoxelY(s.world, s.lut, i.x, i.z, INT32_MAX, true) : i.y;
    apply(s, ctx, Command{kServerPlayer, 0, IgniteCommand{VoxelCoord{i.x, y, i.z}}});
  }
}

}  // namespace

void step(SimState& state, std::span<const Command> commands, StepOutput& out) noexcept {
  out.clear();
  state.tick += 1;
  out.tick = state.tick;
  SimContext ctx(state, out);
  StepScratch& scratch = state.scratch;
  scratch.players.assign(state.players.begin(), state.players.end());
  if (scratch.counts.size() != 256) scratch.counts.assign(256, 0);
  scratch.voxels.reserve(kMaxDigVoxels);

  // 1. Commands in (player, sequence, span position) order.
  scratch.order.clear();
  for (std::size_t i = 0; i < commands.size(); ++i) scratch.order.push_back(static_cast<std::uint32_t>(i));
  std::sort(scratch.order.begin(), scratch.order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Command& ca = commands[a];
    const Command& cb = commands[b];
    if (ca.player != cb.player) return ca.player < cb.player;
    if (ca.sequence != cb.sequence) return ca.sequence < cb.sequence;
    return a < b;
  });
  igniteScheduled(state, ctx);
  for (std::uint32_t i : scratch.order) apply(state, ctx, commands[i]);

  // 2. Systems in fixed order.
  stepWeather(state.weather, ctx);
  stepWater(state.water, ctx);
  stepFire(state.fire, ctx);
  stepAnimals(state.animals, ctx);

  // 3. Player records.
  recordPlayerChanges(scratch.players, state.players, out);
}

StepOutput step(SimState& state, std::span<const Command> commands) {
  StepOutput out;
  step(state, commands, out);
  return out;
}

}  // namespace loam::sim

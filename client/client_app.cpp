#include "client/client_app.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <thread>

#include "sim/systems/motion.h"
#include "sim/systems/weather.h"

namespace loam::client {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTickMs = 1000.0 / sim::kTicksPerSecond;
constexpr double kUnitsPerMetre = sim::kUnitsPerMetre;
constexpr double kDegrees = std::numbers::pi / 180.0;

std::array<double, 3> metres(const sim::Vec3i& u) {
  return {u.x / kUnitsPerMetre, u.y / kUnitsPerMetre, u.z / kUnitsPerMetre};
}

const char* rejectText(sim::RejectReason r) {
  switch (r) {
    case sim::RejectReason::UnknownPlayer: return "unknown player";
    case sim::RejectReason::AlreadyJoined: return "already joined";
    case sim::RejectReason::BadPlayerId: return "not allowed";
    case sim::RejectReason::WorldFull: return "world full";
    case sim::RejectReason::OutOfReach: return "out of reach";
    case sim::RejectReason::OutOfBounds: return "outside the world";
    case sim::RejectReason::BadMaterial: return "cannot place that material";
    case sim::RejectReason::RateLimited: return "too fast";
    case sim::RejectReason::Blocked: return "blocked";
    case sim::RejectReason::BadArgument: return "bad argument";
    case sim::RejectReason::NotFlammable: return "does not burn";
    case sim::RejectReason::NothingToDig: return "nothing to dig";
    case sim::RejectReason::WaterLimit: return "no more water";
    case sim::RejectReason::NoLineOfSight: return "not in sight";
  }
  return "rejected";
}

// A stable, distinct colour per player id (body boxes).
render::Rgba8 playerColour(std::uint32_t id) {
  static constexpr render::Rgba8 kColours[] = {{70, 110, 200, 255}, {200, 90, 60, 255},  {80, 170, 90, 255},
                                               {190, 160, 60, 255}, {150, 80, 180, 255}, {60, 170, 170, 255}};
  return kColours[id % (sizeof kColours / sizeof kColours[0])];
}

}  // namespace

sim::Result<std::unique_ptr<ClientApp>> ClientApp::create(const ClientOptions& options) {
  std::unique_ptr<ClientApp> app(new ClientApp());
  app->options_ = options;
  app->width_ = options.width;
  app->height_ = options.height;
  app->fixedCamera_ = options.camera;
  net::ClientConfig config;
  config.name = options.name;
  config.link = options.link;
  // A streamed world is generated a little beyond what is drawn: MeshCache meshes a
  // chunk only once the columns around it are present.
  config.streamRadiusMetres = std::max(options.detailMetres(), net::kReadableRadiusMetres) + 16.0;
  if (!options.local) {
    // Someone else's server may hold accounts: our key proves the name is ours
    // (docs/PROTOCOL.md, Accounts). The local server has none, so no file for it.
    // A key file given with --identity must work; without it, a default that cannot
    // be used (no HOME, read-only home) leaves us keyless: servers with accounts then
    // say so (AuthRequired) instead of the client refusing to start.
    const std::string path = options.identity.empty() ? defaultIdentityPath() : options.identity;
    auto key = path.empty() ? sim::Result<net::AccountKey>(sim::makeError("no XDG_DATA_HOME or HOME"))
                            : net::loadOrCreateIdentity(path);
    if (key) {
      config.accountKey = std::make_shared<const net::AccountKey>(*key);
    } else if (!options.identity.empty()) {
      return key.error();
    } else {
      std::fprintf(stderr, "loam-client: warning: joining without an account key: %s\n", key.error().message.c_str());
    }
  }
  if (options.local) {
    auto local = LocalServer::start(options.scene, options.seed);
    if (!local) return local.error();
    app->local_ = std::move(*local);
    // Set before anyone joins, so the join snapshot already carries it.
    if (options.timeOfDay) app->local_->setTimeOfDay(*options.timeOfDay);
    config.host = "127.0.0.1";
    config.port = app->local_->port();
    config.sceneDir = app->local_->sceneDir();
    config.worldFactory = app->local_->worldFactory();
  } else {
    config.host = options.host;
    config.port = options.port;
    config.sceneDir = options.sceneDir;
    // Someone else's server: the time can only be shown differently.
    app->shownTime_ = options.timeOfDay;
  }
  auto conn = net::ClientConnection::connect(config);
  if (!conn) return conn.error();
  app->conn_ = std::move(*conn);
  return app;
}

ClientApp::~ClientApp() {
  stopNetworkThread();
  if (conn_) conn_->disconnect();
  // The renderer first (it references the mirror's world), then the connection,
  // then the server.
  renderer_.reset();
  audio_.reset();
  conn_.reset();
  local_.reset();
}

double ClientApp::nowMs() const {
  return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
}

void ClientApp::startNetworkThread() {
  if (netThread_.joinable()) return;
  netStop_ = false;
  netThread_ = std::thread([this] { networkLoop(); });
}

void ClientApp::stopNetworkThread() {
  if (!netThread_.joinable()) return;
  releaseNetwork();
  netStop_ = true;
  netThread_.join();
}

void ClientApp::holdNetwork() {
  if (netThread_.joinable() && !held_.owns_lock()) held_.lock();
}

void ClientApp::releaseNetwork() {
  if (held_.owns_lock()) held_.unlock();
}

// Receives, sends the input ticks due and flushes, about every millisecond: the
// connection's own cadence, whatever the frames do.
void ClientApp::networkLoop() {
  while (!netStop_) {
    {
      std::lock_guard<std::mutex> lock(netMutex_);
      conn_->service(nowMs(), 0);
      runDueInputTicks();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ClientApp::service(int timeoutMs) {
  if (!netThread_.joinable()) conn_->service(nowMs(), timeoutMs);
  const double nowS = nowMs() / 1000.0;
  for (sim::Event& e : conn_->takeEvents()) {
    if (const auto* c = std::get_if<sim::ChatEvent>(&e)) {
      // The server's lines look like no player's: their own prefix and colour (no
      // player can be called "server" either: net/player_name.h).
      if (c->from == sim::kServerPlayer) {
        chat_.add("[server] " + std::string(c->text.view()), nowS, {255, 160, 60, 255});
      } else {
        std::string who = conn_->playerName(c->from.value);
        if (who.empty()) who = "player " + std::to_string(c->from.value);
        chat_.add(who + ": " + std::string(c->text.view()), nowS);
      }
    } else if (const auto* j = std::get_if<sim::PlayerJoinedEvent>(&e)) {
      chat_.add(std::string(j->name.view()) + " joined", nowS, {255, 220, 90, 255});
    } else if (const auto* l = std::get_if<sim::PlayerLeftEvent>(&e)) {
      std::string who = conn_->playerName(l->player.value);
      chat_.add((who.empty() ? "a player" : who) + " left", nowS, {255, 220, 90, 255});
    } else if (const auto* r = std::get_if<sim::CommandRejectedEvent>(&e)) {
      // Only our own edits and chat (inputs are never reported back usefully).
      if (r->player == conn_->playerId() && r->commandIndex != static_cast<std::uint8_t>(net::CommandKind::Input))
        chat_.add(std::string("rejected: ") + rejectText(r->reason), nowS, {255, 120, 100, 255});
    }
    events_.push_back(std::move(e));
  }
  // Nobody takes them (no audio yet): keep a bounded backlog.
  constexpr std::size_t kMaxEvents = 8192;
  if (events_.size() > kMaxEvents) events_.erase(events_.begin(), events_.end() - kMaxEvents / 2);

  if (conn_->phase() == net::ClientPhase::Playing && !worldSet_) onPlaying();
  if (worldSet_) {
    std::vector<sim::BrickCoord> changed = conn_->takeWorldChanges(meshChanges_);
    const std::vector<sim::BrickCoord> predicted = conn_->takePredictedChanges();
    changed.insert(changed.end(), predicted.begin(), predicted.end());
    if (renderer_ && !changed.empty()) renderer_->markDirty(changed);
    // Far edits: what changed beyond the voxels, for the far terrain.
    const std::vector<sim::SurfaceChange> surface = conn_->takeSurfaceChanges();
    if (renderer_ && !surface.empty()) renderer_->applySurfaceChanges(surface);
  }
}

std::vector<sim::Event> ClientApp::takeEvents() {
  std::vector<sim::Event> out;
  out.swap(events_);
  return out;
}

void ClientApp::onPlaying() {
  const sim::SimState& m = conn_->mirror();
  if (!lookInitialised_) {
    tool_ = makeToolState(*m.materials, m.lut);
    const sim::PlayerState& s = conn_->predictor().state();
    look_.yaw = binaryToRadians(s.yaw);
    look_.pitch = binaryToRadians(s.pitch);
    currFeet_ = prevFeet_ = metres(s.position);
    lastTickMs_ = nowMs();
    lookInitialised_ = true;
  }
  if (!renderer_) return;  // createRenderer() sets the world later
  renderer_->setWorld(m.world, *m.materials, currFeet_, &conn_->predictedEdits().overlay());
  renderer_->setFarTerrain(conn_->terrainSampler());
  if (meshChanges_ == sim::ChangeSubscriber{}) meshChanges_ = conn_->subscribeWorldChanges();
  (void)conn_->takeWorldChanges(meshChanges_);  // setWorld meshes everything
  (void)conn_->takePredictedChanges();
  worldSet_ = true;
}

void ClientApp::updateAudio() {
  std::vector<sim::Event> events = takeEvents();
  if (conn_->phase() != net::ClientPhase::Playing) return;
  if (!audioTried_ && options_.audio && !options_.offscreen) {
    audioTried_ = true;
    auto a = ClientAudio::open(conn_->playerId(), options_.speakers);
    if (a) {
      audio_ = std::move(*a);
      std::fprintf(stderr, "loam-client: audio on (%s, %.1f ms latency, %s)\n", audio_->outputStats().device.c_str(),
                   audio_->outputStats().latencyMs, audio_->engineStats().binaural ? "binaural" : "speakers");
    } else {
      std::fprintf(stderr, "loam-client: audio off: %s\n", a.error().message.c_str());
    }
  }
  // Sound's ray workers read the mirror: not before the columns they reach exist (a
  // moment after a join or a teleport; the sound of those frames is skipped).
  if (!audio_ || !conn_->worldReadable()) return;
  const render::Camera c = camera();
  audio::Listener listener;
  listener.position = {static_cast<float>(c.position[0]), static_cast<float>(c.position[1]),
                       static_cast<float>(c.position[2])};
  listener.yaw = static_cast<float>(c.yaw);
  if (audioChanges_ == sim::ChangeSubscriber{}) audioChanges_ = conn_->subscribeWorldChanges();
  audio_->worldChanged(conn_->mirror(), conn_->takeWorldChanges(audioChanges_));
  audio_->update(conn_->mirror(), events, listener, nowMs());
}

sim::Result<void> ClientApp::createRenderer(const render::RendererConfig& config) {
  auto r = render::Renderer::create(config);
  if (!r) return r.error();
  renderer_ = std::move(*r);
  width_ = config.width;
  height_ = config.height;
  worldSet_ = false;
  if (conn_->phase() == net::ClientPhase::Playing) onPlaying();
  return {};
}

bool ClientApp::waitForPlaying(double timeoutSeconds) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds));
  while (Clock::now() < end) {
    service(5);
    const net::ClientPhase ph = conn_->phase();
    if (ph == net::ClientPhase::Playing) return true;
    if (ph == net::ClientPhase::Failed || ph == net::ClientPhase::Disconnected) return false;
  }
  return conn_->phase() == net::ClientPhase::Playing;
}

void ClientApp::runFor(double seconds) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  startInputTicks();
  while (Clock::now() < end) {
    service(0);
    runDueInputTicks();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void ClientApp::startInputTicks() {
  inputPacer_ = net::TickPacer(net::TickPacer::periodOf(sim::kTicksPerSecond), kMaxInputBurst, Clock::now());
}

void ClientApp::runDueInputTicks() {
  const Clock::time_point now = Clock::now();
  while (inputPacer_.shouldTick(now)) {
    inputTick();
    inputPacer_.ticked();
  }
  inputPacer_.endBurst(now);
}

void ClientApp::inputTick() {
  if (conn_->phase() != net::ClientPhase::Playing) return;
  conn_->sendInput(makePlayerInput(move_, look_));
  const sim::PlayerState& s = conn_->predictor().state();
  prevFeet_ = currFeet_;
  currFeet_ = metres(s.position);
  eyeHeight_ = (sim::eyePosition(s).y - s.position.y) / kUnitsPerMetre;
  lastTickMs_ = nowMs();
}

std::array<double, 3> ClientApp::eyeMetres() const {
  const double a = std::clamp((nowMs() - lastTickMs_) / kTickMs, 0.0, 1.0);
  const std::array<double, 3> offset = metres(conn_->predictor().visualOffset());
  std::array<double, 3> e{};
  for (std::size_t i = 0; i < 3; ++i) e[i] = prevFeet_[i] + (currFeet_[i] - prevFeet_[i]) * a + offset[i];
  e[1] += eyeHeight_;
  return e;
}

render::Camera ClientApp::camera() const {
  render::Camera c;
  if (fixedCamera_) {
    c.position = {fixedCamera_->x, fixedCamera_->y, fixedCamera_->z};
    c.yaw = fixedCamera_->yawDegrees * kDegrees;
    c.pitch = fixedCamera_->pitchDegrees * kDegrees;
    return c;
  }
  c.position = eyeMetres();
  c.yaw = look_.yaw;
  c.pitch = look_.pitch;
  return c;
}

std::optional<RayHit> ClientApp::target() const {
  if (conn_->phase() != net::ClientPhase::Playing) return std::nullopt;
  const sim::SimState& m = conn_->mirror();
  const render::Camera c = camera();
  return castVoxelRay(m.world, m.lut, c.position, viewDirection(c.yaw, c.pitch), m.rules.reach / kUnitsPerMetre,
                      &conn_->predictedEdits().overlay());
}

bool ClientApp::act(ToolAction action) {
  const std::optional<RayHit> hit = target();
  if (!hit) return false;
  conn_->sendAction(makeToolCommand(action, *hit, tool_));
  return true;
}

void ClientApp::sendChat(const std::string& text) {
  if (text.empty()) return;
  conn_->sendAction(sim::ChatCommand{sim::ChatText::from(text)});
}

render::FrameInput ClientApp::buildFrame() {
  render::FrameInput f;
  f.camera = camera();
  f.animationSeconds = nowMs() / 1000.0;
  entities_.clear();
  fires_.clear();
  const bool playing = conn_->phase() == net::ClientPhase::Playing;
  if (playing) {
    const sim::SimState& m = conn_->mirror();
    const std::uint64_t tick = conn_->serverTick();
    const double dayLength = std::max<std::uint32_t>(1, m.weather.dayLength);
    f.environment.timeOfDay = shownTime_ ? *shownTime_ : sim::timeOfDayAt(m.weather, tick) / dayLength;
    f.environment.rain = static_cast<float>(m.weather.rain / 1000.0);
    const sim::Wind w = sim::openWind(m.weather);
    f.environment.windX = static_cast<float>(w.x / 100.0);
    f.environment.windZ = static_cast<float>(w.z / 100.0);

    const double now = nowMs();
    for (std::uint32_t id : conn_->others().ids()) {
      const std::optional<net::Pose> p = conn_->others().sample(id, now);
      if (!p) continue;
      render::EntityDraw e;
      e.shape = render::EntityDraw::Shape::Player;
      e.feet = {p->x / kUnitsPerMetre, p->y / kUnitsPerMetre, p->z / kUnitsPerMetre};
      e.yaw = binaryToRadians(p->yaw);
      e.colour = playerColour(id);
      e.tag = conn_->playerName(id);
      entities_.push_back(std::move(e));
    }
    for (std::uint32_t id : conn_->animals().ids()) {
      const std::optional<net::Pose> p = conn_->animals().sample(id, now);
      if (!p) continue;
      const std::optional<sim::AnimalSpecies> species = conn_->animalSpecies(id);
      const bool bird = species == sim::AnimalSpecies::Bird;
      render::EntityDraw e;
      e.shape = bird ? render::EntityDraw::Shape::Bird : render::EntityDraw::Shape::Walker;
      e.feet = {p->x / kUnitsPerMetre, p->y / kUnitsPerMetre, p->z / kUnitsPerMetre};
      e.yaw = binaryToRadians(p->yaw);
      const bool dog = species == sim::AnimalSpecies::Dog;
      e.colour = bird ? render::Rgba8{60, 60, 70, 255} : dog ? render::Rgba8{120, 90, 60, 255}
                                                            : render::Rgba8{200, 100, 40, 255};
      entities_.push_back(std::move(e));
    }
    constexpr double kVoxel = 1.0 / sim::kVoxelsPerMetre;
    for (const sim::FireCell& c : m.fire.cells) {
      fires_.push_back(render::FireDraw{{c.corner.x * kVoxel, c.corner.y * kVoxel, c.corner.z * kVoxel},
                                        static_cast<float>(c.intensity / 255.0)});
    }
    // An ignite of ours burns at once, until the server's fire takes over.
    for (const sim::VoxelCoord& c : conn_->predictedEdits().flames())
      fires_.push_back(render::FireDraw{{c.x * kVoxel, c.y * kVoxel, c.z * kVoxel}, 0.6f});
  } else if (shownTime_) {
    f.environment.timeOfDay = *shownTime_;
  }
  f.entities = entities_;
  f.fires = fires_;
  // Offscreen shots are clean pictures (docs, pixel tests) unless --hud asks.
  const bool decorations = !options_.offscreen || options_.hud;
  f.crosshair = decorations && playing && !ui_.menuOpen;
  if (decorations && playing) {
    if (const std::optional<RayHit> hit = target()) f.highlight = hit->voxel;
  }
  if (decorations) {
    hud_ = buildHud(hudModel());
    f.hud = &hud_;
  }
  return f;
}

void ClientApp::setViewDistance(double metres) {
  options_.viewDistanceMetres = metres;
  // The voxels' reach (and so what is streamed) is the detail distance's; only the
  // far terrain follows.
  if (renderer_) renderer_->setFarView(metres);
}

HudModel ClientApp::hudModel() const {
  HudModel m;
  m.width = width_;
  m.height = height_;
  m.nowSeconds = nowMs() / 1000.0;
  m.phase = conn_->phase();
  m.progress = conn_->progress();
  m.server = options_.local ? "local server" : options_.server;
  m.error = conn_->error();
  const net::ClientStats s = conn_->stats();
  m.fps = fps_;
  m.pingMs = s.rttMs;
  m.kbInPerSecond = kbIn_;
  m.kbOutPerSecond = kbOut_;
  if (m.phase == net::ClientPhase::Playing) m.position = metres(conn_->predictor().state().position);
  m.material = tool_.materialName();
  m.sizeCm = tool_.sizeCm();
  m.desyncs = s.desyncCount;
  if (!s.desyncs.empty()) m.desyncWhat = s.desyncs.front().what;
  m.chat = &chat_;
  m.chatOpen = ui_.chatOpen;
  m.chatDraft = ui_.chatDraft;
  m.menuOpen = ui_.menuOpen;
  m.menuHover = ui_.menuHover;
  m.viewDistanceMetres = options_.viewDistanceMetres;
  m.debug = ui_.debug;
  m.corrections = s.prediction.corrections;
  m.editsPending = s.edits.pending;
  m.editsPredicted = s.edits.predicted;
  m.editsConfirmed = s.edits.confirmed;
  m.editsOverridden = s.edits.overridden;
  m.editsRolledBack = s.edits.rolledBack + s.edits.expired;
  m.streamed = s.streamed;
  if (s.streamed) {
    m.columnsPresent = conn_->mirror().world.presentColumns().size();
    m.columnsAhead = s.stream.prefetched;
    m.columnsOnMain = s.stream.faults;
    m.columnsReleased = s.stream.released;
  }
  m.frameMs = frameMs_;
  if (renderer_) {
    const render::FrameStats fs = renderer_->stats();
    m.meshQueue = fs.meshQueue;
    m.meshWaiting = fs.meshWaiting;
    m.chunksDrawn = fs.chunksDrawn;
    m.chunksCulled = fs.chunksCulled;
    m.deviceName = fs.deviceName;
  }
  if (audio_) {
    m.audioOn = true;
    m.audioUnderruns = audio_->outputStats().underruns;
    m.audioVoices = audio_->engineStats().realVoices;
  }
  return m;
}

void ClientApp::countFrame(double frameMs) {
  frameMs_ = frameMs;
  ++framesCounted_;
  const double now = nowMs();
  if (now - fpsWindowStartMs_ >= 500) {
    fps_ = static_cast<double>(framesCounted_) * 1000.0 / (now - fpsWindowStartMs_);
    framesCounted_ = 0;
    fpsWindowStartMs_ = now;
  }
  if (now - rateAtMs_ >= 1000) {
    const net::ClientStats s = conn_->stats();
    const double secs = (now - rateAtMs_) / 1000.0;
    kbIn_ = static_cast<double>(s.bytesIn - lastBytesIn_) / 1024.0 / secs;
    kbOut_ = static_cast<double>(s.bytesOut - lastBytesOut_) / 1024.0 / secs;
    lastBytesIn_ = s.bytesIn;
    lastBytesOut_ = s.bytesOut;
    rateAtMs_ = now;
  }
}

bool ClientApp::renderFrame() {
  if (!renderer_) return false;
  if (conn_->phase() == net::ClientPhase::Playing) {
    conn_->advanceFrame();  // ease a prediction correction out over a few frames
  }
  const Clock::time_point t0 = Clock::now();
  render::FrameInput frame = buildFrame();
  frame.worldReleased = [this] { releaseNetwork(); };
  const bool drawn = renderer_->renderFrame(frame);
  releaseNetwork();  // a renderer that returned early
  countFrame(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  return drawn;
}

sim::Result<render::Image> ClientApp::renderShot(int frames) {
  if (!renderer_) return sim::Error{"no renderer"};
  service(0);
  renderer_->finishMeshing();
  for (int i = 0; i < frames; ++i) {
    service(0);
    // Edits that arrived meanwhile are meshed before the last frame.
    if (i + 1 == frames) renderer_->finishMeshing();
    renderFrame();
  }
  return renderer_->readPixels();
}

int runOffscreen(const ClientOptions& options) {
  auto created = ClientApp::create(options);
  if (!created) {
    std::fprintf(stderr, "loam-client: %s\n", created.error().message.c_str());
    return kExitFailure;
  }
  ClientApp& app = **created;
  render::RendererConfig rc;
  rc.offscreen = true;
  rc.width = options.width;
  rc.height = options.height;
  rc.validation = options.validation;
  rc.meshThreads = 2;
  rc.viewDistanceMetres = options.detailMetres();
  rc.farViewMetres = options.viewDistanceMetres;
  rc.slowFrameMs = options.slowFrameMs;
  if (auto r = app.createRenderer(rc); !r) {
    std::fprintf(stderr, "loam-client: cannot create the renderer: %s\n", r.error().message.c_str());
    return kExitFailure;
  }
  if (!app.waitForPlaying(options.joinTimeoutSeconds)) {
    const net::ClientPhase ph = app.connection().phase();
    const std::string where = options.local ? std::string("the local server") : options.server;
    const std::string why = app.connection().error().empty()
                                ? "no answer within " + std::to_string(static_cast<int>(options.joinTimeoutSeconds)) + " s"
                                : app.connection().error();
    std::fprintf(stderr, "loam-client: could not join %s (%s): %s\n", where.c_str(), net::phaseName(ph), why.c_str());
    return kExitFailure;
  }
  std::fprintf(stderr, "loam-client: joined in %.0f ms (world built in %.0f ms)\n", app.connection().stats().joinMs,
               app.connection().stats().generateMs);
  // A moment of play so snapshots of others, animals and cell states arrive.
  app.runFor(0.3);
  auto image = app.renderShot(options.frames);
  const render::FrameStats stats = app.renderer()->stats();
  if (!image) {
    std::fprintf(stderr, "loam-client: cannot read the frame: %s\n", image.error().message.c_str());
    return kExitFailure;
  }
  if (!options.screenshot.empty()) {
    if (auto w = render::writePng(options.screenshot, *image); !w) {
      std::fprintf(stderr, "loam-client: %s\n", w.error().message.c_str());
      return kExitFailure;
    }
  }
  std::fprintf(stderr,
               "loam-client: %s%dx%d, %d frames, %zu chunks drawn, last frame %.2f ms CPU, %" PRIu64
               " validation errors (%s)\n",
               options.screenshot.empty() ? "" : ("wrote " + options.screenshot + ": ").c_str(), image->width,
               image->height, options.frames, stats.chunksDrawn, stats.cpuMs, stats.validationErrors,
               stats.deviceName.c_str());
  if (stats.validationErrors > 0) return kExitValidation;
  return kExitOk;
}

int runClient(const ClientOptions& options) {
  return options.offscreen ? runOffscreen(options) : runWindowed(options);
}

}  // namespace loam::client

// ClientApp: loam-client without its window. It owns the optional in-process
// server (--local), the ClientConnection, the controls (tool, look, movement), the
// chat log and, once created, the renderer; it turns the mirror into a frame
// (camera from the predicted player or a fixed camera, other players and animals,
// fires, sky time and weather, the targeted voxel, the HUD). The window loop
// (window_loop.cpp, SDL) and the offscreen shot drive it; so do the tests.
//
// Thread: the caller's, and, once startNetworkThread() ran (the window loop), a
// network thread of its own that services the connection and sends the 60 Hz input
// ticks, so ping, prediction and edits do not wait for frames. The caller then holds
// the app (holdNetwork) for everything but the GPU part of a frame: renderFrame()
// lets go once the renderer has copied what it reads of the world. The local server
// ticks on its own thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/client_audio.h"
#include "client/hud.h"
#include "client/input.h"
#include "client/local_server.h"
#include "client/options.h"
#include "client/voxel_ray.h"
#include "net/client_connection.h"
#include "net/protocol.h"
#include "net/tick_pacer.h"
#include "render/renderer.h"
#include "sim/systems/events.h"
#include "sim/core/result.h"

namespace loam::client {

/// Exit codes of loam-client.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;       ///< join failed, no Vulkan, cannot write the PNG
inline constexpr int kExitBadFlags = 2;
inline constexpr int kExitValidation = 3;    ///< offscreen: the validation layer reported errors

class ClientApp {
 public:
  /// Starts the local server (options.local: generates the scene, seconds) and
  /// starts connecting. No renderer yet (createRenderer). Errors: scene, bind,
  /// resolve failures.
  static sim::Result<std::unique_ptr<ClientApp>> create(const ClientOptions& options);
  ~ClientApp();
  ClientApp(const ClientApp&) = delete;
  ClientApp& operator=(const ClientApp&) = delete;

  // ---- driving --------------------------------------------------------------------
  /// Services the connection (waiting up to timeoutMs for network input), takes its
  /// events (chat lines, joins) and mesh-dirty bricks, and hands the world to the
  /// renderer once Playing.
  void service(int timeoutMs = 0);
  /// Services (and sends idle inputs at 60 Hz) until Playing: true; false on
  /// Failed / Disconnected / timeout (error() says why).
  bool waitForPlaying(double timeoutSeconds);
  /// Services for `seconds`, sending input ticks at 60 Hz (tests: let snapshots,
  /// edits and interpolation arrive).
  void runFor(double seconds);
  /// One 60 Hz input tick: sends the controls as a PlayerInput (Playing only).
  void inputTick();
  /// Restarts the input tick clock at now: call when a loop that runs input ticks
  /// begins, so time spent elsewhere is not replayed.
  void startInputTicks();
  /// Runs the input ticks due now, 60 per second (net::TickPacer); after a stall the
  /// backlog beyond kMaxInputBurst ticks is dropped, not replayed. Call every loop
  /// iteration (runFor and the window loop do).
  void runDueInputTicks();
  /// At most this many input ticks back to back (250 ms) after a stall.
  static constexpr int kMaxInputBurst = 15;
  /// From now on the connection is serviced and the input ticks run on a thread of
  /// their own, every millisecond or so, whatever the frame rate: service() and
  /// runDueInputTicks() leave them to it. Call once Playing or before; the caller
  /// must holdNetwork() while it uses the app.
  void startNetworkThread();
  /// Stops and joins the network thread (the destructor does too).
  void stopNetworkThread();
  /// Keeps the network thread off the app until renderFrame() (or releaseNetwork())
  /// lets go. No-op without one.
  void holdNetwork();
  void releaseNetwork();
  /// Sends the command of a tool action at the targeted voxel; false when nothing
  /// is targeted or not Playing.
  bool act(ToolAction action);
  /// Sends a chat line (1..120 bytes; longer is cut).
  void sendChat(const std::string& text);
  /// Events taken from the connection since the last call (tests; updateAudio()
  /// consumes them in the window loop).
  std::vector<sim::Event> takeEvents();
  /// Feeds the events since the last call and the mirror to the sound (opened when
  /// Playing unless --no-audio or --offscreen; without a device it logs once and
  /// stays silent).
  void updateAudio();

  // ---- rendering --------------------------------------------------------------------
  /// Creates the renderer (offscreen, or into config.window). Errors: the renderer's.
  sim::Result<void> createRenderer(const render::RendererConfig& config);
  render::Renderer* renderer() noexcept { return renderer_.get(); }
  /// Draws one frame (camera, entities, fires, environment, highlight, HUD),
  /// releasing the network hold once the world is read. False when nothing was drawn
  /// (no renderer, minimised).
  bool renderFrame();
  /// Offscreen shot: waits for meshing, renders `frames` frames, reads the pixels.
  sim::Result<render::Image> renderShot(int frames);
  /// The frame renderFrame() would draw now (entities and fires point into
  /// buffers of this object, valid until the next call).
  render::FrameInput buildFrame();

  // ---- state ---------------------------------------------------------------------
  net::ClientConnection& connection() noexcept { return *conn_; }
  LocalServer* localServer() noexcept { return local_.get(); }
  const ClientOptions& options() const noexcept { return options_; }
  /// How far to see from now on (the menu's view button): the far terrain's reach.
  void setViewDistance(double metres);
  /// A fixed camera (nullopt: the player's eye).
  void setCamera(std::optional<CameraSpec> camera) noexcept { fixedCamera_ = camera; }
  /// Overrides the shown time of day (day fraction; nullopt: the server's).
  void setShownTime(std::optional<double> dayFraction) noexcept { shownTime_ = dayFraction; }
  /// The camera of the next frame.
  render::Camera camera() const;
  /// The voxel the camera looks at within reach, if any.
  std::optional<RayHit> target() const;
  ToolState& tool() noexcept { return tool_; }
  LookState& look() noexcept { return look_; }
  MoveState& move() noexcept { return move_; }
  ChatLog& chat() noexcept { return chat_; }
  /// HUD switches the window loop flips.
  struct UiState {
    bool menuOpen = false;
    int menuHover = -1;
    bool chatOpen = false;
    std::string chatDraft;
    bool debug = false;
  };
  UiState& ui() noexcept { return ui_; }
  /// The HUD model for now (what buildHud draws).
  HudModel hudModel() const;
  /// Milliseconds since the app started (the connection's clock).
  double nowMs() const;
  /// Frame times for the fps figure: call once per rendered frame.
  void countFrame(double frameMs);
  /// Window (drawable) size, for the HUD layout.
  void setViewport(int width, int height) noexcept {
    width_ = width;
    height_ = height;
  }

 private:
  ClientApp() = default;
  void onPlaying();
  void networkLoop();
  std::array<double, 3> eyeMetres() const;

  ClientOptions options_;
  std::unique_ptr<LocalServer> local_;
  std::unique_ptr<net::ClientConnection> conn_;
  std::unique_ptr<render::Renderer> renderer_;
  std::unique_ptr<ClientAudio> audio_;
  // The network thread and the lock it shares with the caller (holdNetwork).
  std::mutex netMutex_;
  std::thread netThread_;
  std::atomic<bool> netStop_{false};
  std::unique_lock<std::mutex> held_{netMutex_, std::defer_lock};
  bool audioTried_ = false;
  bool worldSet_ = false;
  sim::ChangeSubscriber meshChanges_;   ///< the mirror's changes for the renderer (from onPlaying)
  sim::ChangeSubscriber audioChanges_;  ///< the mirror's changes for the sound (from its first update)
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int width_ = 1280, height_ = 720;

  ToolState tool_;
  LookState look_;
  MoveState move_;
  bool lookInitialised_ = false;
  ChatLog chat_;
  UiState ui_;
  std::optional<CameraSpec> fixedCamera_;
  std::optional<double> shownTime_;
  std::vector<sim::Event> events_;  ///< taken in service(), handed out by takeEvents()

  // Own pose interpolation between input ticks (metres, feet).
  std::array<double, 3> prevFeet_{}, currFeet_{};
  double eyeHeight_ = 1.62;
  double lastTickMs_ = 0;
  net::TickPacer inputPacer_{net::TickPacer::periodOf(sim::kTicksPerSecond), kMaxInputBurst,
                             std::chrono::steady_clock::now()};

  // Frame buffers (FrameInput spans point here).
  std::vector<render::EntityDraw> entities_;
  std::vector<render::FireDraw> fires_;
  render::HudLayer hud_;

  // Rates for the HUD.
  double fps_ = 0, frameMs_ = 0;
  double rateAtMs_ = 0, kbIn_ = 0, kbOut_ = 0;
  std::uint64_t lastBytesIn_ = 0, lastBytesOut_ = 0;
  std::uint64_t framesCounted_ = 0;
  double fpsWindowStartMs_ = 0;
};

/// loam-client's main after parsing: the window loop, or the offscreen shot.
/// Returns the exit code (kExit*).
int runClient(const ClientOptions& options);

/// The offscreen shot: join, wait for meshing, render options.frames frames, write
/// options.screenshot. Exit code kExitValidation when validation errors happened.
int runOffscreen(const ClientOptions& options);

/// The window loop (window_loop.cpp, SDL2). Returns the exit code.
int runWindowed(const ClientOptions& options);

}  // namespace loam::client

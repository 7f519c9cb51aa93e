// The HUD as data: a HudModel (what to show) becomes a render::HudLayer (rects and
// text in pixels) through buildHud(), a pure function so layout is unit-tested.
// Shows fps, ping, KB/s, position, the selected tool, the chat log (fading), a
// progress bar with the phase while joining, a red message on failure or desync,
// the Esc menu, the chat input line and the F3 debug line.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "net/client_connection.h"
#include "render/renderer.h"

namespace loam::client {

/// Chat lines (and notices such as "Alice joined"), newest last.
class ChatLog {
 public:
  static constexpr std::size_t kMaxLines = 8;
  static constexpr double kShowSeconds = 10;  ///< fully visible this long...
  static constexpr double kFadeSeconds = 2;   ///< ...then fading out over this
  struct Line {
    std::string text;
    double addedSeconds = 0;
    render::Rgba8 colour{255, 255, 255, 255};
  };
  /// Adds a line at nowSeconds (client clock); the oldest beyond kMaxLines goes.
  void add(std::string text, double nowSeconds, render::Rgba8 colour = {255, 255, 255, 255});
  const std::deque<Line>& lines() const noexcept { return lines_; }
  /// 0..1 opacity of a line at nowSeconds (1 while shown, 0 when faded; always 1
  /// when `forceVisible`, e.g. while typing).
  static float alpha(const Line& line, double nowSeconds, bool forceVisible) noexcept;

 private:
  std::deque<Line> lines_;
};

struct HudModel {
  int width = 1280, height = 720;
  double nowSeconds = 0;
  // Joining.
  net::ClientPhase phase = net::ClientPhase::Connecting;
  double progress = 0;        ///< generation progress 0..1
  std::string server;         ///< "127.0.0.1:7777" for the connecting line
  std::string error;          ///< ClientConnection::error() (Failed / Disconnected)
  // Playing.
  double fps = 0;
  double pingMs = 0;
  double kbInPerSecond = 0, kbOutPerSecond = 0;
  std::array<double, 3> position{};  ///< feet, metres
  std::string material;              ///< selected material name
  int sizeCm = 10;
  std::uint64_t desyncs = 0;          ///< mirror differed from the server (shown in red)
  std::string desyncWhat;             ///< the first desync's text
  const ChatLog* chat = nullptr;
  bool chatOpen = false;
  std::string chatDraft;
  bool menuOpen = false;
  int menuHover = -1;                 ///< a kMenu* button, -1 none
  double viewDistanceMetres = 0;      ///< shown on the menu's view button
  // F3.
  bool debug = false;
  std::size_t meshQueue = 0, chunksDrawn = 0, chunksCulled = 0;
  double frameMs = 0;
  std::uint64_t corrections = 0;
  /// The own edits shown before the server's answer (net::EditPredictionStats): a
  /// debug line of their own.
  std::uint64_t editsPending = 0, editsPredicted = 0, editsConfirmed = 0, editsOverridden = 0, editsRolledBack = 0;
  /// A streamed world (shown on a second debug line): columns present in the mirror,
  /// generated ahead, generated on the main thread (faults and the held disc),
  /// released, and bricks whose meshes wait for columns.
  bool streamed = false;
  std::size_t columnsPresent = 0, meshWaiting = 0;
  std::uint64_t columnsAhead = 0, columnsOnMain = 0, columnsReleased = 0;
  std::string deviceName;
  bool audioOn = false;              ///< a device is playing
  int audioVoices = 0;               ///< real voices in the last block
  std::uint64_t audioUnderruns = 0;  ///< PortAudio output underflows
};

/// Phase text while joining: "Connecting to HOST", "Building world 42%",
/// "Receiving snapshot"; the error for Failed / Disconnected; "" when Playing.
std::string phaseText(const HudModel& model);

/// Pixel rectangles of the join progress bar: the frame (full width) and the fill
/// (width = progress share of the frame's inner width).
struct ProgressBarLayout {
  render::HudRect frame, fill;
};
ProgressBarLayout progressBarLayout(int width, int height, double progress) noexcept;

/// The Esc menu's buttons (for drawing and mouse hit tests), top to bottom:
/// kMenuResume, kMenuView (the view distance; a click picks the next of
/// kViewDistances), kMenuQuit.
inline constexpr int kMenuResume = 0, kMenuView = 1, kMenuQuit = 2, kMenuButtons = 3;
std::array<render::HudRect, kMenuButtons> menuButtons(int width, int height) noexcept;
/// The view distances the menu offers, metres.
inline constexpr std::array<double, 5> kViewDistances{512, 1024, 2048, 4096, 8192};
/// The menu's next view distance after metres (the smallest offered above it, else
/// the first).
double nextViewDistance(double metres) noexcept;
/// Which menu button holds pixel (x, y), or -1.
int menuButtonAt(int width, int height, float x, float y) noexcept;

/// Builds the 2-D layer for the model. Allocates (the layer's vectors and strings).
render::HudLayer buildHud(const HudModel& model);

}  // namespace loam::client

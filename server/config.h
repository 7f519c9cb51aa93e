// loam-server configuration: defaults, then a TOML file (--config F or LOAM_CONFIG),
// then LOAM_* environment variables, then command-line flags (each later source wins).
// Every value that is given is checked, whichever source it comes from and whether a
// later source overrides it, so a bad line in a config file never goes unnoticed.
// Pure apart from reading the config file and checking that the scene file exists,
// so it can be unit tested with made-up argv and environments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace loam::server {

/// The shortest admin token accepted (bytes).
inline constexpr std::size_t kMinAdminTokenBytes = 16;

/// Everything loam-server can be told. Field comments give the flag; the variable
/// is LOAM_ + the flag in capitals with '_' for '-', the file key the flag with '_'.
struct ServerOptions {
  std::string configPath;                ///< --config: "" = none
  std::string scenePath;                 ///< --scene: scene .toml (required; must exist)
  std::optional<std::uint64_t> seed;     ///< --seed: empty = the scene's seed
  std::uint16_t port = 7777;             ///< --port: UDP; 0 = any free port
  std::string bind = "0.0.0.0";          ///< --bind: address to listen on
  std::string name = "loam";             ///< --name: server name (1..63 bytes)
  std::uint32_t maxPlayers = 64;         ///< --max-players: 1..1024
  std::string saveDir = "saves";         ///< --save-dir: created when missing
  double saveIntervalSeconds = 300;      ///< --save-interval: seconds between world database commits; 0 = only on exit
  std::uint32_t bandwidthCapKBps = 256;  ///< --bandwidth-cap: KB/s (1024 bytes) per client
  std::uint32_t maxPeersPerAddress = 4;  ///< --max-peers-per-address: connections per IP address (loopback too)
  std::uint32_t joinsPerMinutePerAddress = 30;  ///< --joins-per-minute-per-address: connects per minute, after a burst
  double durationSeconds = 0;            ///< --duration: run this long then exit 0; 0 = forever
  double statsIntervalSeconds = 10;      ///< --stats-interval: 0 = no stats lines
  std::uint16_t httpPort = 0;            ///< --http-port: TCP port of /healthz /readyz /metrics /status; 0 = off
  std::string httpBind = "127.0.0.1";    ///< --http-bind: address the HTTP endpoint listens on
  std::string logFormat = "text";        ///< --log-format: "text" or "json"
  std::string adminToken;                ///< --admin-token: secret for POST /admin; "" = /admin off (never logged)
  bool freshWorld = false;               ///< --fresh-world: an unusable world database or save is put aside, not a stop (exit 2)
  bool skipDamagedBricks = false;        ///< --skip-damaged-bricks: damaged database rows are dropped, not a stop (exit 2)
  std::string auth = "off";              ///< --auth: off, names or required (accounts; docs/PROTOCOL.md)
  std::uint32_t streamThreads = 2;       ///< --stream-threads: generator threads of a streamed world, step thread included
  std::uint32_t residentColumns = 2048;  ///< --resident-columns: chunk columns a streamed world keeps at most
  /// AGONES_SDK_HTTP_PORT (set by Agones in a GameServer pod; not a flag, variable
  /// or key of ours): the SDK sidecar's REST port; 0 = not running under Agones.
  std::uint16_t agonesSdkPort = 0;
};

/// Environment variables by name (only LOAM_* ones and AGONES_SDK_HTTP_PORT are read).
using Environment = std::map<std::string, std::string>;

/// Copies a NUL-terminated `environ`-style array. Allocates.
Environment environmentFrom(const char* const* envp);

/// What parseOptions decided.
struct ParseResult {
  enum class Action {
    Run,    ///< options hold the configuration
    Help,   ///< --help: text is the usage, print it to stdout and exit 0
    Error,  ///< text is a one-line message (no trailing newline); exit 2
  };
  Action action = Action::Error;
  ServerOptions options;
  std::string text;
};

/// Parses argv (argv[0] is the program name) over env and the config file it names.
/// Never throws. Allocates. Thread: any.
ParseResult parseOptions(int argc, const char* const* argv, const Environment& env);

/// The --help text. Allocates.
std::string usageText();

}  // namespace loam::server

#include "server/config.h"

#include <CLI/CLI.hpp>
#include "sim/core/toml.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace loam::server {

namespace {

/// A value as written, before checks. Flags and variables are untyped text; TOML
/// values carry their type so `port = "7777"` is refused like any wrong type.
struct Raw {
  enum class Type { Untyped, Text, Integer, Float, Boolean, Other };
  Type type = Type::Untyped;
  std::string text;   ///< the value (a TOML number printed back)
  std::string where;  ///< prefix for errors: "--port 70000", "LOAM_PORT=x", "f.toml:3:1: port"
};

/// One check's verdict: empty when the value was accepted.
using Problem = std::optional<std::string>;

Problem problem(const Raw& raw, const std::string& what) { return raw.where + ": " + what; }

Problem readUnsigned(const Raw& raw, std::uint64_t min, std::uint64_t max, std::uint64_t& out) {
  if (raw.type != Raw::Type::Untyped && raw.type != Raw::Type::Integer) return problem(raw, "expected a whole number");
  const std::string& s = raw.text;
  if (!s.empty() && s[0] == '-') return problem(raw, "must not be negative");
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return problem(raw, "out of range " + std::to_string(min) + ".." + std::to_string(max));
  }
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return problem(raw, "expected a whole number");
  if (v < min || v > max) return problem(raw, "out of range " + std::to_string(min) + ".." + std::to_string(max));
  out = v;
  return std::nullopt;
}

Problem readSeconds(const Raw& raw, double& out) {
  if (raw.type != Raw::Type::Untyped && raw.type != Raw::Type::Integer && raw.type != Raw::Type::Float) {
    return problem(raw, "expected a number of seconds");
  }
  const std::string& s = raw.text;
  if (!s.empty() && s[0] == '-') return problem(raw, "must not be negative");
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    return problem(raw, "expected a number of seconds");
  }
  // A billion seconds is 31 years: anything beyond is a typo, not a plan.
  if (v > 1e9) return problem(raw, "out of range 0..1000000000 seconds");
  out = v;
  return std::nullopt;
}

/// true/false (TOML booleans; in flags and variables also 1/0, yes/no).
Problem readBool(const Raw& raw, bool& out) {
  if (raw.type != Raw::Type::Untyped && raw.type != Raw::Type::Boolean) return problem(raw, "expected true or false");
  const std::string& s = raw.text;
  if (s == "true" || s == "1" || s == "yes") {
    out = true;
  } else if (s == "false" || s == "0" || s == "no") {
    out = false;
  } else {
    return problem(raw, "expected true or false");
  }
  return std::nullopt;
}

Problem readText(const Raw& raw, std::size_t maxBytes, std::string& out) {
  if (raw.type != Raw::Type::Untyped && raw.type != Raw::Type::Text) return problem(raw, "expected a string");
  if (raw.text.empty()) return problem(raw, "must not be empty");
  if (raw.text.size() > maxBytes) return problem(raw, "longer than " + std::to_string(maxBytes) + " bytes");
  for (char c : raw.text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return problem(raw, "contains a control character");
  }
  out = raw.text;
  return std::nullopt;
}

/// ENet 1.3 speaks IPv4 only: a dotted quad, or a host name it resolves at bind time.
Problem readBindAddress(const Raw& raw, std::string& out) {
  std::string v;
  if (auto p = readText(raw, 253, v)) return p;
  in_addr ignored{};
  bool dottedQuad = ::inet_pton(AF_INET, v.c_str(), &ignored) == 1;
  bool hostName = v.front() != '-' && v.front() != '.' &&
                  std::all_of(v.begin(), v.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                           c == '.';
                  });
  // All digits and dots but not a valid quad ("300.1.1.1") is a typo, not a host name.
  bool numeric = std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!dottedQuad && (!hostName || numeric)) return problem(raw, "expected an IPv4 address or a host name");
  out = std::move(v);
  return std::nullopt;
}

/// One option: its flag name (also the variable and key, see ServerOptions), help
/// and the check that stores it.
struct Spec {
  std::string_view flag;
  const char* type;  ///< shown in --help
  const char* help;
  Problem (*set)(const Raw&, ServerOptions&);
};

const std::array<Spec, 22> kSpecs{{
    {"scene", "FILE", "Scene file (.toml) to generate and host (required)",
     [](const Raw& r, ServerOptions& o) { return readText(r, 4096, o.scenePath); }},
    {"seed", "N", "World seed (default: the scene's seed)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 0, UINT64_MAX, v)) return p;
       o.seed = v;
       return std::nullopt;
     }},
    {"port", "PORT", "UDP port to listen on, 0 = any free port (default 7777)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 0, 65535, v)) return p;
       o.port = static_cast<std::uint16_t>(v);
       return std::nullopt;
     }},
    {"bind", "ADDRESS", "Address to listen on (default 0.0.0.0; 127.0.0.1 for loopback only)",
     [](const Raw& r, ServerOptions& o) { return readBindAddress(r, o.bind); }},
    {"name", "TEXT", "Server name shown to clients (1..63 bytes, default loam)",
     [](const Raw& r, ServerOptions& o) { return readText(r, 63, o.name); }},
    {"max-players", "N", "Most players at once, 1..1024 (default 64)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 1, 1024, v)) return p;
       o.maxPlayers = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"save-dir", "DIR", "Folder of the world database (and old saves), created when missing (default saves)",
     [](const Raw& r, ServerOptions& o) { return readText(r, 4096, o.saveDir); }},
    {"save-interval", "SECONDS", "Seconds between commits to the world database, 0 = only on exit (default 300)",
     [](const Raw& r, ServerOptions& o) { return readSeconds(r, o.saveIntervalSeconds); }},
    {"bandwidth-cap", "KBPS", "Downstream budget per client in KB/s, 1..1048576 (default 256)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 1, 1048576, v)) return p;
       o.bandwidthCapKBps = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"max-peers-per-address", "N",
     "Connections one IP address may hold at once, loopback included, 1..4096 (default 4)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 1, 4096, v)) return p;
       o.maxPeersPerAddress = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"joins-per-minute-per-address", "N",
     "Connects one IP address may make per minute after a burst of max-peers-per-address, 1..3600 (default 30)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 1, 3600, v)) return p;
       o.joinsPerMinutePerAddress = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"stream-threads", "N",
     "A world too big to generate whole is streamed: generator threads, the step thread included, 1..64 (default 2)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 1, 64, v)) return p;
       o.streamThreads = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"resident-columns", "N",
     "A streamed world's memory: 6.4 m chunk columns kept at most beyond those holding edits, 64..1048576 "
     "(default 2048, about 400 MB on highlands)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 64, 1048576, v)) return p;
       o.residentColumns = static_cast<std::uint32_t>(v);
       return std::nullopt;
     }},
    {"duration", "SECONDS", "Run this many seconds, save and exit 0; 0 = until signalled (default 0)",
     [](const Raw& r, ServerOptions& o) { return readSeconds(r, o.durationSeconds); }},
    {"stats-interval", "SECONDS", "Seconds between stats lines on stderr, 0 = none (default 10)",
     [](const Raw& r, ServerOptions& o) { return readSeconds(r, o.statsIntervalSeconds); }},
    {"http-port", "PORT",
     "TCP port for /healthz /readyz /metrics (Prometheus) /status (JSON), 0 = no HTTP endpoint (default 0)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::uint64_t v = 0;
       if (auto p = readUnsigned(r, 0, 65535, v)) return p;
       o.httpPort = static_cast<std::uint16_t>(v);
       return std::nullopt;
     }},
    {"http-bind", "ADDRESS", "Address of the HTTP endpoint (default 127.0.0.1; 0.0.0.0 for scrapers elsewhere)",
     [](const Raw& r, ServerOptions& o) { return readBindAddress(r, o.httpBind); }},
    {"log-format", "FORMAT", "text (default) or json: one JSON object per log line, for log collectors",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::string v;
       if (auto p = readText(r, 16, v)) return p;
       if (v != "text" && v != "json") return problem(r, "expected text or json");
       o.logFormat = std::move(v);
       return std::nullopt;
     }},
    {"admin-token", "TOKEN",
     "Secret for POST /admin on the HTTP endpoint (loam-tool admin); unset = remote admin off. Prefer "
     "LOAM_ADMIN_TOKEN or the config file: flags show in ps",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::string v;
       if (auto p = readText(r, 256, v)) return p;
       // A short token falls to guessing even through the rate limiter.
       if (v.size() < kMinAdminTokenBytes) {
         return problem(r, "shorter than " + std::to_string(kMinAdminTokenBytes) +
                               " bytes; use a random secret (e.g. openssl rand -hex 16)");
       }
       o.adminToken = std::move(v);
       return std::nullopt;
     }},
    {"auth", "MODE",
     "Accounts (save-dir/accounts.txt): off (default), names (a claimed name needs its owner's key), required "
     "(every player needs a key)",
     [](const Raw& r, ServerOptions& o) -> Problem {
       std::string v;
       if (auto p = readText(r, 16, v)) return p;
       if (v != "off" && v != "names" && v != "required") return problem(r, "expected off, names or required");
       o.auth = std::move(v);
       return std::nullopt;
     }},
    {"fresh-world", "",
     "Start from the generated world when the world database (or newest save) cannot be used here (another save "
     "format, scene, seed or generator): put it aside as .stale instead of stopping with exit 2",
     [](const Raw& r, ServerOptions& o) { return readBool(r, o.freshWorld); }},
    {"skip-damaged-bricks", "",
     "Start although rows of the world database are damaged: log them, delete them and let those bricks keep "
     "their generated content, instead of stopping with exit 2",
     [](const Raw& r, ServerOptions& o) { return readBool(r, o.skipDamagedBricks); }},
}};

/// Secrets must not appear in error messages (they end up in logs).
bool isSecret(std::string_view flag) { return flag == "admin-token"; }

std::string envName(std::string_view flag) {
  std::string s = "LOAM_";
  for (char c : flag) s += c == '-' ? '_' : static_cast<char>(c - 'a' + 'A');
  return s;
}

std::string keyName(std::string_view flag) {
  std::string s(flag);
  for (char& c : s) {
    if (c == '-') c = '_';
  }
  return s;
}

/// "cfg.toml:3:7" for a node (toml++ keeps the source of every value).
std::string located(const std::string& file, const toml::source_region& r) {
  std::string s = file;
  if (r.begin.line > 0) s += ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  return s;
}

Raw rawFromNode(const toml::node& n, std::string where) {
  Raw raw;
  raw.where = std::move(where);
  if (auto s = n.as_string()) {
    raw.type = Raw::Type::Text;
    raw.text = s->get();
  } else if (auto i = n.as_integer()) {
    raw.type = Raw::Type::Integer;
    raw.text = std::to_string(i->get());
  } else if (auto f = n.as_floating_point()) {
    raw.type = Raw::Type::Float;
    std::array<char, 64> buf{};
    auto res = std::to_chars(buf.data(), buf.data() + buf.size(), f->get());
    raw.text.assign(buf.data(), res.ptr);
  } else if (auto b = n.as_boolean()) {
    raw.type = Raw::Type::Boolean;
    raw.text = b->get() ? "true" : "false";
  } else {
    raw.type = Raw::Type::Other;
  }
  return raw;
}

Problem applyConfigFile(const std::string& path, const std::string& via, ServerOptions& o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return via + ": config file not found";
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return located(path, e.source()) + ": TOML syntax error: " + std::string(e.description());
  }
  for (auto&& [key, node] : root) {
    const Spec* spec = nullptr;
    for (const Spec& s : kSpecs) {
      if (keyName(s.flag) == key.str()) spec = &s;
    }
    if (spec == nullptr) {
      std::string known;
      for (const Spec& s : kSpecs) known += (known.empty() ? "" : ", ") + keyName(s.flag);
      return located(path, key.source()) + ": unknown key '" + std::string(key.str()) + "' (known: " + known + ")";
    }
    if (auto p = spec->set(rawFromNode(node, located(path, node.source()) + ": " + std::string(key.str())), o)) {
      return p;
    }
  }
  return std::nullopt;
}

/// CLI11 messages can span lines; the contract is one line.
std::string oneLine(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

std::string footerText() {
  std::string s =
      "\nEvery option can also be set by an environment variable (LOAM_ + the flag in capitals, '-' as '_',\n"
      "e.g. LOAM_SAVE_INTERVAL=60; an empty variable counts as unset) or by a key in the --config TOML file\n"
      "(the flag with '_' for '-', e.g. save_interval = 60; LOAM_CONFIG names the file too).\n"
      "Flags win over variables, variables over the file. Relative paths are relative to the working folder.\n"
      "Under Agones, AGONES_SDK_HTTP_PORT (set by Agones) makes the server report ready, health and shutdown\n"
      "to the SDK sidecar on localhost.\n"
      "Keys:";
  for (const Spec& spec : kSpecs) s += " " + keyName(spec.flag);
  s +=
      "\n\nThe world is kept in <save-dir>/<scene>-<seed>.loamdb (SQLite, WAL): every --save-interval the bricks\n"
      "changed since the last commit and the state are committed in one transaction; a crash loses at most the\n"
      "last commit. Without a database the newest <scene>-<seed>-<tick>.loamsave is imported. A database of\n"
      "another format or world stops the start (exit 2) unless --fresh-world; damaged rows stop it (exit 2)\n"
      "unless --skip-damaged-bricks; a file that is not a world database always stops it. Backups:\n"
      "loam-tool export-save / import-save. SIGINT/SIGTERM commit and exit 0.\n"
      "Exit codes: 0 normal, 1 runtime failure (bind of the UDP or HTTP port, scene load or generation,\n"
      "final commit), 2 bad config or a world database or save that cannot be used here.";
  return s;
}

/// The flag parser; values land in `values` as text, `given` says which were set.
struct FlagParser {
  CLI::App app{"loam-server: the headless Loam host (60 Hz simulation, UDP on ENet, saves)", "loam-server"};
  std::string config;
  std::array<std::string, kSpecs.size()> values;
  std::array<CLI::Option*, kSpecs.size()> options{};
  CLI::Option* configOption = nullptr;

  FlagParser() {
    app.footer(footerText());
    // A repeated flag takes its last value, so scripts can append overrides.
    configOption = app.add_option("--config", config, "TOML config file (keys as below)")
                       ->type_name("FILE")
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    for (std::size_t i = 0; i < kSpecs.size(); ++i) {
      const std::string name = "--" + std::string(kSpecs[i].flag);
      if (*kSpecs[i].type == '\0') {  // a switch: given means true
        options[i] = app.add_flag(name, kSpecs[i].help);
        values[i] = "true";
        continue;
      }
      options[i] = app.add_option(name, values[i], kSpecs[i].help)
                       ->type_name(kSpecs[i].type)
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
};

}  // namespace

Environment environmentFrom(const char* const* envp) {
  Environment env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    std::string_view kv(*envp);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::string usageText() {
  FlagParser p;
  return p.app.help();
}

ParseResult parseOptions(int argc, const char* const* argv, const Environment& env) {
  ParseResult result;
  auto fail = [&](std::string message) {
    result.action = ParseResult::Action::Error;
    result.text = oneLine(std::move(message));
    return result;
  };
  FlagParser flags;
  try {
    flags.app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.action = ParseResult::Action::Help;
    result.text = flags.app.help();
    return result;
  } catch (const CLI::ParseError& e) {
    return fail(e.what());
  }

  auto envValue = [&](const std::string& name) -> const std::string* {
    auto it = env.find(name);
    return it != env.end() && !it->second.empty() ? &it->second : nullptr;
  };

  ServerOptions& o = result.options;
  // 1. The config file.
  if (flags.configOption->count() > 0) {
    if (flags.config.empty()) return fail("--config: must not be empty");
    o.configPath = flags.config;
    if (auto p = applyConfigFile(o.configPath, "--config " + o.configPath, o)) return fail(*p);
  } else if (const std::string* c = envValue("LOAM_CONFIG")) {
    o.configPath = *c;
    if (auto p = applyConfigFile(o.configPath, "LOAM_CONFIG=" + o.configPath, o)) return fail(*p);
  }
  // 2. Environment variables, 3. flags, each over the previous source.
  for (const Spec& spec : kSpecs) {
    std::string name = envName(spec.flag);
    if (const std::string* v = envValue(name)) {
      Raw raw{Raw::Type::Untyped, *v, isSecret(spec.flag) ? name : name + "=" + *v};
      if (auto p = spec.set(raw, o)) return fail(*p);
    }
  }
  for (std::size_t i = 0; i < kSpecs.size(); ++i) {
    if (flags.options[i]->count() == 0) continue;
    const std::string& v = flags.values[i];
    Raw raw{Raw::Type::Untyped, v,
            "--" + std::string(kSpecs[i].flag) + (isSecret(kSpecs[i].flag) ? std::string() : " " + v)};
    if (auto p = kSpecs[i].set(raw, o)) return fail(*p);
  }
  // Agones' variable: ours to read, not to name, so it sits outside the option table.
  if (const std::string* v = envValue("AGONES_SDK_HTTP_PORT")) {
    std::uint64_t port = 0;
    Raw raw{Raw::Type::Untyped, *v, "AGONES_SDK_HTTP_PORT=" + *v};
    if (auto p = readUnsigned(raw, 1, 65535, port)) return fail(*p);
    o.agonesSdkPort = static_cast<std::uint16_t>(port);
  }

  if (o.scenePath.empty()) return fail("no scene: give --scene FILE (or LOAM_SCENE, or scene = \"...\" in --config)");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.scenePath, ec)) return fail("scene file '" + o.scenePath + "' not found");
  result.action = ParseResult::Action::Run;
  return result;
}

}  // namespace loam::server

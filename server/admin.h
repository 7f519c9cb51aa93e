// The admin console: commands typed on the server's terminal or POSTed to /admin
// (server/ops_http.h). Requests are queued from any thread and run on the step
// thread between ticks (AdminQueue::tryTake never blocks it); each reply goes back
// through a future. Bans persist in <save-dir>/bans.txt.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "net/server_host.h"
#include "sim/core/result.h"
#include "sim/step/commands.h"

namespace loam::server {

/// What a command answered: ok false = refused or bad usage.
struct AdminReply {
  bool ok = false;
  std::string text;  ///< one or more lines, no trailing newline
};

/// One queued command.
struct AdminRequest {
  std::string who;   ///< "terminal" or the remote address
  std::string line;  ///< the command line
  std::promise<AdminReply> reply;
};

/// Thread-safe queue from the terminal and HTTP threads to the step thread.
class AdminQueue {
 public:
  /// Queues line; the future is fulfilled by the step thread. Thread: any. Allocates.
  std::future<AdminReply> submit(std::string who, std::string line);
  /// Moves queued requests into out if the lock is free (never waits). Thread: step.
  void tryTake(std::vector<AdminRequest>& out);

 private:
  std::mutex mutex_;
  std::vector<AdminRequest> pending_;
};

/// Compares secrets in time independent of where they differ. Pure.
bool tokensEqual(std::string_view a, std::string_view b) noexcept;

/// Failed-token accounting per remote address: kMaxFailures in a minute blocks the
/// address for the next minute. At most kMaxAddresses are tracked; a new address past
/// that evicts the one whose last failure is oldest (never all at once). Thread-safe.
class AdminRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kMaxFailures = 5;
  static constexpr std::size_t kMaxAddresses = 10000;
  /// True while address is blocked.
  bool blocked(const std::string& address, Clock::time_point now);
  /// Records one failure.
  void failure(const std::string& address, Clock::time_point now);
  /// Addresses tracked.
  std::size_t size();

 private:
  struct Entry {
    std::vector<Clock::time_point> failures;
    Clock::time_point blockedUntil{};
    std::list<std::string>::iterator age;  ///< place in order_
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> order_;  ///< addresses, least recently failed first
};

/// Banned names and addresses, one "name NAME reason" / "address A reason" line each
/// (a name with spaces or quotes is written quoted, as admin commands take it). Names
/// match folded (net::foldName: "Ann" bans "ANN").
class BanList {
 public:
  /// Loads path (missing file = no bans). Allocates.
  explicit BanList(std::string path);
  /// Adds a ban of a name or an address (a dotted quad counts as an address) and
  /// writes the file atomically (temp file, fsync, rename, fsync of the folder).
  /// Errors: the file cannot be written (the message names it and why); the list is
  /// then unchanged.
  sim::Result<void> add(const std::string& target, const std::string& reason);
  /// Removes a ban and writes the file. Returns false if there was none. Errors: the
  /// file cannot be written; the ban then stays.
  sim::Result<bool> remove(const std::string& target);
  /// "" if allowed, else the reason (name may be empty at connect).
  std::string check(const std::string& address, const std::string& name) const;
  std::size_t size() const { return bans_.size(); }
  const std::string& path() const { return path_; }

 private:
  sim::Result<void> write() const;
  std::string path_;
  std::map<std::string, std::pair<std::string, std::string>> bans_;  ///< key -> (target as given, reason)
};

/// Splits an admin command line into words: spaces separate, "double quotes" hold a
/// word with spaces, and inside quotes \" and \\ stand for " and \. Each word's end
/// offset in line goes into ends (when given). Errors: an unclosed quote. Pure.
sim::Result<std::vector<std::string>> splitCommandLine(const std::string& line,
                                                        std::vector<std::size_t>* ends = nullptr);

/// A word as splitCommandLine reads it back (quoted when it holds a space, a quote or
/// a backslash, or is empty). Pure.
std::string quoteWord(const std::string& word);

/// Which connected player a command means: "#7" is the player with id 7; anything
/// else is a name, matched exactly after folding (net::foldName). Errors: no such
/// player ("no player #7", "no player named x"), or more than one ("ambiguous: ...
/// use #ID"). Pure.
sim::Result<net::PeerInfo> findPlayer(const std::vector<net::PeerInfo>& players, const std::string& who);

/// What a command needs from the server loop.
struct AdminContext {
  net::ServerHost* host = nullptr;
  BanList* bans = nullptr;
  std::vector<sim::Command>* commands = nullptr;  ///< server commands for the next tick
  std::uint32_t* commandSequence = nullptr;       ///< kServerPlayer's sequence counter
  std::function<std::string()> saveNow;           ///< "" = ok, else the error
  std::function<std::string()> stats;             ///< one line
};

/// Parses and runs one command line. Thread: step. Allocates.
AdminReply runAdminCommand(const std::string& line, AdminContext& ctx);

/// The command's first word (for the log), "" for an empty line.
std::string adminVerb(const std::string& line);

}  // namespace loam::server

// AccountStore: the claimed names of a server (name -> account public key, when
// claimed), kept in one text file beside the saves and consulted by the server host
// at Hello (net::AccountBook, docs/PROTOCOL.md, Accounts). The file is hostile input:
// a bad line is an error naming it, never a crash. Claims rewrite the file atomically
// (temporary file, fsync, rename, fsync of the folder) on a writer thread the store
// owns, so the step thread that claims never waits for the disk; several claims in a
// row are written once.
//
// File format, one account per line, fields separated by one tab:
//   <name> TAB <public key, 64 hex digits> TAB <claimed at, Unix seconds>
// Empty lines and lines starting with '#' are ignored. Names follow the name rules
// (net/player_name.h) and are unique when folded.
#pragma once

#include <cstddef>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "net/account_key.h"
#include "sim/core/result.h"

namespace loam::server {

/// One claimed name.
struct Account {
  std::string name;          ///< as first claimed (trimmed, case kept)
  net::PublicKey key{};
  std::int64_t claimedAt = 0;  ///< Unix seconds
};

class AccountStore final : public net::AccountBook {
 public:
  /// Files larger than this are refused (a million accounts fit in ~100 MB; this
  /// bounds what a corrupt or hostile file makes the server read).
  static constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{64} << 20;
  /// Claims beyond this many accounts are refused (the player still joins, unclaimed):
  /// join spam with fresh names cannot grow the file without bound.
  static constexpr std::size_t kMaxAccounts = 100000;

  /// Loads path; a missing file is an empty store (the first claim creates it).
  /// Errors: "path:line: what is wrong", an unreadable or oversized file. Allocates.
  static sim::Result<std::unique_ptr<AccountStore>> open(std::string path);

  /// Writes what is still queued, then stops the writer thread.
  ~AccountStore() override;
  AccountStore(const AccountStore&) = delete;
  AccountStore& operator=(const AccountStore&) = delete;

  std::optional<net::PublicKey> keyOf(std::string_view name) const override;
  /// Binds name (unclaimed) to key, claimedAt = now, and queues the file's rewrite
  /// (never waits for the disk; a write failure is logged by the writer, and retried
  /// with the next claim). "" = claimed, else why not (claimed already, kMaxAccounts).
  std::string claim(std::string_view name, const net::PublicKey& key) override;
  /// Blocks until every claim so far is on disk (or failed, logged). Tests, shutdown.
  void flush();

  /// The account of name (any case), nullptr when unclaimed.
  const Account* find(std::string_view name) const;
  std::size_t size() const noexcept { return accounts_.size(); }
  const std::string& path() const noexcept { return path_; }

 private:
  explicit AccountStore(std::string path) : path_(std::move(path)) {}
  void startWriter();
  void writerLoop();

  std::string path_;
  std::map<std::string, Account> accounts_;  ///< by folded name (the claiming thread's)

  // The writer thread's side: its own copy of the accounts, fed through queued_.
  std::mutex mutex_;
  std::condition_variable wake_, written_;
  std::vector<Account> queued_;         ///< claims not yet taken by the writer
  std::uint64_t claimsQueued_ = 0, claimsWritten_ = 0;
  bool stopping_ = false;
  std::map<std::string, Account> onDisk_;  ///< the writer's copy (writer thread only)
  std::thread writer_;
};

}  // namespace loam::server

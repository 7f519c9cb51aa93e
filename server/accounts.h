// AccountStore: the claimed names of a server (name -> account public key, when
// claimed), kept in one text file beside the saves and consulted by the server host
// at Hello (net::AccountBook, docs/PROTOCOL.md, Accounts). The file is hostile input:
// a bad line is an error naming it, never a crash. Every claim rewrites the file
// atomically (temporary file, fsync, rename, fsync of the folder).
//
// File format, one account per line, fields separated by one tab:
//   <name> TAB <public key, 64 hex digits> TAB <claimed at, Unix seconds>
// Empty lines and lines starting with '#' are ignored. Names follow the name rules
// (net/player_name.h) and are unique when folded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

  /// Loads path; a missing file is an empty store (the first claim creates it).
  /// Errors: "path:line: what is wrong", an unreadable or oversized file. Allocates.
  static sim::Result<std::unique_ptr<AccountStore>> open(std::string path);

  std::optional<net::PublicKey> keyOf(std::string_view name) const override;
  /// Binds name (unclaimed) to key, claimedAt = now, and rewrites the file. On a
  /// write failure the claim is undone, logged and returned ("path: why"); "" = saved.
  std::string claim(std::string_view name, const net::PublicKey& key) override;

  /// The account of name (any case), nullptr when unclaimed.
  const Account* find(std::string_view name) const;
  std::size_t size() const noexcept { return accounts_.size(); }
  const std::string& path() const noexcept { return path_; }

 private:
  explicit AccountStore(std::string path) : path_(std::move(path)) {}
  /// "" or why the file could not be written.
  std::string write() const;

  std::string path_;
  std::map<std::string, Account> accounts_;  ///< by folded name
};

}  // namespace loam::server

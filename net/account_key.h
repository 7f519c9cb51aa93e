// Account keys: Ed25519 (libsodium) key pairs that bind a player name to a secret
// only its owner holds, the bytes a client signs to answer the server's challenge,
// the identity file a client keeps its key in, the per-address limit on failed
// proofs, and the interface through which the server host reads and claims accounts
// (server/accounts.h keeps them in a file). The secret key never leaves this process:
// Hello carries the public key, AuthProof a signature (docs/PROTOCOL.md, Accounts).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/result.h"

namespace loam::net {

inline constexpr std::size_t kPublicKeyBytes = 32;  ///< Ed25519 public key (Hello.public_key)
inline constexpr std::size_t kSignatureBytes = 64;  ///< Ed25519 signature (AuthProof.signature)
inline constexpr std::size_t kAuthNonceBytes = 32;  ///< AuthChallenge.nonce
inline constexpr std::size_t kKeySeedBytes = 32;    ///< the seed a key pair is derived from (identity file)

using PublicKey = std::array<std::uint8_t, kPublicKeyBytes>;
using Signature = std::array<std::uint8_t, kSignatureBytes>;
using AuthNonce = std::array<std::uint8_t, kAuthNonceBytes>;

/// A key pair. The secret part is wiped when the object dies; copy it only when
/// needed (a bot's config).
struct AccountKey {
  PublicKey publicKey{};
  std::array<std::uint8_t, kKeySeedBytes> seed{};  ///< secret: the pair is derived from it
  std::array<std::uint8_t, 64> secretKey{};        ///< secret: libsodium's expanded form

  AccountKey() = default;
  AccountKey(const AccountKey&) = default;
  AccountKey& operator=(const AccountKey&) = default;
  ~AccountKey();
};

/// Initialises libsodium once (thread-safe); false when it cannot (no entropy
/// source): callers then refuse to generate keys or nonces.
bool cryptoReady() noexcept;

/// A new key pair from the system's random source. Errors: libsodium unusable.
sim::Result<AccountKey> generateAccountKey();
/// The key pair a seed determines (crypto_sign_seed_keypair).
AccountKey accountKeyFromSeed(std::span<const std::uint8_t, kKeySeedBytes> seed);
/// A bot's key pair, derived from the swarm seed and the bot's name (BLAKE2b keyed by
/// the seed), so bot runs need no files and the same seed gives the same accounts.
AccountKey botAccountKey(std::uint64_t swarmSeed, std::string_view botName);

/// 32 random bytes for an AuthChallenge.
AuthNonce randomNonce();

/// The bytes an AuthProof signs: "loam auth v1\0", the nonce, then the server's name
/// and the player's name, each as a 4-byte little-endian length and its bytes.
/// Allocates.
std::vector<std::uint8_t> authMessage(const AuthNonce& nonce, std::string_view serverName,
                                      std::string_view playerName);
/// Signs authMessage(nonce, serverName, playerName) with key.
Signature signChallenge(const AccountKey& key, const AuthNonce& nonce, std::string_view serverName,
                        std::string_view playerName);
/// Whether signature is key's signature of authMessage(nonce, serverName, playerName).
/// A signature of the wrong size is false.
bool verifyProof(const PublicKey& key, std::span<const std::uint8_t> signature, const AuthNonce& nonce,
                 std::string_view serverName, std::string_view playerName);

/// Lower-case hex of bytes. Allocates.
std::string hexOf(std::span<const std::uint8_t> bytes);
/// The public key written as 64 hex digits; nullopt for anything else.
std::optional<PublicKey> publicKeyFromHex(std::string_view hex);

/// Reads the identity file at path (one line: the key seed as 64 hex digits), or
/// creates it with a new key (directories too; mode 0600, written to a temporary
/// file, fsynced, renamed) when it does not exist. Errors name the path and what is
/// wrong (unreadable, not a key, readable by others). Allocates; does file I/O.
sim::Result<AccountKey> loadOrCreateIdentity(const std::string& path);

/// How much the server asks of a joining player's key (ServerConfig::auth).
enum class AuthMode : std::uint8_t {
  Off,       ///< no challenge; Hello.public_key is ignored (no accounts)
  Names,     ///< a claimed name needs its key's proof; a key claims an unclaimed name at its first join
  Required,  ///< every player needs a key and its proof (and claims an unclaimed name)
};
/// "off", "names", "required".
const char* authModeName(AuthMode mode) noexcept;
/// The mode called `name`, nullopt for anything else.
std::optional<AuthMode> parseAuthMode(std::string_view name) noexcept;

/// The accounts the server host consults at Hello and claims at a first join, on the
/// host's thread. server/accounts.h keeps them in a file.
class AccountBook {
 public:
  virtual ~AccountBook() = default;
  /// The key name is bound to, or nullopt when it is unclaimed (names compare folded,
  /// net/player_name.h).
  virtual std::optional<PublicKey> keyOf(std::string_view name) const = 0;
  /// Binds the unclaimed name to key and persists it; returns "" or why it could not.
  virtual std::string claim(std::string_view name, const PublicKey& key) = 0;
};

/// Failed proofs per address: after kFailuresBeforeLock failures within kWindow an
/// address is refused for kLock. Holds at most kMaxAddresses entries; when full, the
/// entry whose last failure is oldest goes (never all at once). One thread.
class AuthFailureLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kFailuresBeforeLock = 3;
  static constexpr std::chrono::seconds kWindow{60};
  static constexpr std::chrono::seconds kLock{60};
  static constexpr std::size_t kMaxAddresses = 4096;

  /// True while address is locked out.
  bool limited(const std::string& address, Clock::time_point now) const;
  /// Counts a failed proof from address. Allocates one entry for a new address.
  void fail(const std::string& address, Clock::time_point now);
  /// A good proof: the address's count starts again.
  void succeed(const std::string& address) { entries_.erase(address); }
  std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::uint32_t failures = 0;
    Clock::time_point first{}, last{};
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace loam::net

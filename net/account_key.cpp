#include "net/account_key.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace loam::net {
namespace {

constexpr char kAuthContext[] = "loam auth v1";  // with its NUL: a domain separator
constexpr char kBotKeyContext[] = "loam bot key v1";

// Appends bytes one by one: GCC 12 misreads range inserts into a fresh vector as
// out-of-bounds copies (-Warray-bounds).
void appendBytes(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> bytes) {
  for (std::uint8_t b : bytes) out.push_back(b);
}
void appendText(std::vector<std::uint8_t>& out, std::string_view text) {
  for (char c : text) out.push_back(static_cast<std::uint8_t>(c));
}

void appendLength(std::vector<std::uint8_t>& out, std::size_t n) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>((n >> (8 * i)) & 0xFF));
}

int hexDigit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> bytesFromHex(std::string_view hex) {
  if (hex.size() != 2 * N) return std::nullopt;
  std::array<std::uint8_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

std::string errnoText() { return std::strerror(errno); }

}  // namespace

AccountKey::~AccountKey() {
  sodium_memzero(seed.data(), seed.size());
  sodium_memzero(secretKey.data(), secretKey.size());
}

bool cryptoReady() noexcept {
  static const bool ready = sodium_init() >= 0;  // thread-safe static init; sodium_init is idempotent
  return ready;
}

sim::Result<AccountKey> generateAccountKey() {
  if (!cryptoReady()) return sim::makeError("libsodium could not be initialised (no random source?)");
  std::array<std::uint8_t, kKeySeedBytes> seed{};
  randombytes_buf(seed.data(), seed.size());
  AccountKey key = accountKeyFromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

AccountKey accountKeyFromSeed(std::span<const std::uint8_t, kKeySeedBytes> seed) {
  (void)cryptoReady();
  AccountKey key;
  std::copy(seed.begin(), seed.end(), key.seed.begin());
  crypto_sign_seed_keypair(key.publicKey.data(), key.secretKey.data(), key.seed.data());
  return key;
}

AccountKey botAccountKey(std::uint64_t swarmSeed, std::string_view botName) {
  (void)cryptoReady();
  std::array<std::uint8_t, 8> hashKey{};
  for (std::size_t i = 0; i < hashKey.size(); ++i) hashKey[i] = static_cast<std::uint8_t>(swarmSeed >> (8 * i));
  std::vector<std::uint8_t> message;
  appendText(message, std::string_view(kBotKeyContext, sizeof kBotKeyContext));
  appendText(message, botName);
  // BLAKE2b needs a key of 16..64 bytes: the seed's 8 bytes twice.
  std::array<std::uint8_t, 16> blakeKey{};
  std::copy(hashKey.begin(), hashKey.end(), blakeKey.begin());
  std::copy(hashKey.begin(), hashKey.end(), blakeKey.begin() + 8);
  std::array<std::uint8_t, kKeySeedBytes> seed{};
  crypto_generichash(seed.data(), seed.size(), message.data(), message.size(), blakeKey.data(), blakeKey.size());
  return accountKeyFromSeed(seed);
}

AuthNonce randomNonce() {
  AuthNonce nonce{};
  (void)cryptoReady();
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

std::vector<std::uint8_t> authMessage(const AuthNonce& nonce, std::string_view serverName,
                                      std::string_view playerName) {
  std::vector<std::uint8_t> out;
  out.reserve(sizeof kAuthContext + nonce.size() + 8 + serverName.size() + playerName.size());
  appendText(out, std::string_view(kAuthContext, sizeof kAuthContext));
  appendBytes(out, nonce);
  appendLength(out, serverName.size());
  appendText(out, serverName);
  appendLength(out, playerName.size());
  appendText(out, playerName);
  return out;
}

Signature signChallenge(const AccountKey& key, const AuthNonce& nonce, std::string_view serverName,
                        std::string_view playerName) {
  const std::vector<std::uint8_t> message = authMessage(nonce, serverName, playerName);
  Signature sig{};
  crypto_sign_detached(sig.data(), nullptr, message.data(), message.size(), key.secretKey.data());
  return sig;
}

bool verifyProof(const PublicKey& key, std::span<const std::uint8_t> signature, const AuthNonce& nonce,
                 std::string_view serverName, std::string_view playerName) {
  if (signature.size() != kSignatureBytes || !cryptoReady()) return false;
  const std::vector<std::uint8_t> message = authMessage(nonce, serverName, playerName);
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(), key.data()) == 0;
}

std::string hexOf(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

std::optional<PublicKey> publicKeyFromHex(std::string_view hex) { return bytesFromHex<kPublicKeyBytes>(hex); }

sim::Result<AccountKey> loadOrCreateIdentity(const std::string& path) {
  namespace fs = std::filesystem;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if ((st.st_mode & 077) != 0) {
      return sim::makeError(path + ": the identity key is readable by others (chmod 600 " + path + ")");
    }
    if (st.st_size > 256) return sim::makeError(path + ": not an identity key (larger than 256 bytes)");
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return sim::makeError(path + ": cannot read the identity key");
    auto seed = bytesFromHex<kKeySeedBytes>(line);
    if (!seed) return sim::makeError(path + ": line 1 is not an identity key (64 hex digits)");
    AccountKey key = accountKeyFromSeed(*seed);
    sodium_memzero(seed->data(), seed->size());
    sodium_memzero(line.data(), line.size());
    return key;
  }
  if (errno != ENOENT) return sim::makeError(path + ": " + errnoText());
  auto key = generateAccountKey();
  if (!key) return key;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) return sim::makeError(parent.string() + ": " + ec.message());
  }
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return sim::makeError(temp + ": " + errnoText());
  std::string text = hexOf(key->seed) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  sodium_memzero(text.data(), text.size());
  const std::string why = written ? "" : errnoText();
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string err = written ? errnoText() : why;
    ::unlink(temp.c_str());
    return sim::makeError(path + ": cannot write the identity key: " + err);
  }
  return key;
}

const char* authModeName(AuthMode mode) noexcept {
  switch (mode) {
    case AuthMode::Off: return "off";
    case AuthMode::Names: return "names";
    case AuthMode::Required: return "required";
  }
  return "?";
}

std::optional<AuthMode> parseAuthMode(std::string_view name) noexcept {
  for (AuthMode m : {AuthMode::Off, AuthMode::Names, AuthMode::Required}) {
    if (name == authModeName(m)) return m;
  }
  return std::nullopt;
}

bool AuthFailureLimiter::limited(const std::string& address, Clock::time_point now) const {
  const auto it = entries_.find(address);
  if (it == entries_.end()) return false;
  return it->second.failures >= kFailuresBeforeLock && now - it->second.last < kLock;
}

void AuthFailureLimiter::fail(const std::string& address, Clock::time_point now) {
  auto it = entries_.find(address);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxAddresses) {
      auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
      entries_.erase(oldest);
    }
    it = entries_.emplace(address, Entry{0, now, now}).first;
  }
  Entry& e = it->second;
  // A window that ended without a lock (or a lock that ran out) starts again.
  if ((e.failures < kFailuresBeforeLock && now - e.first >= kWindow) ||
      (e.failures >= kFailuresBeforeLock && now - e.last >= kLock)) {
    e = Entry{0, now, now};
  }
  ++e.failures;
  e.last = now;
}

}  // namespace loam::net

// The name rules (net/player_name.h) and the account keys (net/account_key.h):
// signing and verifying challenges, bot keys, the identity file, the failure limiter.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "net/account_key.h"
#include "net/host/session.h"
#include "net/player_name.h"

using namespace loam;
using net::RejectCode;

namespace {

RejectCode codeOf(std::string_view raw) { return net::checkPlayerName(raw).code; }

std::filesystem::path tempDir(const char* tag) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("loam_identity_test_" + std::string(tag) + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("names: good names pass, trimmed; the rules say why a name is refused") {
  CHECK(net::checkPlayerName("ann").ok());
  CHECK(net::checkPlayerName("  Ann Lee  ").name == "Ann Lee");
  CHECK(net::checkPlayerName("Zoë").ok());
  CHECK(net::checkPlayerName("東京の猫").ok());
  CHECK(net::checkPlayerName("e\xCC\x81").ok());  // e + combining acute
  CHECK(net::checkPlayerName(std::string(24, 'a')).ok());
  CHECK(net::checkPlayerName("bot7").ok());

  CHECK(codeOf("") == RejectCode::BadName);
  CHECK(codeOf("    ") == RejectCode::BadName);
  CHECK(codeOf(std::string(25, 'a')) == RejectCode::BadName);
  CHECK(codeOf("ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ") == RejectCode::BadName);  // 16 characters but 32 bytes
  CHECK(codeOf("a  b") == RejectCode::BadName);
  const net::NameCheck tab = net::checkPlayerName("a\tb");
  CHECK(tab.code == RejectCode::BadName);
  CHECK(tab.why.find("control") != std::string::npos);
}

TEST_CASE("names: invalid UTF-8, controls, bidi, zero-width and other invisible characters are refused") {
  for (const char* raw : {
           "a\xFF",              // not UTF-8
           "a\xC3",              // truncated sequence
           "a\xC0\xAF",          // overlong '/'
           "a\xED\xA0\x80",      // surrogate U+D800
           "a\xF4\x90\x80\x80",  // past U+10FFFF
           "a\x7F",              // DEL
           "a\xC2\x85",          // C1 NEL
           "a\xC2\x9B" "31m",    // C1 CSI
           "a\xE2\x80\xAE" "b",  // RLO
           "a\xE2\x80\xAA" "b",  // LRE
           "a\xE2\x81\xA6" "b",  // LRI
           "a\xE2\x80\x8F" "b",  // RLM
           "a\xE2\x80\x8B" "b",  // ZWSP
           "a\xE2\x80\x8D" "b",  // ZWJ
           "a\xE2\x81\xA0" "b",  // word joiner
           "a\xEF\xBB\xBF" "b",  // BOM
           "a\xC2\xAD" "b",      // soft hyphen
           "a\xC2\xA0" "b",      // no-break space
           "a\xE3\x80\x80" "b",  // ideographic space
           "a\xE3\x85\xA4" "b",  // Hangul filler
           "a\xEF\xB8\x8F" "b",  // variation selector 16
           "a\xF3\xA0\x80\x81",  // tag U+E0001
           "a\xEE\x80\x80",      // private use U+E000
           "a\xEF\xBF\xBD",      // replacement character
           "a\xEF\xBF\xBE",      // noncharacter U+FFFE
           "\xCC\x81" "a",       // starts with a combining mark
           "a\xCC\x81\xCC\x81\xCC\x81",  // three marks in a row (Zalgo)
       }) {
    INFO(raw);
    const net::NameCheck c = net::checkPlayerName(raw);
    CHECK(c.code == RejectCode::BadName);
    CHECK(!c.why.empty());
  }
}

TEST_CASE("names: reserved words (any case), digits only and the id sigil are reserved") {
  for (const char* raw : {"server", "SERVER", "Admin", "console", "System", "LOAM", " server ", "7", "0042", "#7",
                          "#ann"}) {
    INFO(raw);
    CHECK(codeOf(raw) == RejectCode::NameReserved);
  }
  CHECK(net::checkPlayerName("server2").ok());
  CHECK(net::checkPlayerName("7 up").ok());
  CHECK(net::checkPlayerName("a#7").ok());
}

TEST_CASE("names: folding lower-cases ASCII only") {
  CHECK(net::foldName("AnN Lee") == "ann lee");
  CHECK(net::foldName("ÄNN") == "Änn");
  CHECK(net::foldName("ann") == net::foldName("ANN"));
}

TEST_CASE("keys: a proof verifies only for its key, nonce, server and name") {
  auto key = net::generateAccountKey();
  REQUIRE(key);
  auto other = net::generateAccountKey();
  REQUIRE(other);
  CHECK(key->publicKey != other->publicKey);
  const net::AuthNonce nonce = net::randomNonce();
  const net::AuthNonce nonce2 = net::randomNonce();
  CHECK(nonce != nonce2);
  const net::Signature sig = net::signChallenge(*key, nonce, "loam", "ann");
  CHECK(net::verifyProof(key->publicKey, sig, nonce, "loam", "ann"));
  CHECK_FALSE(net::verifyProof(other->publicKey, sig, nonce, "loam", "ann"));
  CHECK_FALSE(net::verifyProof(key->publicKey, sig, nonce2, "loam", "ann"));
  CHECK_FALSE(net::verifyProof(key->publicKey, sig, nonce, "other server", "ann"));
  CHECK_FALSE(net::verifyProof(key->publicKey, sig, nonce, "loam", "bob"));
  net::Signature flipped = sig;
  flipped[10] ^= 1;
  CHECK_FALSE(net::verifyProof(key->publicKey, flipped, nonce, "loam", "ann"));
  CHECK_FALSE(net::verifyProof(key->publicKey, std::span(sig).first(63), nonce, "loam", "ann"));
  // Lengths are framed: moving a byte from the server name to the player name changes the message.
  CHECK(net::authMessage(nonce, "ab", "c") != net::authMessage(nonce, "a", "bc"));
}

TEST_CASE("keys: bot keys follow the seed and the name; hex round-trips") {
  const net::AccountKey a = net::botAccountKey(42, "bot1");
  CHECK(a.publicKey == net::botAccountKey(42, "bot1").publicKey);
  CHECK(a.publicKey != net::botAccountKey(43, "bot1").publicKey);
  CHECK(a.publicKey != net::botAccountKey(42, "bot2").publicKey);
  const std::string hex = net::hexOf(a.publicKey);
  CHECK(hex.size() == 64);
  CHECK(net::publicKeyFromHex(hex) == a.publicKey);
  CHECK_FALSE(net::publicKeyFromHex(hex.substr(1)));
  CHECK_FALSE(net::publicKeyFromHex(std::string(63, 'a') + "g"));
}

TEST_CASE("identity file: created 0600 on first use, the same key after; bad files are clear errors") {
  const auto dir = tempDir("file");
  const std::string path = (dir / "loam" / "identity.key").string();
  auto first = net::loadOrCreateIdentity(path);
  REQUIRE(first);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto again = net::loadOrCreateIdentity(path);
  REQUIRE(again);
  CHECK(again->publicKey == first->publicKey);
  CHECK(net::verifyProof(first->publicKey, net::signChallenge(*again, {}, "s", "p"), {}, "s", "p"));

  ::chmod(path.c_str(), 0644);
  auto open = net::loadOrCreateIdentity(path);
  REQUIRE_FALSE(open);
  CHECK(open.error().message.find("readable by others") != std::string::npos);

  const std::string junk = (dir / "junk.key").string();
  { std::ofstream(junk) << "not a key\n"; }
  ::chmod(junk.c_str(), 0600);
  auto bad = net::loadOrCreateIdentity(junk);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("line 1") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("auth limiter: a few failures lock an address for a while; others and successes are unaffected") {
  using Limiter = net::AuthFailureLimiter;
  Limiter limiter;
  const auto t0 = Limiter::Clock::time_point{} + std::chrono::hours(1);
  for (std::uint32_t i = 0; i + 1 < Limiter::kFailuresBeforeLock; ++i) limiter.fail("1.2.3.4", t0);
  CHECK_FALSE(limiter.limited("1.2.3.4", t0));
  limiter.fail("1.2.3.4", t0);
  CHECK(limiter.limited("1.2.3.4", t0));
  CHECK(limiter.limited("1.2.3.4", t0 + Limiter::kLock - std::chrono::seconds(1)));
  CHECK_FALSE(limiter.limited("1.2.3.4", t0 + Limiter::kLock));
  CHECK_FALSE(limiter.limited("5.6.7.8", t0));
  // Failures spread wider than the window never lock.
  for (int i = 0; i < 10; ++i) limiter.fail("9.9.9.9", t0 + i * Limiter::kWindow);
  CHECK_FALSE(limiter.limited("9.9.9.9", t0 + 9 * Limiter::kWindow));
  // A success forgets the count.
  limiter.fail("2.2.2.2", t0);
  limiter.fail("2.2.2.2", t0);
  limiter.succeed("2.2.2.2");
  limiter.fail("2.2.2.2", t0);
  CHECK_FALSE(limiter.limited("2.2.2.2", t0));
}

TEST_CASE("auth limiter: bounded; when full the stalest address goes, not every address") {
  using Limiter = net::AuthFailureLimiter;
  Limiter limiter;
  const auto t0 = Limiter::Clock::time_point{} + std::chrono::hours(1);
  // An attacker locked out, then a spray of other addresses: the table stays bounded,
  // the lock is the newest entry and survives; the stalest sprayed entries go.
  for (std::size_t i = 0; i < Limiter::kMaxAddresses; ++i) limiter.fail("10.0." + std::to_string(i), t0);
  for (std::uint32_t i = 0; i < Limiter::kFailuresBeforeLock; ++i) {
    limiter.fail("attacker", t0 + std::chrono::seconds(1));
  }
  CHECK(limiter.size() == Limiter::kMaxAddresses);
  for (std::size_t i = 0; i < 100; ++i) limiter.fail("10.1." + std::to_string(i), t0 + std::chrono::seconds(2));
  CHECK(limiter.size() == Limiter::kMaxAddresses);
  CHECK(limiter.limited("attacker", t0 + std::chrono::seconds(3)));
}

TEST_CASE("auth modes: names round-trip, others are refused") {
  for (net::AuthMode m : {net::AuthMode::Off, net::AuthMode::Names, net::AuthMode::Required}) {
    CHECK(net::parseAuthMode(net::authModeName(m)) == m);
  }
  CHECK_FALSE(net::parseAuthMode("Names"));
  CHECK_FALSE(net::parseAuthMode(""));
}

TEST_CASE("session phases: Challenged sits between Connected and Welcomed") {
  using net::host::Phase;
  using net::host::legalTransition;
  CHECK(legalTransition(Phase::Connected, Phase::Challenged));
  CHECK(legalTransition(Phase::Challenged, Phase::Welcomed));
  CHECK(legalTransition(Phase::Challenged, Phase::Rejected));
  CHECK(legalTransition(Phase::Challenged, Phase::Free));
  CHECK(legalTransition(Phase::Connected, Phase::Welcomed));  // auth off, or no key needed
  CHECK_FALSE(legalTransition(Phase::Challenged, Phase::Joining));
  CHECK_FALSE(legalTransition(Phase::Challenged, Phase::Playing));
  CHECK_FALSE(legalTransition(Phase::Welcomed, Phase::Challenged));
  CHECK_FALSE(legalTransition(Phase::Free, Phase::Challenged));
  CHECK_FALSE(net::host::admitted(Phase::Challenged));  // not counted against max players
  CHECK(std::string(net::host::phaseName(Phase::Challenged)) == "challenged");
}

// Names and accounts end to end (docs/PROTOCOL.md, Names and Accounts): a ServerHost
// in this process, raw ENet clients (tests/support/raw_client.h) that say Hello as
// swarm bots (no world to build) and answer AuthChallenges with net/account_key.h,
// and the accounts file of server/accounts.h, reopened to stand for a server restart.
#include <doctest/doctest.h>
#include <flatbuffers/flatbuffers.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bots/swarm.h"
#include "loam_generated.h"
#include "net/account_key.h"
#include "net/client_connection.h"
#include "net/enet_support.h"
#include "net/protocol.h"
#include "net/server_host.h"
#include "net/wire.h"
#include "server/accounts.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "tests/support/flat_world.h"
#include "tests/support/process_util.h"
#include "tests/support/raw_client.h"

using namespace loam;
using net::RejectCode;

namespace {

using test::flatWorld;

std::filesystem::path tempDir(const char* tag) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("loam_auth_test_" + std::string(tag) + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::shared_ptr<server::AccountStore> openStore(const std::filesystem::path& dir) {
  auto store = server::AccountStore::open((dir / "accounts.txt").string());
  REQUIRE_MESSAGE(store.has_value(), (store ? "" : store.error().message));
  return std::shared_ptr<server::AccountStore>(std::move(*store));
}

std::unique_ptr<net::ServerHost> openServer(net::AuthMode auth, std::shared_ptr<net::AccountBook> accounts) {
  net::ServerConfig config;
  config.name = "auth test";
  config.maxPeersPerAddress = 64;  // every client here is on 127.0.0.1
  config.auth = auth;
  config.accounts = std::move(accounts);
  return test::openFlatServer(std::move(config));
}

/// How a join ended.
struct Outcome {
  bool welcomed = false;
  bool challenged = false;  ///< an AuthChallenge came first
  RejectCode code = RejectCode::None;
  std::string text;
};

/// A swarm-bot-like client on a RawClient: Hello with an optional key, answers the
/// challenge with `signer` (the key's own signature by default; tests pass a wrong one).
class Joiner {
 public:
  using Signer = std::function<net::Signature(const net::AuthNonce&, std::string_view server, std::string_view name)>;

  Joiner(std::uint16_t port, std::string name, std::optional<net::AccountKey> key, Signer signer = {})
      : client_(port), name_(std::move(name)), key_(std::move(key)), signer_(std::move(signer)) {}
  ~Joiner() {
    if (!client_.disconnected) client_.disconnectNow();  // sent at once: the server frees the name
  }
  Joiner(const Joiner&) = delete;
  Joiner& operator=(const Joiner&) = delete;

  bool done() const { return outcome.welcomed || outcome.code != RejectCode::None || client_.disconnected; }

  void service() {
    client_.service();
    if (client_.connected && !helloSent_) {
      helloSent_ = true;
      std::span<const std::uint8_t> publicKey;
      if (key_) publicKey = key_->publicKey;
      test::buildHello(fbb_, name_.c_str(), /*wantsWorld*/ false, net::kProtocolVersion, publicKey);
      send();
    }
    for (const auto& bytes : client_.inbox) {
      const wire::ServerMessage* msg = test::parseServerMessage(bytes);
      REQUIRE(msg != nullptr);
      onMessage(*msg);
    }
    client_.inbox.clear();
  }

  Outcome outcome;

 private:
  void send() {
    client_.send(fbb_);
    client_.flush();
  }
  void onMessage(const wire::ServerMessage& msg) {
    if (msg.body_type() == wire::ServerBody::Welcome) outcome.welcomed = true;
    if (msg.body_type() == wire::ServerBody::Reject) {
      outcome.code = static_cast<RejectCode>(msg.body_as_Reject()->code());
      outcome.text = msg.body_as_Reject()->text() ? msg.body_as_Reject()->text()->str() : "";
    }
    if (msg.body_type() == wire::ServerBody::AuthChallenge) {
      outcome.challenged = true;
      const wire::AuthChallenge* c = msg.body_as_AuthChallenge();
      REQUIRE(c->nonce() != nullptr);
      REQUIRE(c->nonce()->size() == net::kAuthNonceBytes);
      net::AuthNonce nonce{};
      std::copy(c->nonce()->begin(), c->nonce()->end(), nonce.begin());
      const std::string server = c->server_name() ? c->server_name()->str() : "";
      REQUIRE(key_.has_value());
      const net::Signature sig = signer_ ? signer_(nonce, server, name_) : net::signChallenge(*key_, nonce, server, name_);
      fbb_.Clear();
      auto proof = wire::CreateAuthProof(fbb_, fbb_.CreateVector(sig.data(), sig.size()));
      fbb_.Finish(wire::CreateClientMessage(fbb_, wire::ClientBody::AuthProof, proof.Union()));
      send();
    }
  }

  test::RawClient client_;
  std::string name_;
  std::optional<net::AccountKey> key_;
  Signer signer_;
  bool helloSent_ = false;
  flatbuffers::FlatBufferBuilder fbb_;
};

/// Ticks the server until the joiner is welcomed or refused (5 s at most).
Outcome join(net::ServerHost& host, Joiner& j) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!j.done() && std::chrono::steady_clock::now() < deadline) {
    host.tick();
    j.service();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE_MESSAGE(j.done(), "no Welcome or Reject within 5 s");
  return j.outcome;
}

Outcome joinOnce(net::ServerHost& host, const std::string& name, std::optional<net::AccountKey> key,
                 Joiner::Signer signer = {}) {
  Joiner j(host.port(), name, std::move(key), std::move(signer));
  Outcome out = join(host, j);
  // Let the server see the leave (or the reject end) before the next joiner.
  for (int i = 0; i < 5; ++i) {
    host.tick();
    j.service();
  }
  return out;
}

net::AccountKey newKey() {
  auto k = net::generateAccountKey();
  REQUIRE(k.has_value());
  return *k;
}

}  // namespace

TEST_CASE("names: a second player with the same name in other case is refused; reserved names are refused") {
  auto host = openServer(net::AuthMode::Off, nullptr);
  Joiner first(host->port(), "Ann", std::nullopt);
  CHECK(join(*host, first).welcomed);
  Joiner second(host->port(), "aNN", std::nullopt);
  const Outcome taken = join(*host, second);
  CHECK(taken.code == RejectCode::NameTaken);
  CHECK(taken.text.find("Ann") != std::string::npos);
  Joiner padded(host->port(), "  ann ", std::nullopt);  // trimmed first
  CHECK(join(*host, padded).code == RejectCode::NameTaken);
  Joiner server(host->port(), "Server", std::nullopt);
  CHECK(join(*host, server).code == RejectCode::NameReserved);
  Joiner digits(host->port(), "7", std::nullopt);
  CHECK(join(*host, digits).code == RejectCode::NameReserved);
  Joiner bidi(host->port(), "ann\xE2\x80\xAE", std::nullopt);
  CHECK(join(*host, bidi).code == RejectCode::BadName);
  Joiner other(host->port(), "Bob", std::nullopt);
  CHECK(join(*host, other).welcomed);
}

TEST_CASE("accounts (names): claim, rejoin with the key, wrong key and wrong proof refused, keyless refused on a claimed name") {
  const auto dir = tempDir("names");
  auto store = openStore(dir);
  auto host = openServer(net::AuthMode::Names, store);
  const net::AccountKey ann = newKey(), mallory = newKey();

  // Without a key an unclaimed name plays and claims nothing.
  CHECK(joinOnce(*host, "Zed", std::nullopt).welcomed);
  CHECK(store->find("zed") == nullptr);

  // First join with a key: challenged, then welcomed, and the name is Ann's.
  const Outcome claim = joinOnce(*host, "Ann", ann);
  CHECK(claim.challenged);
  CHECK(claim.welcomed);
  REQUIRE(store->find("ANN") != nullptr);
  CHECK(store->find("ANN")->key == ann.publicKey);
  CHECK(store->find("ANN")->name == "Ann");
  store->flush();  // written by the store's own thread, never the step's
  CHECK(loam::test::readText(dir / "accounts.txt").find("Ann\t" + net::hexOf(ann.publicKey)) != std::string::npos);

  // Rejoin with the right key, in any case.
  const Outcome again = joinOnce(*host, "ann", ann);
  CHECK(again.challenged);
  CHECK(again.welcomed);

  // Another key on the claimed name: refused before any challenge.
  const Outcome stolen = joinOnce(*host, "Ann", mallory);
  CHECK_FALSE(stolen.welcomed);
  CHECK(stolen.code == RejectCode::AuthFailed);

  // Ann's public key with a proof made by another secret: the proof fails.
  const Outcome forged = joinOnce(*host, "Ann", ann, [&](const net::AuthNonce& n, std::string_view s, std::string_view p) {
    return net::signChallenge(mallory, n, s, p);
  });
  CHECK(forged.challenged);
  CHECK(forged.code == RejectCode::AuthFailed);

  // Without a key on a claimed name.
  CHECK(joinOnce(*host, "ANN", std::nullopt).code == RejectCode::AuthRequired);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accounts: failed proofs are rate-limited per address, even for the right key afterwards") {
  const auto dir = tempDir("limit");
  auto store = openStore(dir);
  auto host = openServer(net::AuthMode::Names, store);
  const net::AccountKey ann = newKey(), mallory = newKey();
  REQUIRE(joinOnce(*host, "Ann", ann).welcomed);
  for (std::uint32_t i = 0; i < net::AuthFailureLimiter::kFailuresBeforeLock; ++i) {
    INFO("attempt ", i);
    CHECK(joinOnce(*host, "Ann", mallory).code == RejectCode::AuthFailed);
  }
  const Outcome limited = joinOnce(*host, "Ann", ann);
  CHECK(limited.code == RejectCode::AuthRateLimited);
  CHECK_FALSE(limited.challenged);
  // Keyless players of unclaimed names are not held up by the lock.
  CHECK(joinOnce(*host, "Bob", std::nullopt).welcomed);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accounts persist across a server restart; the file is checked line by line") {
  const auto dir = tempDir("persist");
  const net::AccountKey ann = newKey(), mallory = newKey();
  {
    auto host = openServer(net::AuthMode::Names, openStore(dir));
    REQUIRE(joinOnce(*host, "Ann", ann).welcomed);
  }
  {
    auto store = openStore(dir);  // the restarted server reads the file
    CHECK(store->size() == 1);
    auto host = openServer(net::AuthMode::Names, store);
    CHECK(joinOnce(*host, "Ann", mallory).code == RejectCode::AuthFailed);
    CHECK(joinOnce(*host, "Ann", ann).welcomed);
  }
  // No temporary file is left behind.
  CHECK_FALSE(std::filesystem::exists(dir / "accounts.txt.tmp"));

  const auto bad = [&](const std::string& text) {
    { std::ofstream(dir / "bad.txt") << text; }
    auto store = server::AccountStore::open((dir / "bad.txt").string());
    REQUIRE_FALSE(store.has_value());
    return store.error().message;
  };
  const std::string key = net::hexOf(ann.publicKey);
  CHECK(bad("# header\nAnn\t" + key + "\t1\nBob\tnot-hex\t1\n").find("bad.txt:3: public key") != std::string::npos);
  CHECK(bad("Ann\t" + key + "\n").find("bad.txt:1:") != std::string::npos);
  CHECK(bad("Ann\t" + key + "\t1\nann\t" + key + "\t2\n").find("bad.txt:2: the name") != std::string::npos);
  CHECK(bad("server\t" + key + "\t1\n").find("bad.txt:1: name") != std::string::npos);
  CHECK(bad("Ann\t" + key + "\tsoon\n").find("bad.txt:1: claimed at") != std::string::npos);
  CHECK(bad(std::string("A\xE2\x80\x8B" "nn\t") + key + "\t1\n").find("bad.txt:1: name") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accounts (required): a keyless player is refused; a keyed one claims and joins") {
  const auto dir = tempDir("required");
  auto store = openStore(dir);
  auto host = openServer(net::AuthMode::Required, store);
  const Outcome keyless = joinOnce(*host, "Zed", std::nullopt);
  CHECK(keyless.code == RejectCode::AuthRequired);
  CHECK_FALSE(keyless.challenged);
  const Outcome keyed = joinOnce(*host, "Zed", newKey());
  CHECK(keyed.challenged);
  CHECK(keyed.welcomed);
  CHECK(store->find("zed") != nullptr);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accounts (off): keys are ignored, no challenge") {
  auto host = openServer(net::AuthMode::Off, nullptr);
  const Outcome o = joinOnce(*host, "Ann", newKey());
  CHECK(o.welcomed);
  CHECK_FALSE(o.challenged);
}

TEST_CASE("accounts: a full client (ClientConnection) proves its key and plays; another key on its name fails") {
  const auto dir = tempDir("client");
  auto host = openServer(net::AuthMode::Names, openStore(dir));
  const auto connect = [&](const net::AccountKey& key) {
    net::ClientConfig cfg;
    cfg.port = host->port();
    cfg.name = " Ann ";  // trimmed by the client as by the server
    cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
    cfg.worldFactory = [](const sim::Scene&, std::uint64_t, const std::function<void(double)>& progress)
        -> sim::Result<sim::SimState> {
      progress(1.0);
      return sim::SimState(flatWorld().state);
    };
    cfg.kind = net::ClientKind::FullBot;
    cfg.accountKey = std::make_shared<const net::AccountKey>(key);
    auto conn = net::ClientConnection::connect(cfg);
    REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
    return std::move(*conn);
  };
  const auto runUntil = [&](net::ClientConnection& c, net::ClientPhase want) {
    const auto start = std::chrono::steady_clock::now();
    while (c.phase() != want && c.phase() != net::ClientPhase::Failed && c.phase() != net::ClientPhase::Disconnected &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
      host->tick();
      c.service(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), 1);
    }
    return c.phase();
  };
  const net::AccountKey ann = newKey();
  auto owner = connect(ann);
  CHECK(runUntil(*owner, net::ClientPhase::Playing) == net::ClientPhase::Playing);
  CHECK(owner->stats().sent.count("AuthProof") == 1);
  owner->disconnect();
  for (int i = 0; i < 10; ++i) host->tick();

  auto thief = connect(newKey());
  CHECK(runUntil(*thief, net::ClientPhase::Playing) == net::ClientPhase::Failed);
  CHECK(thief->error().find("authentication failed") != std::string::npos);

  // A name the rules refuse fails before any packet.
  net::ClientConfig bad;
  bad.name = "admin";
  auto refused = net::ClientConnection::connect(bad);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("reserved") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accounts (required): swarm bots answer the challenge with keys from their seed; seed 0 is refused") {
  const auto dir = tempDir("swarm");
  auto store = openStore(dir);
  auto host = openServer(net::AuthMode::Required, store);
  auto script = sim::parseScript("every 2s from 0 to 60s all walkto 1,1 -1,-1\n", "auth");
  REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));
  const auto run = [&](bots::Swarm& swarm) {
    const auto start = std::chrono::steady_clock::now();
    const auto settled = [&] {
      for (const bots::SwarmBot& b : swarm.bots()) {
        if (b.phase == bots::SwarmBot::Phase::Connecting || b.phase == bots::SwarmBot::Phase::Welcomed) return false;
      }
      return true;
    };
    while (!settled() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      host->tick();
      swarm.service(0, true);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  auto keyed = bots::Swarm::open("127.0.0.1", host->port(), 3, "swarm", *script, 0.0, 7);
  REQUIRE(keyed.has_value());
  run(**keyed);
  for (const bots::SwarmBot& b : (*keyed)->bots()) {
    INFO(b.name, ": ", b.error);
    CHECK(b.phase == bots::SwarmBot::Phase::Playing);
    REQUIRE(store->find(b.name) != nullptr);
    CHECK(store->find(b.name)->key == net::botAccountKey(7, b.name).publicKey);
  }
  (*keyed)->disconnect(200);

  auto keyless = bots::Swarm::open("127.0.0.1", host->port(), 1, "plain", *script, 0.0, 0);
  REQUIRE(keyless.has_value());
  run(**keyless);
  CHECK((*keyless)->bots()[0].phase == bots::SwarmBot::Phase::Failed);
  CHECK((*keyless)->bots()[0].error.find("account key required") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("loam-server --auth required: loam-bots join with derived keys, keyless bots are refused, a bad accounts file stops the start") {
  using namespace std::chrono_literals;
  loam::test::TempDir dir("loam_auth_process_");
  const std::string saves = (dir.path / "saves").string();
  const int port = loam::test::freeUdpPort();
  const auto serverArgs = [&](const char* auth) {
    return std::vector<std::string>{"--scene", std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml", "--port",
                                    std::to_string(port), "--bind", "127.0.0.1", "--save-dir", saves,
                                    "--save-interval", "0", "--stats-interval", "0", "--auth", auth};
  };
  const std::string serverBin = loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN);
  const std::string botsBin = loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN);
  const auto bots = [&](const char* count, const char* accountSeed) {
    return std::vector<std::string>{"--server", "127.0.0.1:" + std::to_string(port), "--mode", "swarm", "--count",
                                    count, "--duration", "2", "--name-prefix", "keyed", "--account-seed", accountSeed};
  };
  {
    loam::test::Process server(serverBin, serverArgs("required"), dir.path / "server.log");
    REQUIRE(server.waitForLog("listening on", 60s));
    CHECK(server.log().find("auth=required accounts=0") != std::string::npos);
    loam::test::Process keyed(botsBin, bots("2", "1"), dir.path / "bots.log");
    keyed.wait(30s);
    INFO(keyed.log());
    CHECK(loam::test::countOf(keyed.log(), "joined in") == 2);
    const std::string accounts = loam::test::readText(dir.path / "saves" / "accounts.txt");
    CHECK(accounts.find("keyed1\t" + net::hexOf(net::botAccountKey(1, "keyed1").publicKey)) != std::string::npos);
    CHECK(accounts.find("keyed2\t") != std::string::npos);

    loam::test::Process plain(botsBin, bots("1", "0"), dir.path / "plain.log");
    plain.wait(30s);
    CHECK(plain.log().find("account key required") != std::string::npos);
  }
  {
    // Restarted: the claims were read back, and a bot with another seed cannot take them.
    loam::test::Process server(serverBin, serverArgs("names"), dir.path / "server2.log");
    REQUIRE(server.waitForLog("listening on", 60s));
    CHECK(server.log().find("auth=names accounts=2") != std::string::npos);
    loam::test::Process thief(botsBin, bots("1", "99"), dir.path / "thief.log");
    thief.wait(30s);
    CHECK(thief.log().find("authentication failed") != std::string::npos);
  }
  {
    std::ofstream(dir.path / "saves" / "accounts.txt", std::ios::app) << "broken line\n";
    loam::test::Process server(serverBin, serverArgs("names"), dir.path / "server3.log");
    CHECK(server.wait(60s) == 1);
    CHECK(server.log().find("accounts.txt:4:") != std::string::npos);
  }
}

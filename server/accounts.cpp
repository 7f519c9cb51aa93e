#include "server/accounts.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "net/player_name.h"
#include "server/log.h"

namespace loam::server {
namespace {

constexpr std::string_view kHeader = "# loam accounts v1: name<TAB>public key (hex)<TAB>claimed at (Unix seconds)";

std::vector<std::string_view> splitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos || fields.size() > 3) return fields;
    start = tab + 1;
  }
}

std::string errnoText() { return std::strerror(errno); }

/// Writes accounts to path atomically; "" or why not.
std::string writeAccounts(const std::string& path, const std::map<std::string, Account>& accounts);

}  // namespace

sim::Result<std::unique_ptr<AccountStore>> AccountStore::open(std::string path) {
  std::unique_ptr<AccountStore> store(new AccountStore(path));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (ec) return sim::makeError(path + ": " + ec.message());
    store->startWriter();
    return store;
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return sim::makeError(path + ": " + ec.message());
  if (size > kMaxFileBytes) {
    return sim::makeError(path + ": " + std::to_string(size) + " bytes, more than an accounts file may hold (" +
                          std::to_string(kMaxFileBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return sim::makeError(path + ": cannot read: " + errnoText());
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> fields = splitTabs(line);
    if (fields.size() != 3) return sim::makeError(where + "expected name, key and time separated by tabs");
    const net::NameCheck name = net::checkPlayerName(fields[0]);
    if (!name.ok()) return sim::makeError(where + "name: " + name.why);
    if (name.name != fields[0]) return sim::makeError(where + "name: spaces around it");
    const std::optional<net::PublicKey> key = net::publicKeyFromHex(fields[1]);
    if (!key) return sim::makeError(where + "public key: expected 64 hex digits");
    std::int64_t claimedAt = 0;
    const auto [end, err] = std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), claimedAt);
    if (err != std::errc() || end != fields[2].data() + fields[2].size() || claimedAt < 0) {
      return sim::makeError(where + "claimed at: expected Unix seconds");
    }
    const std::string folded = net::foldName(name.name);
    if (store->accounts_.count(folded) != 0) {
      return sim::makeError(where + "the name \"" + name.name + "\" is claimed twice");
    }
    store->accounts_.emplace(folded, Account{name.name, *key, claimedAt});
  }
  if (in.bad()) return sim::makeError(path + ": read error");
  store->startWriter();
  return store;
}

void AccountStore::startWriter() {
  onDisk_ = accounts_;
  writer_ = std::thread([this] { writerLoop(); });
}

AccountStore::~AccountStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void AccountStore::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = claimsQueued_;
  written_.wait(lock, [&] { return claimsWritten_ >= target; });
}

void AccountStore::writerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stopping, nothing left
    std::vector<Account> batch;
    batch.swap(queued_);
    const std::uint64_t upTo = claimsQueued_;
    lock.unlock();
    for (Account& a : batch) onDisk_.emplace(net::foldName(a.name), std::move(a));
    if (std::string why = writeAccounts(path_, onDisk_); !why.empty()) {
      logAs(LogLevel::Error, "accounts", "error: accounts=%zu not saved: %s", onDisk_.size(), LogValue(why).c_str());
    }
    lock.lock();
    claimsWritten_ = upTo;
    written_.notify_all();
  }
}

std::optional<net::PublicKey> AccountStore::keyOf(std::string_view name) const {
  const Account* a = find(name);
  if (a == nullptr) return std::nullopt;
  return a->key;
}

const Account* AccountStore::find(std::string_view name) const {
  const auto it = accounts_.find(net::foldName(name));
  return it == accounts_.end() ? nullptr : &it->second;
}

std::string AccountStore::claim(std::string_view name, const net::PublicKey& key) {
  const std::string folded = net::foldName(name);
  if (accounts_.count(folded) != 0) return "the name is claimed";
  if (accounts_.size() >= kMaxAccounts) {
    logAs(LogLevel::Warn, "accounts", "warning: claim name=%s refused: accounts=%zu is the limit", LogValue(name).c_str(),
          accounts_.size());
    return "the accounts file is full (" + std::to_string(kMaxAccounts) + ")";
  }
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Account& a = accounts_.emplace(folded, Account{std::string(name), key, now}).first->second;
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(a);
    ++claimsQueued_;
  }
  wake_.notify_one();
  logAs(LogLevel::Info, "accounts", "claimed name=%s key=%s accounts=%zu", LogValue(name).c_str(),
        net::hexOf(key).substr(0, 16).c_str(), accounts_.size());
  return "";
}

namespace {

std::string writeAccounts(const std::string& path, const std::map<std::string, Account>& accounts) {
  std::ostringstream text;
  text << kHeader << '\n';
  for (const auto& [folded, a] : accounts) text << a.name << '\t' << net::hexOf(a.key) << '\t' << a.claimedAt << '\n';
  const std::string bytes = text.str();
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return temp + ": " + errnoText();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::string why;
  if (done != bytes.size()) why = temp + ": write: " + errnoText();
  if (why.empty() && ::fsync(fd) != 0) why = temp + ": fsync: " + errnoText();
  if (::close(fd) != 0 && why.empty()) why = temp + ": close: " + errnoText();
  if (why.empty() && ::rename(temp.c_str(), path.c_str()) != 0) why = path + ": rename: " + errnoText();
  if (!why.empty()) {
    ::unlink(temp.c_str());
    return why;
  }
  // The rename is durable once the folder is synced.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  // A failure here is only a warning: the new file is in place either way.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) {
    logAs(LogLevel::Warn, "accounts", "warning: folder=%s not synced: %s", LogValue(dir).c_str(),
          LogValue(errnoText()).c_str());
  }
  if (dfd >= 0) ::close(dfd);
  return "";
}

}  // namespace

}  // namespace loam::server

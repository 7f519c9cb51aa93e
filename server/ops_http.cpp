// A small strict HTTP/1.1 server for the ops port, on one poll() thread.
//
// Why not cpp-httplib (0.11.4, Debian's, used before): it cannot bound what a client
// makes it hold. Its payload limit answers 413 only after reading and discarding every
// announced byte (a 1 GiB Content-Length keeps a worker reading); its timeouts are per
// recv(), so a client sending a header byte every few seconds holds a worker for ever,
// and there is no deadline for a whole request; it has no cap on connections, in all
// or per address, and each connection occupies one of its pool's threads, so 4 to 8
// slowloris sockets froze /healthz, /readyz, /metrics and /admin. The endpoint needs
// only GET of four paths and POST /admin, so a server that never blocks (non-blocking
// sockets, one poll loop, fixed buffers per connection, one request per connection)
// is less code than working around the library. cpp-httplib stays for the clients
// (Agones, tests).
#include "server/ops_http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <future>
#include <list>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "server/log.h"

namespace loam::server {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTextPlain = "text/plain; charset=utf-8";

/// One client connection, from accept to close.
struct Connection {
  /// Where a connection is in its single request.
  enum class Phase {
    Reading,   ///< head and body arriving (until kOpsRequestDeadline)
    Waiting,   ///< POST /admin queued; the step thread's reply is awaited
    Writing,   ///< the answer is being sent (until kOpsWriteDeadline)
    Draining,  ///< answer sent and write side shut; unread input is discarded before close
  };
  int fd = -1;
  std::string address;  ///< remote IPv4 address (no port)
  Clock::time_point accepted;
  Clock::time_point deadline;  ///< of the current phase
  Phase phase = Phase::Reading;
  std::string in;        ///< bytes read so far (at most head + admin body limits)
  std::size_t headEnd = 0;    ///< bytes of the head once parsed (0 = not yet)
  std::size_t bodyBytes = 0;  ///< Content-Length of an accepted POST /admin
  std::string out;       ///< the answer
  std::size_t sent = 0;  ///< bytes of out written
  std::future<AdminReply> reply;
  std::size_t drained = 0;  ///< bytes discarded while Draining
};

/// The parsed head of a request.
struct Head {
  std::string_view method, path;
  std::optional<std::uint64_t> contentLength;
  bool transferEncoding = false;
  std::string_view authorization;
};

/// A reason phrase for the statuses this server sends.
const char* reasonOf(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string answer(int status, std::string_view contentType, std::string_view body, std::string_view extra = {}) {
  std::string s = "HTTP/1.1 " + std::to_string(status) + " " + reasonOf(status) + "\r\nContent-Type: ";
  s += contentType;
  s += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  s += extra;
  s += "\r\n";
  s += body;
  return s;
}

bool isTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// Parses the head (without its final blank line). Returns 0, or the status to refuse
/// it with.
int parseHead(std::string_view head, Head& h) {
  std::size_t eol = head.find("\r\n");
  std::string_view requestLine = head.substr(0, eol);
  std::size_t sp1 = requestLine.find(' ');
  std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : requestLine.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || requestLine.find(' ', sp2 + 1) != std::string_view::npos) return 400;
  h.method = requestLine.substr(0, sp1);
  std::string_view target = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = requestLine.substr(sp2 + 1);
  if (h.method.empty() || !std::all_of(h.method.begin(), h.method.end(), isTokenChar)) return 400;
  if (target.size() > 1024) return 414;
  if (target.empty() || target[0] != '/') return 400;
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return 400;
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return version.starts_with("HTTP/") ? 505 : 400;
  h.path = target.substr(0, target.find('?'));

  std::size_t headers = 0;
  std::size_t at = eol == std::string_view::npos ? head.size() : eol + 2;
  while (at < head.size()) {
    std::size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (++headers > kOpsMaxHeaders) return 431;
    std::size_t colon = line.find(':');
    // No obsolete line folding, no space before the colon (RFC 9112 5.1 and 5.2).
    if (colon == std::string_view::npos || colon == 0) return 400;
    std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), isTokenChar)) return 400;
    std::string_view value = line.substr(colon + 1);
    for (char c : value) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return 400;
    }
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (equalsIgnoreCase(name, "Content-Length")) {
      std::uint64_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      // One Content-Length of digits only: a repeated or odd one is how requests are smuggled.
      if (h.contentLength || value.empty() || ec != std::errc{} || p != value.data() + value.size()) return 400;
      h.contentLength = n;
    } else if (equalsIgnoreCase(name, "Transfer-Encoding")) {
      h.transferEncoding = true;
    } else if (equalsIgnoreCase(name, "Authorization")) {
      h.authorization = value;
    }
  }
  return 0;
}

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

struct OpsHttpServer::Impl {
  const OpsBoard& board;
  std::string adminToken;  ///< never logged
  AdminQueue* adminQueue = nullptr;
  AdminRateLimiter limiter;
  int listenFd = -1;
  int wakeRead = -1, wakeWrite = -1;  ///< a pipe: stop() writes, the loop wakes
  std::uint16_t boundPort = 0;
  std::list<Connection> connections;  ///< oldest first
  std::uint64_t evicted = 0;          ///< connections closed to make room, since start
  Clock::time_point lastEvictionLog{};
  std::thread thread;

  explicit Impl(const OpsBoard& b) : board(b) {}
  ~Impl() {
    for (Connection& c : connections) closeFd(c.fd);
    closeFd(listenFd);
    closeFd(wakeRead);
    closeFd(wakeWrite);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  bool adminEnabled() const { return !adminToken.empty() && adminQueue != nullptr; }

  ProcessSample sample() const {
    ProcessSample p;
    p.phase = board.phase();
    p.uptimeSeconds = board.uptimeSeconds();
    p.residentBytes = residentMemoryBytes();
    return p;
  }

  void respond(Connection& c, int status, std::string_view body, std::string_view contentType = kTextPlain,
               std::string_view extra = {}) {
    c.out = answer(status, contentType, body, extra);
    c.sent = 0;
    c.phase = Connection::Phase::Writing;
    c.deadline = Clock::now() + kOpsWriteDeadline;
    c.in.clear();
    c.in.shrink_to_fit();
  }

  void serveGet(Connection& c, std::string_view path) {
    if (path == "/healthz") {
      HttpAnswer a = healthAnswer(board.phase(), board.secondsSinceBeat());
      respond(c, a.status, a.body);
    } else if (path == "/readyz") {
      HttpAnswer a = readyAnswer(board.phase());
      respond(c, a.status, a.body);
    } else if (path == "/metrics") {
      respond(c, 200, formatPrometheus(board.identity(), board.read(), sample()), kPrometheusContentType);
    } else if (path == "/status") {
      respond(c, 200, formatStatusJson(board.identity(), board.read(), sample()), "application/json");
    } else if (path == "/admin" && adminEnabled()) {
      respond(c, 405, "POST only\n", kTextPlain, "Allow: POST\r\n");
    } else {
      respond(c, 404, "not found\n");
    }
  }

  /// Decides on a complete head: an answer now, or (POST /admin, authorised) the
  /// number of body bytes to wait for in c.bodyBytes.
  void onHead(Connection& c, const Head& h) {
    const bool isAdmin = h.path == "/admin" && adminEnabled();
    if (h.method == "GET") {
      // No body on GET: whatever a client announces is refused unread.
      if (h.transferEncoding || h.contentLength.value_or(0) != 0) return respond(c, 413, "GET takes no body\n");
      return serveGet(c, h.path);
    }
    if (h.method != "POST") return respond(c, 405, "GET or POST /admin only\n", kTextPlain, "Allow: GET, POST\r\n");
    // Too big is said before where to: nothing this server takes is larger.
    if (h.contentLength.value_or(0) > kOpsMaxAdminBodyBytes) {
      return respond(c, 413, "an admin command is at most " + std::to_string(kOpsMaxAdminBodyBytes) + " bytes\n");
    }
    if (!isAdmin) return respond(c, 404, "not found\n");
    if (h.transferEncoding) return respond(c, 411, "send the command with Content-Length, not chunked\n");
    if (!h.contentLength) return respond(c, 411, "Content-Length required\n");
    // The token is checked before the body is read.
    const auto now = AdminRateLimiter::Clock::now();
    if (limiter.blocked(c.address, now)) {
      logAs(LogLevel::Warn, "admin", "who=%s refused: rate limited", c.address.c_str());
      return respond(c, 429, "too many failed attempts; try again in a minute\n");
    }
    constexpr std::string_view prefix = "Bearer ";
    std::string_view auth = h.authorization;
    bool authorised = auth.size() > prefix.size() && auth.substr(0, prefix.size()) == prefix &&
                      tokensEqual(auth.substr(prefix.size()), adminToken);
    if (!authorised) {
      limiter.failure(c.address, now);
      logAs(LogLevel::Warn, "admin", "who=%s refused: bad or missing token", c.address.c_str());
      return respond(c, 401, "unauthorised\n", kTextPlain, "WWW-Authenticate: Bearer\r\n");
    }
    c.bodyBytes = static_cast<std::size_t>(*h.contentLength);
  }

  void onAdminBody(Connection& c) {
    std::string line = c.in.substr(c.headEnd, c.bodyBytes);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.find('\n') != std::string::npos || line.size() > 1024) {
      return respond(c, 400, "one command line of at most 1024 bytes\n");
    }
    c.reply = adminQueue->submit(c.address, std::move(line));
    c.phase = Connection::Phase::Waiting;
    c.deadline = Clock::now() + kOpsAdminWait;
  }

  void pollAdmin(Connection& c, Clock::time_point now) {
    if (c.reply.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      if (now >= c.deadline) respond(c, 503, "server did not answer in time\n");
      return;
    }
    AdminReply r;
    try {
      r = c.reply.get();
    } catch (const std::future_error&) {  // the server stopped before running it
      return respond(c, 503, "server stopping\n");
    }
    respond(c, r.ok ? 200 : 400, r.text + "\n");
  }

  /// Reads what is there; parses the head and the body once complete.
  /// Returns false when the connection is to be closed now.
  bool onReadable(Connection& c) {
    char buf[4096];
    const std::size_t cap = kOpsMaxHeadBytes + 4 + kOpsMaxAdminBodyBytes;
    for (;;) {
      std::size_t room = std::min(sizeof buf, cap - c.in.size());
      if (room == 0) break;
      ssize_t n = ::recv(c.fd, buf, room, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) return false;  // the client went away before finishing its request
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    if (c.headEnd == 0) {
      std::size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos || end > kOpsMaxHeadBytes) {
        if (c.in.size() > kOpsMaxHeadBytes + 3) respond(c, 431, "request head too large\n");
        return true;
      }
      c.headEnd = end + 4;
      Head h;
      if (int status = parseHead(std::string_view(c.in).substr(0, end), h); status != 0) {
        respond(c, status, "bad request\n");
        return true;
      }
      onHead(c, h);
      if (c.phase != Connection::Phase::Reading) return true;
    }
    if (c.in.size() >= c.headEnd + c.bodyBytes) onAdminBody(c);
    return true;
  }

  /// Writes what the socket takes. Returns false when the connection is to be closed.
  bool onWritable(Connection& c) {
    while (c.sent < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;
    }
    // Sent: shut the write side and discard what the client still sends for a moment,
    // so closing with unread input does not reset the connection under the answer.
    ::shutdown(c.fd, SHUT_WR);
    c.out.clear();
    c.out.shrink_to_fit();
    c.phase = Connection::Phase::Draining;
    c.deadline = Clock::now() + std::chrono::milliseconds(500);
    return true;
  }

  /// Discards input after the answer. Returns false when done (EOF, error or enough).
  bool onDrain(Connection& c) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.drained += static_cast<std::size_t>(n);
        if (c.drained > (std::size_t{1} << 20)) return false;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }

  void evict(std::list<Connection>::iterator it) {
    closeFd(it->fd);
    connections.erase(it);
    ++evicted;
    auto now = Clock::now();
    if (now - lastEvictionLog > std::chrono::seconds(10)) {
      lastEvictionLog = now;
      logAs(LogLevel::Warn, "http",
            "connection limit reached (%zu in all, %zu per address): closed the oldest; evicted=%llu since start",
            kOpsMaxConnections, kOpsMaxConnectionsPerAddress, static_cast<unsigned long long>(evicted));
    }
  }

  void acceptAll() {
    for (;;) {
      sockaddr_in peer{};
      socklen_t len = sizeof peer;
      int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of descriptors: try again on the next wake
      }
      char text[INET_ADDRSTRLEN] = "?";
      ::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
      std::string address = text;
      // Over a cap, the oldest connection (of that address, else of all) makes room:
      // a probe always gets in, and a flood only churns its own sockets.
      std::size_t fromAddress = 0;
      auto oldestOfAddress = connections.end();
      for (auto it = connections.begin(); it != connections.end(); ++it) {
        if (it->address != address) continue;
        if (fromAddress++ == 0) oldestOfAddress = it;
      }
      if (fromAddress >= kOpsMaxConnectionsPerAddress) {
        evict(oldestOfAddress);
      } else if (connections.size() >= kOpsMaxConnections) {
        evict(connections.begin());
      }
      Connection& c = connections.emplace_back();
      c.fd = fd;
      c.address = std::move(address);
      c.accepted = Clock::now();
      c.deadline = c.accepted + kOpsRequestDeadline;
    }
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<std::list<Connection>::iterator> owners;
    for (;;) {
      fds.clear();
      owners.clear();
      fds.push_back({wakeRead, POLLIN, 0});
      fds.push_back({listenFd, POLLIN, 0});
      Clock::time_point now = Clock::now();
      Clock::time_point next = now + std::chrono::seconds(1);
      for (auto it = connections.begin(); it != connections.end(); ++it) {
        next = std::min(next, it->deadline);
        short events = 0;
        switch (it->phase) {
          case Connection::Phase::Reading:
          case Connection::Phase::Draining:
            events = POLLIN;
            break;
          case Connection::Phase::Waiting:
            next = std::min(next, now + std::chrono::milliseconds(5));  // the reply is a future, not a descriptor
            break;
          case Connection::Phase::Writing:
            events = POLLOUT;
            break;
        }
        // A waiting connection is left out of poll (fd -1): a client that hung up would
        // otherwise wake it at once, over and over, until the reply.
        fds.push_back({it->phase == Connection::Phase::Waiting ? -1 : it->fd, events, 0});
        owners.push_back(it);
      }
      auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
      int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(waitMs + 1, 0, 1000)));
      if (ready < 0 && errno != EINTR) {
        logAs(LogLevel::Error, "http", "poll failed: %s; the ops endpoint stops", std::strerror(errno));
        return;
      }
      if (fds[0].revents != 0) return;  // stop()
      now = Clock::now();
      for (std::size_t i = 0; i < owners.size(); ++i) {
        Connection& c = *owners[i];
        const short got = fds[i + 2].revents;
        bool keep = true;
        switch (c.phase) {
          case Connection::Phase::Reading:
            if (got != 0) keep = onReadable(c);
            if (keep && c.phase == Connection::Phase::Reading && now >= c.deadline) {
              respond(c, 408, "request not complete in time\n");
            }
            break;
          case Connection::Phase::Waiting:
            pollAdmin(c, now);
            break;
          case Connection::Phase::Writing:
            if (got != 0) keep = onWritable(c);
            if (keep && c.phase == Connection::Phase::Writing && now >= c.deadline) keep = false;
            break;
          case Connection::Phase::Draining:
            if (got != 0) keep = onDrain(c);
            if (now >= c.deadline) keep = false;
            break;
        }
        // An answer made in this pass is written at once when the socket takes it.
        if (keep && c.phase == Connection::Phase::Writing && c.sent == 0) keep = onWritable(c);
        if (!keep) {
          closeFd(c.fd);
          connections.erase(owners[i]);
        }
      }
      if (fds[1].revents != 0) acceptAll();
    }
  }
};

OpsHttpServer::OpsHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OpsHttpServer::~OpsHttpServer() { stop(); }

std::uint16_t OpsHttpServer::port() const noexcept { return impl_->boundPort; }

sim::Result<std::unique_ptr<OpsHttpServer>> OpsHttpServer::start(const std::string& address, std::uint16_t port,
                                                                  const OpsBoard& board, std::string adminToken,
                                                                  AdminQueue* adminQueue) {
  auto impl = std::make_unique<Impl>(board);
  Impl* im = impl.get();
  im->adminToken = std::move(adminToken);
  im->adminQueue = adminQueue;
  const std::string where = address + ":" + std::to_string(port);
  auto cannot = [&](const std::string& why) {
    return sim::makeError("cannot listen for HTTP on " + where + " (TCP): " + why);
  };

  addrinfo hints{};
  hints.ai_family = AF_INET;  // as the UDP side (ENet 1.3 is IPv4 only)
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return cannot("not an address of this machine");
  }
  sockaddr_in bindAddress{};
  std::memcpy(&bindAddress, found->ai_addr, sizeof bindAddress);
  ::freeaddrinfo(found);
  bindAddress.sin_port = htons(port);

  im->listenFd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (im->listenFd < 0) return cannot(std::strerror(errno));
  // SO_REUSEADDR for a quick restart; never SO_REUSEPORT, which would let a second
  // server share the port silently.
  int yes = 1;
  ::setsockopt(im->listenFd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(im->listenFd, reinterpret_cast<sockaddr*>(&bindAddress), sizeof bindAddress) != 0 ||
      ::listen(im->listenFd, 64) != 0) {
    return cannot("in use or not an address of this machine");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(im->listenFd, reinterpret_cast<sockaddr*>(&bound), &len);
  im->boundPort = ntohs(bound.sin_port);
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) return cannot(std::strerror(errno));
  im->wakeRead = pipeFds[0];
  im->wakeWrite = pipeFds[1];

  im->thread = std::thread([im] { im->run(); });
  logAs(LogLevel::Info, "http", "serving /healthz /readyz /metrics /status on address=%s port=%u", address.c_str(),
        static_cast<unsigned>(im->boundPort));
  return std::unique_ptr<OpsHttpServer>(new OpsHttpServer(std::move(impl)));
}

void OpsHttpServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  char one = 1;
  ssize_t ignored = ::write(impl_->wakeWrite, &one, 1);
  (void)ignored;
  impl_->thread.join();
  for (Connection& c : impl_->connections) closeFd(c.fd);
  impl_->connections.clear();
  closeFd(impl_->listenFd);  // the port is free once stop() returns
}

}  // namespace loam::server

// Helpers for tests that run a Loam binary (loam-server, loam-client) as a child
// process: the binary path, free loopback ports, a temp folder, and a child whose
// stdout and stderr go to a log file. Test code: failures REQUIRE (doctest).
#pragma once

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace loam::test {

/// The binary to run: the environment variable envVar when set, else compiledPath
/// (the build's path, passed as a compile definition).
inline std::string binaryPath(const char* envVar, const char* compiledPath) {
  if (const char* env = std::getenv(envVar)) return env;
  return compiledPath;
}

/// A socket of type (SOCK_DGRAM or SOCK_STREAM) bound to an ephemeral port on
/// 127.0.0.1, closed with the object (keep it to hold the port taken).
struct LoopbackSocket {
  int fd = -1;
  int port = 0;

  explicit LoopbackSocket(int type) {
    fd = ::socket(AF_INET, type, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
  ~LoopbackSocket() {
    if (fd >= 0) ::close(fd);
  }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;
};

/// A UDP port that was free a moment ago on 127.0.0.1.
inline int freeUdpPort() { return LoopbackSocket(SOCK_DGRAM).port; }

/// A TCP port that was free a moment ago on 127.0.0.1 (nobody listens on it).
inline int freeTcpPort() { return LoopbackSocket(SOCK_STREAM).port; }

/// A fresh folder <temp>/<prefix><pid>_<n>, removed with the object.
struct TempDir {
  std::filesystem::path path;

  explicit TempDir(const std::string& prefix) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           (prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// The whole file as text ("" when it cannot be read).
inline std::string readText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// How many times needle occurs in text (overlapping matches counted).
inline std::size_t countOf(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// A running child process whose stdout and stderr go to logPath; killed (SIGKILL)
/// with the object unless it was already reaped.
struct Process {
  using Clock = std::chrono::steady_clock;

  pid_t pid = -1;
  std::filesystem::path logPath;
  bool reaped = false;
  Clock::time_point exitSeenAt{};  ///< when wait() or running() saw it end

  /// Starts bin with args. setEnv ("NAME=value") comes before the inherited
  /// environment, from which the names in unsetEnv are left out.
  Process(const std::string& bin, const std::vector<std::string>& args, std::filesystem::path log,
          const std::vector<std::string>& setEnv = {}, const std::vector<std::string>& unsetEnv = {})
      : logPath(std::move(log)) {
    std::vector<std::string> argv{bin};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env(setEnv);
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const std::string name = entry.substr(0, entry.find('='));
      if (std::find(unsetEnv.begin(), unsetEnv.end(), name) == unsetEnv.end()) env.push_back(entry);
    }
    // Built before fork: a test with threads must not allocate in the child.
    std::vector<char*> cargv, cenv;
    for (std::string& s : argv) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    for (std::string& s : env) cenv.push_back(s.data());
    cenv.push_back(nullptr);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(120);
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::execve(bin.c_str(), cargv.data(), cenv.data());
      ::_exit(121);  // exec failed
    }
  }
  ~Process() {
    if (!reaped && pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  /// The log so far.
  std::string log() const { return readText(logPath); }

  /// False once the process has ended (reaping it).
  bool running() {
    if (reaped) return false;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      markReaped();
      return false;
    }
    return true;
  }

  /// Waits for the process to end, polling every 10 ms; kills it after timeout.
  /// Returns its exit code, or -1 when it had to be killed or died from a signal.
  int wait(std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        markReaped();
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (Clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        reaped = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  /// Waits until the log contains needle; false on timeout, or when the process
  /// ended without writing it.
  bool waitForLog(const std::string& needle, std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (log().find(needle) != std::string::npos) return true;
      if (!running()) return log().find(needle) != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  void markReaped() {
    reaped = true;
    exitSeenAt = Clock::now();
  }
};

}  // namespace loam::test

// `loam-tool admin`: sends one admin command to loam-server's POST /admin (see
// server/admin.h) and prints the reply.
#include <httplib.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tool/commands.h"

namespace loam::tool {

namespace {

struct AdminArgs {
  std::string server;
  std::string token;
  std::vector<std::string> words;
};

int runAdmin(const AdminArgs& a) {
  std::string token = a.token;
  if (token.empty()) {
    if (const char* t = std::getenv("LOAM_ADMIN_TOKEN")) token = t;
  }
  if (token.empty()) {
    std::fputs("loam-tool admin: no token: give --token T or set LOAM_ADMIN_TOKEN\n", stderr);
    return 2;
  }
  auto colon = a.server.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0) {
    std::fprintf(stderr, "loam-tool admin: --server must be HOST:HTTPPORT, got '%s'\n", a.server.c_str());
    return 2;
  }
  try {
    port = std::stoi(a.server.substr(colon + 1));
  } catch (const std::exception&) {
    port = 0;
  }
  if (port <= 0 || port > 65535) {
    std::fprintf(stderr, "loam-tool admin: bad port in --server '%s'\n", a.server.c_str());
    return 2;
  }
  std::string line;
  for (const std::string& w : a.words) line += (line.empty() ? "" : " ") + w;

  httplib::Client client(a.server.substr(0, colon), port);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  httplib::Headers headers{{"Authorization", "Bearer " + token}};
  auto res = client.Post("/admin", headers, line, "text/plain");
  if (!res) {
    std::fprintf(stderr, "loam-tool admin: cannot reach %s: %s\n", a.server.c_str(),
                 httplib::to_string(res.error()).c_str());
    return 1;
  }
  std::string body = res->body;
  if (res->status == 200) {
    std::fwrite(body.data(), 1, body.size(), stdout);
    return 0;
  }
  if (res->status == 404) body = "remote admin is off on this server (no admin token configured)\n";
  std::fprintf(stderr, "loam-tool admin: refused (HTTP %d): %s", res->status, body.c_str());
  return 1;
}

}  // namespace

void addAdminCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<AdminArgs>();
  CLI::App* cmd = app.add_subcommand("admin", "Send an admin command to a running loam-server (POST /admin)");
  cmd->add_option("--server", args->server, "HOST:HTTPPORT of the server's --http-port endpoint")->required();
  cmd->add_option("--token", args->token, "Admin token (default: LOAM_ADMIN_TOKEN)");
  cmd->add_option("COMMAND", args->words, "players | say TEXT | kick | ban | unban | save | time | weather | stats")
      ->required();
  // Everything after the first positional belongs to the command ("say -hi" too).
  cmd->positionals_at_end(true);
  cmd->footer("Exit codes: 0 ok, 1 refused or unreachable, 2 bad usage.");
  cmd->callback([args, &exitCode] { exitCode = runAdmin(*args); });
}

}  // namespace loam::tool

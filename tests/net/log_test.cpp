// Log values cannot inject: LogValue quotes and escapes what comes from outside
// (fields, quotes, newlines, controls, invalid UTF-8, bidi and zero-width characters)
// while printable UTF-8 stays readable, and a JSON record of a line with such a value
// still has exactly the fields the format string wrote.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/log.h"

namespace {

using loam::server::LogValue;

std::string json(const std::string& msg) {
  std::vector<char> buf(16384);
  std::size_t n = loam::server::formatLogRecord(buf.data(), buf.size(), loam::server::LogFormat::Json, 0,
                                                loam::server::LogLevel::Info, "server", msg.c_str());
  return std::string(buf.data(), n);
}

}  // namespace

TEST_CASE("LogValue leaves plain values alone and quotes the rest") {
  CHECK(std::string(LogValue("alice").c_str()) == "alice");
  CHECK(std::string(LogValue("127.0.0.1:7777").c_str()) == "127.0.0.1:7777");
  CHECK(std::string(LogValue("").c_str()) == "\"\"");
  CHECK(std::string(LogValue("two words").c_str()) == "\"two words\"");
  CHECK(std::string(LogValue("a=b").c_str()) == "\"a=b\"");
  CHECK(std::string(LogValue("say \"hi\"").c_str()) == "\"say \\\"hi\\\"\"");
  CHECK(std::string(LogValue("back\\slash").c_str()) == "\"back\\\\slash\"");
  CHECK(std::string(LogValue("José").c_str()) == "\"José\"");  // UTF-8 is quoted but kept
}

TEST_CASE("LogValue escapes controls, invalid UTF-8, C1, bidi and zero-width characters") {
  CHECK(std::string(LogValue("a\nb").c_str()) == "\"a\\x0ab\"");
  CHECK(std::string(LogValue("x\ry\x01\x7f").c_str()) == "\"x\\x0dy\\x01\\x7f\"");
  CHECK(std::string(LogValue("\xff\xfe").c_str()) == "\"\\xff\\xfe\"");                  // not UTF-8
  CHECK(std::string(LogValue("\xc0\xaf").c_str()) == "\"\\xc0\\xaf\"");                  // overlong '/'
  CHECK(std::string(LogValue("\xc2\x85").c_str()) == "\"\\xc2\\x85\"");                  // C1 NEL
  CHECK(std::string(LogValue("ab\xe2\x80\xaeRTL").c_str()) == "\"ab\\xe2\\x80\\xaeRTL\"");  // U+202E
  CHECK(std::string(LogValue("a\xe2\x80\x8b" "b").c_str()) == "\"a\\xe2\\x80\\x8bb\"");     // U+200B
  CHECK(std::string(LogValue("\xed\xa0\x80").c_str()) == "\"\\xed\\xa0\\x80\"");        // a surrogate
  // Cut at kMaxBytes, marked.
  std::string longValue(LogValue::kMaxBytes + 10, 'x');
  std::string cut = LogValue(longValue).c_str();
  CHECK(cut.size() == LogValue::kMaxBytes + 3);
  CHECK(cut.substr(cut.size() - 4) == "x...");
  // The worst case fits: every byte escaped.
  std::string worst(LogValue::kMaxBytes + 10, '\x01');
  CHECK(std::string(LogValue(worst).c_str()).size() == LogValue::kMaxBytes * 4 + 5);
}

TEST_CASE("a name cannot add fields to a JSON log record") {
  const std::string evil = "bob admin=true level=error\" x=\"1";
  std::string line = json(std::string("player name=") + LogValue(evil).c_str() + " joined id=7");
  INFO(line);
  CHECK(line.find("\"admin\"") == std::string::npos);
  CHECK(line.find("\"x\"") == std::string::npos);
  CHECK(line.find("\"level\":\"info\"") != std::string::npos);
  CHECK(line.find("\"id\":7") != std::string::npos);
  CHECK(line.find("\"name\":\"bob admin=true") != std::string::npos);
}

namespace {
std::string gSunk;
void sink(const char* line) noexcept { gSunk = line; }
}  // namespace

TEST_CASE("the host's lines go to the installed sink, values escaped the same way") {
  loam::net::setHostLogSink(&sink);
  loam::net::hostLog("peer 1 rejected: NameTaken reason=%s",
                     loam::net::LogValue("a player called \"x y=1\" is connected").c_str());
  loam::net::setHostLogSink(nullptr);
  CHECK(gSunk == "peer 1 rejected: NameTaken reason=\"a player called \\\"x y=1\\\" is connected\"");
  std::string line = json(gSunk);
  INFO(line);
  CHECK(line.find("\"y\"") == std::string::npos);
  CHECK(line.find("\"reason\":\"a player called") != std::string::npos);
}

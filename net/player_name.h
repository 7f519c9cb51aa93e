// Player names: the one set of rules the server applies at Hello and the client
// before it connects, so a name means one player in chat, logs and admin commands.
// The rules are a fixed table here rather than a Unicode library's categories, so
// every build of client and server gives the same verdict (docs/PROTOCOL.md, Names).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "net/protocol.h"

namespace loam::net {

/// A name holds 1..kMaxNameCodePoints code points after trimming (and at most
/// sim::kMaxNameBytes bytes of UTF-8, the wire's limit).
inline constexpr std::size_t kMaxNameCodePoints = 24;

/// The verdict on a name.
struct NameCheck {
  RejectCode code = RejectCode::None;  ///< None: the name is good; else BadName or NameReserved
  std::string why;                     ///< the rule it breaks ("byte 3 is not valid UTF-8"); "" when good
  std::string name;                    ///< the trimmed name (when good)
  bool ok() const noexcept { return code == RejectCode::None; }
};

/// Checks raw against the name rules: valid UTF-8 (no overlong forms, surrogates or
/// code points past U+10FFFF); leading and trailing ASCII spaces trimmed; inside, single
/// ASCII spaces only; no C0 or C1 controls, DEL, bidi embeddings, overrides, isolates or
/// marks, zero-width or other default-ignorable characters, other spaces, private-use
/// or noncharacters, U+FFFD; no combining mark first or more than two in a row;
/// 1..kMaxNameCodePoints code points; not a reserved word (isReservedName). Any thread;
/// allocates the strings of the result.
NameCheck checkPlayerName(std::string_view raw);

/// The form names are compared in for uniqueness, accounts and reserved words: ASCII
/// letters lower-cased, every other byte kept (so "Ann" and "ANN" are one name, "Änn"
/// and "änn" are two). Allocates.
std::string foldName(std::string_view name);

/// True for names the server keeps for itself or that admin commands would read
/// otherwise: server, admin, console, system, loam and the like (compared folded), a
/// name of ASCII digits only (`kick 7` means id 7), a name starting with '#' (the id
/// sigil). Expects a trimmed name.
bool isReservedName(std::string_view name);

}  // namespace loam::net

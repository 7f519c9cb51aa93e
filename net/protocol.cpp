#include "net/protocol.h"

namespace loam::net {

const char* rejectCodeName(RejectCode code) noexcept {
  switch (code) {
    case RejectCode::None: return "none";
    case RejectCode::ProtocolMismatch: return "protocol mismatch";
    case RejectCode::ServerFull: return "server full";
    case RejectCode::BadHello: return "bad hello";
    case RejectCode::WorldMismatch: return "world mismatch";
    case RejectCode::Malformed: return "malformed messages";
    case RejectCode::Flooding: return "flooding";
    case RejectCode::Timeout: return "timed out";
    case RejectCode::TooSlow: return "link too slow";
    case RejectCode::ShuttingDown: return "server shutting down";
    case RejectCode::Kicked: return "kicked";
    case RejectCode::Banned: return "banned";
    case RejectCode::BadName: return "bad name";
    case RejectCode::NameTaken: return "name taken";
    case RejectCode::NameReserved: return "name reserved";
    case RejectCode::AuthRequired: return "account key required";
    case RejectCode::AuthFailed: return "authentication failed";
    case RejectCode::AuthRateLimited: return "too many failed authentications";
    case RejectCode::AddressLimit: return "too many connections from this address";
    case RejectCode::JoinRate: return "this address connects too often: try again shortly";
  }
  return "unknown";
}

}  // namespace loam::net

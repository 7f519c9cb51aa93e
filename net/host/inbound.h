// Inbound: everything peers send the server host. ENet events (connect, disconnect,
// receive) become verified ClientMessages that are checked against the session's
// phase, its rate limit and the protocol's ranges (docs/PROTOCOL.md), then handled:
// Hello (admission, Welcome), WorldReady, CellHashRequest, Inputs (into the input
// queue) and Action (decoded into a pending command). Bad input is dropped and
// counted, never asserted. Internal to ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <enet/enet.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "net/host/host_core.h"
#include "net/server_host.h"

namespace loam::net::host {

class Inbound {
 public:
  explicit Inbound(HostCore& core) noexcept : core_(core) {}

  /// Handles ENet events: with timeoutMs > 0 waits up to that long for the first one,
  /// then takes what is already there; at most kMaxEventsPerPump per call, so a flood
  /// cannot pin the loop.
  void pump(int timeoutMs);

  /// Installs the admission check (see ServerHost::setAdmissionFilter).
  void setAdmissionFilter(AdmissionFilter filter) { admission_ = std::move(filter); }
  /// The id the next admitted player gets (ids are never reused while the host runs).
  void setNextPlayerId(std::uint32_t id) noexcept { nextPlayerId_ = id; }

 private:
  void handle(const ENetEvent& ev);
  void onConnect(ENetPeer* peer, std::uint32_t data);
  void onReceive(ENetPeer* peer, std::uint8_t channel, ENetPacket* packet);
  /// Counts one message against the peer's rate; false = drop it (flooding).
  bool withinRate(Session& s);
  /// Handles one verified message. False = malformed (content or phase).
  bool dispatch(Session& s, const wire::ClientMessage& msg, std::uint8_t channel);
  bool onHello(Session& s, const wire::Hello& hello);
  /// After a good Hello with auth on: the AuthChallenge (-> Challenged), a Reject, or
  /// admit (docs/PROTOCOL.md, Accounts).
  void challengeOrAdmit(Session& s);
  bool onAuthProof(Session& s, const wire::AuthProof& proof);
  /// Welcome (a player id) -> Welcomed; swarm bots on to Joining.
  void admit(Session& s);
  bool onWorldReady(Session& s, const wire::WorldReady& ready);
  bool onCellHashRequest(Session& s);
  bool onInputs(Session& s, const wire::Inputs& msg);
  bool onAction(Session& s, const wire::Action& msg);
  /// Queues a decoded action for the step, or refuses it (RateLimited, answered) when
  /// the session's queue is full.
  void queueAction(Session& s, const wire::Action& msg, PendingAction a);
  bool onCellsDropped(Session& s, const wire::CellsDropped& msg);
  bool onColumnHashes(Session& s, const wire::ColumnHashes& msg);
  std::size_t playersAdmitted() const noexcept;

  HostCore& core_;
  AdmissionFilter admission_;  ///< bans (admin console); empty = admit all
  std::uint32_t nextPlayerId_ = 1;
  std::vector<std::uint8_t> generatedCellsMessage_;  ///< GeneratedCellHashes, built at the first request
  std::vector<PendingAction> decodedActions_;        ///< onInputs' scratch: Inputs.actions, decoded
};

}  // namespace loam::net::host

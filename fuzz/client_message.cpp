// Client messages on the server: the bytes of one ENet packet through what
// net/host/inbound.cpp does with them, in its order (a real ServerHost takes packets
// only from ENet sockets): verifyClientMessage at kMaxClientPacketBytes, then per
// body Hello's name rules (checkPlayerName, foldName), Inputs (fromWire of every
// record, decodeAction of its actions), Action (decodeAction), AuthProof and JoinProgress fields; then the
// decoded inputs and action go through one simulation step as player 1's commands,
// as the host's step batch does.
#include <vector>

#include "fuzz/fuzz_support.h"
#include "net/player_name.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/step/step.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace loam;
  const wire::ClientMessage* msg = net::verifyClientMessage(fuzz::bytesOf(data, size), net::kMaxClientPacketBytes);
  if (msg == nullptr || msg->body() == nullptr) return 0;
  std::vector<sim::Command> commands;
  const sim::PlayerId player{1};
  switch (msg->body_type()) {
    case wire::ClientBody::NONE: return 0;
    case wire::ClientBody::Hello: {
      const wire::Hello& hello = *msg->body_as_Hello();
      if (hello.name() == nullptr || hello.name()->size() > sim::kMaxNameBytes) return 0;
      const net::NameCheck check = net::checkPlayerName(hello.name()->string_view());
      if (check.ok()) {
        (void)net::foldName(check.name);
        (void)sim::PlayerName::from(check.name);
      }
      if (const auto* key = hello.public_key()) (void)key->size();
      return 0;
    }
    case wire::ClientBody::WorldReady: (void)msg->body_as_WorldReady()->generated_hash(); return 0;
    case wire::ClientBody::CellHashRequest: return 0;
    case wire::ClientBody::Inputs: {
      const auto* list = msg->body_as_Inputs()->inputs();
      if (list != nullptr && list->size() > net::kMaxInputsPerMessage) return 0;
      if (list != nullptr) {
        for (const wire::InputRec* r : *list) {
          sim::InputCommand in{net::fromWire(*r)};
          commands.push_back(sim::Command{player, in.input.sequence, in});
        }
      }
      // The unanswered actions it carries (protocol 9), decoded as a standalone Action is.
      if (const auto* actions = msg->body_as_Inputs()->actions()) {
        if (actions->size() > net::kMaxActionsPerInputs) return 0;
        for (const wire::Action* a : *actions) {
          sim::CommandBody body;
          if (!net::decodeAction(*a, body)) return 0;
          commands.push_back(sim::Command{player, 1, body});
        }
      }
      break;
    }
    case wire::ClientBody::Action: {
      sim::CommandBody body;
      if (!net::decodeAction(*msg->body_as_Action(), body)) return 0;
      commands.push_back(sim::Command{player, 1, body});
      break;
    }
    case wire::ClientBody::AuthProof:
      if (const auto* sig = msg->body_as_AuthProof()->signature()) (void)sig->size();
      return 0;
    case wire::ClientBody::JoinProgress: (void)msg->body_as_JoinProgress()->received_bytes(); return 0;
    case wire::ClientBody::CellsDropped:
      if (const auto* cells = msg->body_as_CellsDropped()->cells())
        for (const wire::CellRef* c : *cells) (void)sim::cellKey(sim::CellCoord{c->x(), c->z()});
      return 0;
    case wire::ClientBody::ColumnHashes:
      if (const auto* columns = msg->body_as_ColumnHashes()->columns()) {
        if (columns->size() > net::kMaxColumnHashes) return 0;
        const sim::WorldBounds bounds = fuzz::baseState().world.bounds();
        for (const wire::ColumnHashRec* c : *columns)
          (void)(bounds.containsColumn(c->x(), c->z()) && sim::cellOfColumn({c->x(), c->z()}).x == 0);
      }
      return 0;
    default:
      // A message added to the schema since: give it its server decoders here. (No
      // -Wswitch error, so a schema change never breaks the fuzz build.)
      return 0;
  }
  sim::SimState state = fuzz::baseState();
  (void)sim::step(state, commands);
  return 0;
}

// capRetransmitTimeouts on real ENet peers: which cap each stage of a connection gets,
// and that ENet's next retransmission check comes forward with it.
#include <doctest/doctest.h>

#include <enet/enet.h>

#include "net/enet_support.h"

using namespace loam;

namespace {

ENetOutgoingCommand& firstInFlight(ENetPeer& peer) {
  REQUIRE(!enet_list_empty(&peer.sentReliableCommands));
  return *reinterpret_cast<ENetOutgoingCommand*>(enet_list_begin(&peer.sentReliableCommands));
}

/// A client host whose peer has sent its CONNECT to a port nobody answers.
struct Connecting {
  net::EnetGuard guard;
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;

  Connecting() {
    REQUIRE(guard.ok());
    host = enet_host_create(nullptr, 1, 2, 0, 0);
    REQUIRE(host);
    ENetAddress to{};
    enet_address_set_host(&to, "127.0.0.1");
    to.port = 9;  // discard: nothing answers
    peer = enet_host_connect(host, &to, 2, 0);
    REQUIRE(peer);
    enet_host_flush(host);
  }
  ~Connecting() {
    enet_peer_reset(peer);
    enet_host_destroy(host);
  }
};

}  // namespace

TEST_CASE("a CONNECT in flight is resent after 250 ms, not ENet's 500 ms and doubling") {
  Connecting c;
  ENetOutgoingCommand& connect = firstInFlight(*c.peer);
  CHECK(connect.roundTripTimeout == 500);  // ENet's default round trip, no variance yet
  connect.roundTripTimeout = 4000;         // as after three losses
  c.peer->nextTimeout = connect.sentTime + 4000;
  net::capRetransmitTimeouts(*c.peer, false);
  CHECK(connect.roundTripTimeout == 250);
  CHECK(c.peer->nextTimeout == connect.sentTime + 250);
}

TEST_CASE("a joining player's messages are resent after half a round trip (1.25 when larger than a datagram), "
          "a playing one's after about two") {
  Connecting c;
  ENetOutgoingCommand& command = firstInFlight(*c.peer);
  // What ENet holds after its first round-trip sample of 600 ms: the variance is half.
  c.peer->state = ENET_PEER_STATE_CONNECTED;
  c.peer->roundTripTime = 600;
  c.peer->roundTripTimeVariance = 300;
  command.roundTripTimeout = 600 + 4 * 300;
  c.peer->nextTimeout = command.sentTime + command.roundTripTimeout;

  net::capRetransmitTimeouts(*c.peer, true);
  CHECK(command.roundTripTimeout == 300);  // a small command: a second copy half a round trip on
  CHECK(c.peer->nextTimeout == command.sentTime + 300);

  command.fragmentLength = 1201;  // more than a datagram: a copy costs more than it saves
  command.roundTripTimeout = 600 + 4 * 300;
  c.peer->nextTimeout = command.sentTime + command.roundTripTimeout;
  net::capRetransmitTimeouts(*c.peer, true);
  CHECK(command.roundTripTimeout == 750);
  CHECK(c.peer->nextTimeout == command.sentTime + 750);

  command.roundTripTimeout = 8000;
  c.peer->nextTimeout = command.sentTime + 8000;
  net::capRetransmitTimeouts(*c.peer, false);
  CHECK(command.roundTripTimeout == 2000);  // 2 x 600 + 4 x 300, at most 2 s
  CHECK(c.peer->nextTimeout == command.sentTime + 2000);

  // A shorter timeout is left alone, and so is an earlier check.
  command.roundTripTimeout = 300;
  c.peer->nextTimeout = command.sentTime + 100;
  net::capRetransmitTimeouts(*c.peer, true);
  CHECK(command.roundTripTimeout == 300);
  CHECK(c.peer->nextTimeout == command.sentTime + 100);

  // On a fast link the floor keeps resends from running ahead of the acknowledgements.
  c.peer->roundTripTime = 2;
  c.peer->roundTripTimeVariance = 1;
  command.roundTripTimeout = 1000;
  net::capRetransmitTimeouts(*c.peer, true);
  CHECK(command.roundTripTimeout == 100);
  command.fragmentLength = 0;
  command.roundTripTimeout = 1000;
  net::capRetransmitTimeouts(*c.peer, true);
  CHECK(command.roundTripTimeout == 50);
  c.peer->state = ENET_PEER_STATE_CONNECTING;  // so the reset below sends nothing odd
}

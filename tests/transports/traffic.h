// Traffic for transport tests: deterministic payloads that sender and receiver generate
// independently, an all-peers exchange of many message sizes through Channel, and a raw stream
// check of the Link alignment rule.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/base/status.h"
#include "transports/transport.h"

namespace weft::test {

// The bytes of message `index` from rank `from` to rank `to`.
void fillPayload(int from, int to, size_t index, void* data, size_t bytes);

// Message sizes from empty to several MiB, with odd ones between.
std::vector<size_t> mixedSizes();

// A TransportContext for tests: fixed tag and secret, deadline in deadlineMs.
TransportContext testContext(int rank, int nranks,
                             std::function<Status(const Blob&, std::vector<Blob>*)> allGather,
                             int64_t deadlineMs = 20'000);

// Sends sizes.size() messages to every peer and receives as many from each, all at once in one
// progress loop, and checks every byte. Odd-numbered receives go through a sink that checks the
// peek alignment rule.
Status exchangeMessages(const TransportContext& ctx, const std::vector<int>& peers,
                        const std::vector<std::unique_ptr<Link>>& links,
                        const std::vector<size_t>& sizes);

// A raw byte stream of `bytes` in odd-sized writes; the reader mixes read() with peek/consume of
// odd sizes and checks content and (address - stream position) % 8 == 0 on every peek.
Status sendRawStream(Link& link, int from, int to, size_t bytes, Deadline deadline);
Status receiveRawStream(Link& link, int from, int to, size_t bytes, Deadline deadline);

// Whole rank bodies over a transport's connect function (ctx from testContext; each ends in an
// all-gather so that nobody closes before everyone is done reading):
// ranks 0 and 1 connect, and rank 0 sends rank 1 a raw stream of `bytes`;
Status rawStreamBetweenTwo(const TransportContext& ctx, ConnectFn connect, size_t bytes);
// of 3 ranks, 1 and 2 connect and exchange a few sizes, and rank 0, with no peers, still joins.
Status rankWithoutPeers(const TransportContext& ctx, ConnectFn connect);

// The two halves of "a closed peer delivers what it sent, then reports closed": rank 1 sends one
// message of `bytes` to rank 0 through links[0] (it must fit the link at once) and closes; rank
// 0, once rank 1 is gone, still reads the message whole, and then checkPeer and read report the
// close.
Status sendOneThenClose(const TransportContext& ctx, Link& link, size_t bytes);
Status readOneThenSeeClosed(const TransportContext& ctx, Link& link, size_t bytes);

// Of 3 ranks, each connected to the others: rank 1 fails with a farewell that says rank 2's
// failure began it, rank 2 with its own, and both close. Rank 0's links then name rank 2's
// failure in their errors, and hand the farewells over as they were said.
Status farewellsAreNamed(const TransportContext& ctx, ConnectFn connect);

// Waits for one message from peer that never comes, until the link reports an error.
// useCheckPeer: also call checkPeer() while waiting. Gives the error (ok if none by deadline).
Status awaitFailure(const TransportContext& ctx, Link& link, int peer, bool useCheckPeer,
                    Deadline deadline);

}  // namespace weft::test

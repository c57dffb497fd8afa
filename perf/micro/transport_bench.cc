// weft-micro-transport: the shm and tcp transports between two processes, through Channel (the
// framing every collective uses), per message size:
//   pingpong/<shm|tcp>/<bytes>  one round trip per iteration (rank 0 sends, rank 1 answers)
//   stream/<shm|tcp>/<bytes>    one message per iteration, back to back, and one ack at the end
// GB/s counts the payload moved one way per iteration (twice that for a round trip).
//
// main() forks rank 1 before Google Benchmark starts; it connects both transports (tcp over
// 127.0.0.1) and then serves the commands rank 0 sends over a socketpair: which benchmark, and
// how many iterations, so both sides exchange exactly the same messages.
#include <benchmark/benchmark.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/base/env.h"
#include "src/base/wait.h"
#include "transports/channel.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {
namespace {

constexpr uint64_t kTag = 0x4d4943524f42454eull;
constexpr size_t kSizes[] = {8, 64, 512, 4u << 10, 32u << 10, 256u << 10, 1u << 20, 4u << 20};

enum class Mode : uint32_t { kPingPong, kStream, kQuit };
enum class Kind : uint32_t { kShm, kTcp };

struct Command {
  Mode mode;
  Kind kind;
  uint64_t bytes;
  uint64_t iterations;
};

bool sendAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool recvAll(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(fd, p, bytes, 0);
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Both ranks' blobs through the socketpair: each sends its own, then reads the other's.
Status exchange(int fd, int rank, const Blob& mine, std::vector<Blob>* all) {
  uint64_t size = mine.size();
  if (!sendAll(fd, &size, sizeof size) || !sendAll(fd, mine.data(), mine.size())) {
    return Status(weftSystemError, "micro: the other rank is gone");
  }
  Blob theirs;
  if (!recvAll(fd, &size, sizeof size)) return Status(weftSystemError, "micro: no peer blob");
  theirs.resize(size);
  if (!recvAll(fd, theirs.data(), size)) return Status(weftSystemError, "micro: short blob");
  all->assign(2, Blob());
  (*all)[rank] = mine;
  (*all)[1 - rank] = std::move(theirs);
  return okStatus();
}

// One rank's end of both transports.
struct Endpoint {
  int rank = 0;
  int control = -1;
  std::vector<std::unique_ptr<Link>> shmLinks, tcpLinks;
  Channel shm, tcp;
  std::vector<char> buffer = std::vector<char>(kSizes[std::size(kSizes) - 1]);

  Status connect() {
    TransportContext ctx;
    ctx.rank = rank;
    ctx.nranks = 2;
    ctx.commTag = kTag;
    ctx.deadline = Deadline::after(30'000);
    WEFT_RETURN_IF_ERROR(SockAddr::parse("127.0.0.1:0", &ctx.localAddress));
    ctx.nSocketsPerPeer = env().nSocketsPerPeer;
    ctx.shmRingBytes = env().shmRingBytes;
    int fd = control;
    int r = rank;
    ctx.allGather = [fd, r](const Blob& mine, std::vector<Blob>* all) {
      return exchange(fd, r, mine, all);
    };
    WEFT_RETURN_IF_ERROR(shm::connect(ctx, {1 - rank}, &shmLinks));
    WEFT_RETURN_IF_ERROR(tcp::connect(ctx, {1 - rank}, &tcpLinks));
    shm = Channel(shmLinks[0].get(), kTag, rank, 1 - rank);
    tcp = Channel(tcpLinks[0].get(), kTag, rank, 1 - rank);
    return okStatus();
  }

  Channel& channel(Kind kind) { return kind == Kind::kShm ? shm : tcp; }

  // Progress until the whole message is through, waiting as the library does when nothing
  // moves (spin, then yield, then sleep), so a loaded machine is not made worse.
  Status send(Kind kind, size_t bytes) {
    OutgoingMessage m;
    m.data = buffer.data();
    m.bytes = bytes;
    Backoff backoff;
    for (bool done = false; !done;) {
      size_t before = m.headerSent + m.sent;
      WEFT_RETURN_IF_ERROR(channel(kind).progressSend(m, &done));
      wait(backoff, before != m.headerSent + m.sent);
    }
    return okStatus();
  }

  Status recv(Kind kind, size_t bytes) {
    IncomingMessage m;
    m.data = buffer.data();
    m.bytes = bytes;
    Backoff backoff;
    for (bool done = false; !done;) {
      size_t before = m.headerReceived + m.received;
      WEFT_RETURN_IF_ERROR(channel(kind).progressRecv(m, &done));
      wait(backoff, before != m.headerReceived + m.received);
    }
    return okStatus();
  }

  static void wait(Backoff& backoff, bool moved) {
    if (moved) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }

  // Rank 1's side of one benchmark run.
  Status serve(const Command& c) {
    for (uint64_t i = 0; i < c.iterations; ++i) {
      WEFT_RETURN_IF_ERROR(recv(c.kind, c.bytes));
      if (c.mode == Mode::kPingPong) WEFT_RETURN_IF_ERROR(send(c.kind, c.bytes));
    }
    if (c.mode == Mode::kStream) WEFT_RETURN_IF_ERROR(send(c.kind, 0));
    return okStatus();
  }
};

Endpoint* rank0 = nullptr;

void fail(benchmark::State& state, const Status& s) {
  state.SkipWithError(s.message().c_str());
}

void run(benchmark::State& state, Mode mode, Kind kind, size_t bytes) {
  Endpoint& e = *rank0;
  Command c{mode, kind, bytes, static_cast<uint64_t>(state.max_iterations)};
  if (!sendAll(e.control, &c, sizeof c)) return state.SkipWithError("rank 1 is gone");
  uint64_t i = 0;
  for (auto _ : state) {
    Status s = e.send(kind, bytes);
    if (s.ok() && mode == Mode::kPingPong) s = e.recv(kind, bytes);
    if (s.ok() && mode == Mode::kStream && ++i == c.iterations) s = e.recv(kind, 0);
    if (!s.ok()) return fail(state, s);
  }
  double moved = static_cast<double>(bytes) * (mode == Mode::kPingPong ? 2 : 1);
  state.counters["bytes"] = benchmark::Counter(
      moved, benchmark::Counter::kIsRate | benchmark::Counter::kIsIterationInvariant);
}

[[noreturn]] void runRank1(int control) {
  Endpoint e;
  e.rank = 1;
  e.control = control;
  Status s = e.connect();
  Command c{};
  while (s.ok() && recvAll(control, &c, sizeof c) && c.mode != Mode::kQuit)
    s = e.serve(c);
  if (!s.ok()) std::fprintf(stderr, "weft-micro-transport: rank 1: %s\n", s.message().c_str());
  ::_exit(s.ok() ? 0 : 1);
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) {
  using namespace weft;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("socketpair");
    return 1;
  }
  std::fflush(stdout);
  pid_t child = ::fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    ::close(sv[0]);
    runRank1(sv[1]);
  }
  ::close(sv[1]);
  Endpoint e;
  e.control = sv[0];
  if (Status s = e.connect(); !s.ok()) {
    std::fprintf(stderr, "weft-micro-transport: connect: %s\n", s.message().c_str());
    return 1;
  }
  rank0 = &e;
  for (Kind kind : {Kind::kShm, Kind::kTcp}) {
    const char* k = kind == Kind::kShm ? "shm" : "tcp";
    for (size_t bytes : kSizes) {
      std::string size = std::to_string(bytes);
      benchmark::RegisterBenchmark(("pingpong/" + std::string(k) + "/" + size).c_str(), run,
                                   Mode::kPingPong, kind, bytes);
      benchmark::RegisterBenchmark(("stream/" + std::string(k) + "/" + size).c_str(), run,
                                   Mode::kStream, kind, bytes);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Command quit{Mode::kQuit, Kind::kShm, 0, 0};
  sendAll(e.control, &quit, sizeof quit);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

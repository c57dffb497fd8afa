// C++ RAII wrappers over the C API (weft.h): communicators, streams and groups that clean up
// after themselves, typed collectives over std::span, and failures as weft::Error exceptions.
// Header-only; links against the same libweft.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace weft {

class Error : public std::runtime_error {
 public:
  Error(weftResult_t code, const std::string& message)
      : std::runtime_error(std::string(weftGetErrorString(code)) + ": " + message),
        code_(code),
        message_(message) {}
  weftResult_t code() const { return code_; }
  // what() without the code's description in front.
  const std::string& message() const { return message_; }

 private:
  weftResult_t code_;
  std::string message_;
};

// Throws weft::Error for any result but success (and in-progress, which is not a failure).
inline void check(weftResult_t result, weftComm_t comm = nullptr) {
  if (result != weftSuccess && result != weftInProgress) {
    throw Error(result, weftGetLastError(comm));
  }
}

// 16-bit float types carried as raw bits; Weft reduces them through float32.
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
constexpr weftDataType_t dataTypeOf();
template <>
constexpr weftDataType_t dataTypeOf<int8_t>() {
  return weftInt8;
}
template <>
constexpr weftDataType_t dataTypeOf<uint8_t>() {
  return weftUint8;
}
template <>
constexpr weftDataType_t dataTypeOf<int32_t>() {
  return weftInt32;
}
template <>
constexpr weftDataType_t dataTypeOf<uint32_t>() {
  return weftUint32;
}
template <>
constexpr weftDataType_t dataTypeOf<int64_t>() {
  return weftInt64;
}
template <>
constexpr weftDataType_t dataTypeOf<uint64_t>() {
  return weftUint64;
}
template <>
constexpr weftDataType_t dataTypeOf<Float16>() {
  return weftFloat16;
}
template <>
constexpr weftDataType_t dataTypeOf<BFloat16>() {
  return weftBfloat16;
}
template <>
constexpr weftDataType_t dataTypeOf<float>() {
  return weftFloat32;
}
template <>
constexpr weftDataType_t dataTypeOf<double>() {
  return weftFloat64;
}

// Bytes per element of `type`; 0 for a value that names no type.
constexpr size_t sizeOf(weftDataType_t type) {
  switch (type) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    case weftInt64:
    case weftUint64:
    case weftFloat64:
      return 8;
    default:
      return 0;
  }
}

class UniqueId {
 public:
  static UniqueId create() {
    UniqueId id;
    check(weftGetUniqueId(&id.raw_));
    return id;
  }
  const weftUniqueId& raw() const { return raw_; }
  weftUniqueId& raw() { return raw_; }

 private:
  weftUniqueId raw_{};
};

// A CPU stream: work issued on it runs in order on its own thread.
class Stream {
 public:
  Stream() { check(weftStreamCreate(&stream_)); }
  ~Stream() {
    if (stream_ != nullptr) weftStreamDestroy(stream_);
  }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void synchronize() { check(weftStreamSynchronize(stream_)); }
  bool done() const { return weftStreamQuery(stream_) == weftSuccess; }
  weftStream_t get() const { return stream_; }
  operator weftStream_t() const { return stream_; }

 private:
  weftStream_t stream_ = nullptr;
};

// weftGroupStart in the constructor; end() (or the destructor, which cannot throw) ends it.
class Group {
 public:
  Group() { check(weftGroupStart()); }
  ~Group() {
    if (open_) weftGroupEnd();
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  void end() {
    open_ = false;
    check(weftGroupEnd());
  }

 private:
  bool open_ = true;
};

class Comm {
 public:
  Comm() = default;
  explicit Comm(weftComm_t comm) : comm_(comm) {}
  ~Comm() {
    if (comm_ != nullptr) weftCommDestroy(comm_);
  }
  Comm(Comm&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}
  Comm& operator=(Comm&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  static Comm initRank(int nranks, const UniqueId& id, int rank, weftConfig_t* config = nullptr) {
    weftComm_t c = nullptr;
    check(weftCommInitRankConfig(&c, nranks, id.raw(), rank, config));
    return Comm(c);
  }
  static Comm fromEnv() {
    weftComm_t c = nullptr;
    check(weftCommInitFromEnv(&c));
    return Comm(c);
  }
  // n ranks as threads of this process.
  static std::vector<Comm> initAll(int n) {
    std::vector<weftComm_t> raw(static_cast<size_t>(n), nullptr);
    check(weftCommInitAll(raw.data(), n, nullptr));
    std::vector<Comm> out;
    out.reserve(raw.size());
    for (weftComm_t c : raw)
      out.emplace_back(c);
    return out;
  }
  // Collective over this communicator; ranks with WEFT_SPLIT_NOCOLOR get an empty Comm.
  Comm split(int color, int key, weftConfig_t* config = nullptr) const {
    weftComm_t c = nullptr;
    check(weftCommSplit(comm_, color, key, &c, config), comm_);
    return Comm(c);
  }

  int rank() const {
    int r = -1;
    check(weftCommUserRank(comm_, &r), comm_);
    return r;
  }
  int size() const {
    int n = 0;
    check(weftCommCount(comm_, &n), comm_);
    return n;
  }
  weftComm_t get() const { return comm_; }
  explicit operator bool() const { return comm_ != nullptr; }

  void finalize() { check(weftCommFinalize(comm_), comm_); }
  // Frees the communicator at once, without waiting for peers; pending calls fail.
  void abort() {
    if (comm_ != nullptr) check(weftCommAbort(std::exchange(comm_, nullptr)));
  }
  weftResult_t asyncError() const {
    weftResult_t r = weftSuccess;
    check(weftCommGetAsyncError(comm_, &r), comm_);
    return r;
  }
  // Calls and traffic so far (weftCommGetStats), and a fresh count.
  weftCommStats_t stats() const {
    weftCommStats_t s{};
    s.size = sizeof(s);
    check(weftCommGetStats(comm_, &s), comm_);
    return s;
  }
  void resetStats() { check(weftCommResetStats(comm_), comm_); }

  template <typename T>
  void allReduce(std::span<const T> send, std::span<T> recv, weftRedOp_t op = weftSum,
                 weftStream_t stream = nullptr) {
    need(recv.size() >= send.size(), "allReduce: recv is smaller than send");
    check(weftAllReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), op, comm_, stream),
          comm_);
  }
  template <typename T>
  void allReduce(std::span<T> inout, weftRedOp_t op = weftSum, weftStream_t stream = nullptr) {
    check(
        weftAllReduce(inout.data(), inout.data(), inout.size(), dataTypeOf<T>(), op, comm_, stream),
        comm_);
  }
  template <typename T>
  void broadcast(std::span<const T> send, std::span<T> recv, int root,
                 weftStream_t stream = nullptr) {
    check(
        weftBroadcast(send.data(), recv.data(), recv.size(), dataTypeOf<T>(), root, comm_, stream),
        comm_);
  }
  template <typename T>
  void broadcast(std::span<T> inout, int root, weftStream_t stream = nullptr) {
    check(weftBroadcast(inout.data(), inout.data(), inout.size(), dataTypeOf<T>(), root, comm_,
                        stream),
          comm_);
  }
  template <typename T>
  void reduce(std::span<const T> send, std::span<T> recv, weftRedOp_t op, int root,
              weftStream_t stream = nullptr) {
    check(
        weftReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), op, root, comm_, stream),
        comm_);
  }
  // recv gets this rank's block: send holds size() blocks of recv.size() elements.
  template <typename T>
  void reduceScatter(std::span<const T> send, std::span<T> recv, weftRedOp_t op = weftSum,
                     weftStream_t stream = nullptr) {
    need(send.size() == recv.size() * static_cast<size_t>(size()),
         "reduceScatter: send must hold size() blocks of recv.size()");
    check(weftReduceScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>(), op, comm_,
                            stream),
          comm_);
  }
  template <typename T>
  void allGather(std::span<const T> send, std::span<T> recv, weftStream_t stream = nullptr) {
    need(recv.size() == send.size() * static_cast<size_t>(size()),
         "allGather: recv must hold size() blocks of send.size()");
    check(weftAllGather(send.data(), recv.data(), send.size(), dataTypeOf<T>(), comm_, stream),
          comm_);
  }
  template <typename T>
  void allToAll(std::span<const T> send, std::span<T> recv, weftStream_t stream = nullptr) {
    const auto n = static_cast<size_t>(size());
    need(send.size() == recv.size() && send.size() % n == 0,
         "allToAll: send and recv must hold size() equal blocks");
    check(weftAllToAll(send.data(), recv.data(), send.size() / n, dataTypeOf<T>(), comm_, stream),
          comm_);
  }
  template <typename T>
  void send(std::span<const T> data, int peer, weftStream_t stream = nullptr) {
    check(weftSend(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, stream), comm_);
  }
  template <typename T>
  void recv(std::span<T> data, int peer, weftStream_t stream = nullptr) {
    check(weftRecv(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, stream), comm_);
  }
  // Blocks until a message from any rank arrives; returns the sender's rank.
  template <typename T>
  int recvAnySource(std::span<T> data) {
    int source = -1;
    check(weftRecvAnySource(data.data(), data.size(), dataTypeOf<T>(), &source, comm_, nullptr),
          comm_);
    return source;
  }
  void barrier(weftStream_t stream = nullptr) { check(weftBarrier(comm_, stream), comm_); }

 private:
  static void need(bool ok, const char* message) {
    if (!ok) throw Error(weftInvalidArgument, message);
  }
  weftComm_t comm_ = nullptr;
};

}  // namespace weft

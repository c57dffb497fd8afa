#include "transports/put_stream.h"

#include <cstring>

namespace weft {

void PutStream::startPut(const void* data, size_t bytes, uint64_t offset, int signal) {
  out_ = Header{kMagic, kVersion, kPut, static_cast<uint32_t>(signal), 0, offset, bytes};
  sendKind_ = kPut;
  sendData_ = static_cast<const char*>(data);
  headerSent_ = 0;
  payloadSent_ = 0;
}

void PutStream::startClose() {
  out_ = Header{kMagic, kVersion, kClose, 0, 0, 0, 0};
  sendKind_ = kClose;
  sendData_ = nullptr;
  headerSent_ = 0;
  payloadSent_ = 0;
}

Status PutStream::progressSend(bool* progressed) {
  while (sendKind_ != 0) {
    size_t written = 0;
    if (headerSent_ < sizeof(out_)) {
      WEFT_RETURN_IF_ERROR(link_->write(reinterpret_cast<const char*>(&out_) + headerSent_,
                                        sizeof(out_) - headerSent_, &written));
      headerSent_ += written;
    } else if (payloadSent_ < out_.bytes) {
      WEFT_RETURN_IF_ERROR(link_->write(sendData_ + payloadSent_,
                                        static_cast<size_t>(out_.bytes) - payloadSent_, &written));
      payloadSent_ += written;
    } else {
      closeSent_ = closeSent_ || sendKind_ == kClose;
      sendKind_ = 0;
      *progressed = true;
      break;
    }
    if (written == 0) break;
    *progressed = true;
  }
  return okStatus();
}

Status PutStream::checkHeader() const {
  if (in_.magic != kMagic || in_.version != kVersion) {
    return errorf(weftRemoteError, "rank %d sent a put with a bad header (magic %08x, version %u)",
                  peer_, in_.magic, in_.version);
  }
  if (in_.kind == kClose) {
    if (in_.signal == 0 && in_.offset == 0 && in_.bytes == 0) return okStatus();
    return errorf(weftRemoteError, "rank %d sent a close that carries a payload", peer_);
  }
  if (in_.kind != kPut) {
    return errorf(weftRemoteError, "rank %d sent a put of unknown kind %u", peer_, in_.kind);
  }
  if (in_.signal >= static_cast<uint32_t>(target_.nSignals)) {
    return errorf(weftRemoteError, "rank %d sent a put for signal %u, which does not exist", peer_,
                  in_.signal);
  }
  if (in_.offset > target_.bytes || in_.bytes > target_.bytes - in_.offset) {
    return errorf(weftRemoteError,
                  "rank %d sent a put of %llu bytes at offset %llu, outside this rank's part of "
                  "the window (%zu bytes)",
                  peer_, static_cast<unsigned long long>(in_.bytes),
                  static_cast<unsigned long long>(in_.offset), target_.bytes);
  }
  return okStatus();
}

Status PutStream::progressReceive(bool* progressed) {
  while (!peerClosed_) {
    size_t got = 0;
    if (headerReceived_ < sizeof(in_)) {
      WEFT_RETURN_IF_ERROR(link_->read(reinterpret_cast<char*>(&in_) + headerReceived_,
                                       sizeof(in_) - headerReceived_, &got));
      headerReceived_ += got;
      if (headerReceived_ == sizeof(in_)) {
        WEFT_RETURN_IF_ERROR(checkHeader());
        payloadReceived_ = 0;
      }
    } else if (payloadReceived_ < in_.bytes) {
      WEFT_RETURN_IF_ERROR(link_->read(target_.base + in_.offset + payloadReceived_,
                                       static_cast<size_t>(in_.bytes) - payloadReceived_, &got));
      payloadReceived_ += got;
    }
    if (headerReceived_ == sizeof(in_) && payloadReceived_ == in_.bytes) {
      if (in_.kind == kClose) {
        peerClosed_ = true;
      } else {
        target_.signals[in_.signal].fetch_add(1, std::memory_order_release);
      }
      headerReceived_ = 0;
      *progressed = true;
      continue;
    }
    if (got == 0) break;
    *progressed = true;
  }
  return okStatus();
}

}  // namespace weft

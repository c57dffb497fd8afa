// CPU streams.
#include <new>

#include "src/api/api_util.h"
#include "src/enqueue/stream.h"

using weft::Status;

extern "C" {

weftResult_t weftStreamCreate(weftStream_t* stream) {
  if (stream == nullptr) return weft::report(Status(weftInvalidArgument, "stream is NULL"));
  *stream = new (std::nothrow) weftStream();
  if (*stream == nullptr) return weft::report(Status(weftSystemError, "out of memory"));
  return weftSuccess;
}

weftResult_t weftStreamSynchronize(weftStream_t stream) {
  if (stream == nullptr) return weftSuccess;  // the NULL stream never has pending work
  return weft::report(stream->synchronize());
}

weftResult_t weftStreamQuery(weftStream_t stream) {
  if (stream == nullptr || stream->idle()) return weftSuccess;
  return weftInProgress;
}

weftResult_t weftStreamDestroy(weftStream_t stream) {
  if (stream == nullptr) return weft::report(Status(weftInvalidArgument, "stream is NULL"));
  delete stream;
  return weftSuccess;
}

}  // extern "C"

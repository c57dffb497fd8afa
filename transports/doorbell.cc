#include "transports/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace weft {
namespace {

// Shared (not FUTEX_PRIVATE) futexes: the word lives in memory mapped by several processes.
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const struct timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

void Doorbell::wait(uint32_t armed, int64_t timeoutUs) {
  struct timespec ts = {static_cast<time_t>(timeoutUs / 1'000'000),
                        static_cast<long>(timeoutUs % 1'000'000) * 1000};
  futex(&sequence, FUTEX_WAIT, armed, &ts);  // returns at once if the sequence moved
}

void Doorbell::wake() {
  sequence.fetch_add(1, std::memory_order_seq_cst);
  futex(&sequence, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace weft

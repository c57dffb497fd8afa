// Two ranks as threads: all-reduce through the installed headers and library.
#include <cstdio>
#include <thread>
#include <weft/weft.hpp>

int main() {
  auto comms = weft::Comm::initAll(2);
  int sums[2] = {0, 0};
  std::thread t0([&] {
    int v = 1;
    comms[0].allReduce(std::span(&v, 1));
    sums[0] = v;
  });
  std::thread t1([&] {
    int v = 2;
    comms[1].allReduce(std::span(&v, 1));
    sums[1] = v;
  });
  t0.join();
  t1.join();
  std::printf("sums %d %d\n", sums[0], sums[1]);
  return sums[0] == 3 && sums[1] == 3 ? 0 : 1;
}

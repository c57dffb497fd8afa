// A rank program for weft-run's tests. Modes:
//   env                 print this rank's launch variables on one line
//   lines K             K lines to stdout and K to stderr, then a partial line
//   exit RANK CODE      RANK exits with CODE after a moment; the others sleep 60 s
//   kill RANK SIG       RANK raises SIG after a moment; the others sleep 60 s
//   sleep SECONDS       sleep
//   wait-term           print "ready", then wait for SIGTERM and print "got SIGTERM"
//   ignore-term RANK    everyone ignores SIGTERM; RANK exits 1, the others sleep 60 s
//   stagger             rank r sleeps r * 0.2 s, prints "done", exits 0
//   cpus                print the CPUs this rank may run on ("cpus=0,1")
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int myRank() {
  const char* r = std::getenv("WEFT_RANK");
  return r ? std::atoi(r) : -1;
}

const char* var(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

void sleepSeconds(double s) {
  ::usleep(static_cast<useconds_t>(s * 1e6));
}

volatile sig_atomic_t gotTerm = 0;
void onTerm(int) {
  gotTerm = 1;
}

int waitTerm() {
  struct sigaction sa {};
  sa.sa_handler = onTerm;
  ::sigaction(SIGTERM, &sa, nullptr);
  std::printf("ready\n");
  std::fflush(stdout);
  for (int i = 0; i < 600 && !gotTerm; ++i) {
    sleepSeconds(0.1);
  }
  std::printf(gotTerm ? "got SIGTERM\n" : "no signal\n");
  return gotTerm ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  auto arg = [&](int i) { return argc > i ? std::atoi(argv[i]) : 0; };
  if (mode == "env") {
    std::printf("rank=%s size=%s local=%s/%s id=%s secret=%s extra=%s\n", var("WEFT_RANK"),
                var("WEFT_WORLD_SIZE"), var("WEFT_LOCAL_RANK"), var("WEFT_LOCAL_SIZE"),
                var("WEFT_COMM_ID"), var("WEFT_COMM_SECRET"), var("WEFT_TEST_EXTRA"));
    return 0;
  }
  if (mode == "cpus") {
    cpu_set_t set;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    std::string list;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) list += (list.empty() ? "" : ",") + std::to_string(cpu);
    }
    std::printf("cpus=%s\n", list.c_str());
    return 0;
  }
  if (mode == "lines") {
    for (int i = 0; i < arg(2); ++i) {
      std::printf("line %d\n", i);
      std::fflush(stdout);
      std::fprintf(stderr, "err %d\n", i);
    }
    std::printf("partial");
    return 0;
  }
  if (mode == "exit" || mode == "kill") {
    if (myRank() != arg(2)) {
      sleepSeconds(60);
      return 0;
    }
    sleepSeconds(0.2);
    if (mode == "kill") ::raise(arg(3));
    return arg(3);
  }
  if (mode == "sleep") {
    sleepSeconds(std::atof(argc > 2 ? argv[2] : "1"));
    return 0;
  }
  if (mode == "wait-term") return waitTerm();
  if (mode == "ignore-term") {
    ::signal(SIGTERM, SIG_IGN);
    std::printf("ready\n");
    std::fflush(stdout);
    sleepSeconds(myRank() == arg(2) ? 0.3 : 60);
    return myRank() == arg(2) ? 1 : 0;
  }
  if (mode == "stagger") {
    sleepSeconds(0.2 * myRank());
    std::printf("done\n");
    return 0;
  }
  std::fprintf(stderr, "weft_run_probe: unknown mode '%s'\n", mode.c_str());
  return 2;
}

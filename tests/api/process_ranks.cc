#include "tests/api/process_ranks.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace weft::test {

void bindToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

int freeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

namespace {

std::string randomSecret() {
  std::random_device rd;
  std::string hex;
  for (int i = 0; i < 32; ++i)
    hex += "0123456789abcdef"[rd() % 16];
  return hex;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (exited) return "rank " + std::to_string(rank) + " exited with code " + std::to_string(code);
  return "rank " + std::to_string(rank) + " killed by signal " + std::to_string(signal);
}

std::vector<ProcessResult> runProcesses(int nranks, const EnvList& env,
                                        const std::function<void(int rank)>& body, int timeoutSec) {
  const std::string commId = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  const std::string secret = randomSecret();
  fflush(stdout);
  fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("WEFT_RANK", std::to_string(r).c_str(), 1);
      setenv("WEFT_WORLD_SIZE", std::to_string(nranks).c_str(), 1);
      setenv("WEFT_COMM_ID", commId.c_str(), 1);
      setenv("WEFT_COMM_SECRET", secret.c_str(), 1);
      for (const auto& [k, v] : env)
        setenv(k.c_str(), v.c_str(), 1);
      body(r);
      fflush(stdout);
      fflush(stderr);
      _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    pids.push_back(pid);
  }
  std::vector<ProcessResult> results(static_cast<size_t>(nranks));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
  int left = nranks;
  while (left > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      pid_t done = waitpid(pids[r], &status, WNOHANG);
      if (done != pids[r]) continue;
      results[r].rank = r;
      results[r].exited = WIFEXITED(status);
      results[r].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      results[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      pids[r] = -1;
      --left;
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids) {
        if (p > 0) kill(p, SIGKILL);
      }
      deadline = std::chrono::steady_clock::time_point::max();
    }
    if (left > 0) {
      struct timespec ts = {0, 5'000'000};
      nanosleep(&ts, nullptr);
    }
  }
  return results;
}

void expectAllOk(const std::vector<ProcessResult>& results) {
  for (const auto& r : results)
    EXPECT_TRUE(r.ok()) << r.describe();
}

RankFiles::RankFiles(const std::string& name)
    : base_("/tmp/weft-" + name + "." + std::to_string(getpid())) {}

std::string RankFiles::path(int rank) const {
  return base_ + "." + std::to_string(rank);
}

void RankFiles::route(int rank) const {
  setenv("WEFT_DEBUG_FILE", path(rank).c_str(), 1);
}

std::string RankFiles::take(int rank) const {
  std::ifstream in(path(rank));
  std::stringstream s;
  s << in.rdbuf();
  unlink(path(rank).c_str());
  return s.str();
}

}  // namespace weft::test

// Reading another process's memory (transports/cross_memory.h) across a real fork: the data,
// and the errors for a process that is gone, an unmapped address and a refusing kernel.
#include "transports/cross_memory.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "tests/transports/forbid_cross_memory.h"

namespace weft {
namespace {

// A child that rewrites `buffer` after the fork (so its copy differs from ours), says so on a
// pipe, and stays until we close the other pipe.
struct Child {
  explicit Child(std::vector<int32_t>* buffer) {
    int ready[2], done[2];
    EXPECT_EQ(pipe(ready), 0);
    EXPECT_EQ(pipe(done), 0);
    pid = fork();
    if (pid == 0) {
      close(done[1]);  // so that the read below ends when the parent closes its end
      for (size_t i = 0; i < buffer->size(); ++i)
        (*buffer)[i] = static_cast<int32_t>(i * 7 + 1);
      char c = 1;
      if (write(ready[1], &c, 1) != 1) _exit(1);
      _exit(read(done[0], &c, 1) >= 0 ? 0 : 1);
    }
    char c = 0;
    EXPECT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    close(ready[1]);
    close(done[0]);
    release = done[1];
  }
  ~Child() {
    close(release);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  pid_t pid = -1;
  int release = -1;
};

TEST(CrossMemory, ReadsWhatAnotherProcessWrote) {
  std::vector<int32_t> buffer(300001, 0);
  Child child(&buffer);
  std::vector<int32_t> got(buffer.size(), -1);
  Status s = readProcessMemory(child.pid, got.data(), addressOf(buffer.data()), got.size() * 4);
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], static_cast<int32_t>(i * 7 + 1)) << i;
  EXPECT_EQ(buffer[5], 0);  // ours is untouched
  // The probe reads 8 bytes: the child's elements 3 and 4, 22 and 29.
  const int32_t pair[2] = {22, 29};
  uint64_t expected = 0;
  memcpy(&expected, pair, sizeof(expected));
  EXPECT_EQ(probeProcessMemory(child.pid, addressOf(&buffer[3]), expected), 0);
  EXPECT_EQ(probeProcessMemory(child.pid, addressOf(&buffer[3]), expected + 1), EFAULT);
}

TEST(CrossMemory, AProcessThatIsGoneIsARemoteError) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  int32_t word = 0, got = 0;
  Status s = readProcessMemory(pid, &got, addressOf(&word), sizeof(word));
  EXPECT_EQ(s.code(), weftRemoteError) << s.message();
  EXPECT_NE(s.message().find("process " + std::to_string(pid) + " exited"), std::string::npos)
      << s.message();
}

TEST(CrossMemory, AnUnmappedAddressIsInvalidUsage) {
  std::vector<char> got(8192);
  Status s = readProcessMemory(getpid(), got.data(), 4096, 8192);
  EXPECT_EQ(s.code(), weftInvalidUsage) << s.message();
  EXPECT_EQ(probeProcessMemory(getpid(), 4096, 0), EFAULT);
}

TEST(CrossMemory, ARefusingKernelShowsInTheProbe) {
  pid_t pid = fork();
  if (pid == 0) {
    uint64_t word = 7;
    if (!test::forbidCrossMemory()) _exit(2);
    _exit(probeProcessMemory(getppid(), addressOf(&word), 7) == EPERM ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no seccomp filter; 1: the probe did not fail";
}

}  // namespace
}  // namespace weft

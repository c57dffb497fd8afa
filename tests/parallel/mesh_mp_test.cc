// Mesh across real processes: coordinates and per-axis communicators against the layout worked
// out here (last axis fastest), proved by all-reduces of the world ranks along each axis; and
// the clear errors for axes that do not fit.
#include "weft/parallel/mesh.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/api/process_ranks.h"

namespace weft::test {
namespace {

using parallel::Axis;
using parallel::Mesh;

// The sum of the world ranks on this rank's line along `axis` of a dp x tp mesh.
int lineSum(int rank, int dp, int tp, bool alongTp) {
  int sum = 0;
  if (alongTp) {
    for (int t = 0; t < tp; ++t)
      sum += rank / tp * tp + t;
  } else {
    for (int d = 0; d < dp; ++d)
      sum += d * tp + rank % tp;
  }
  return sum;
}

int allReduceOver(Comm& comm, int value) {
  std::vector<int> v{value};
  comm.allReduce(std::span<int>(v));
  return v[0];
}

TEST(Mesh, AxesGiveCoordinatesAndCommunicatorsAlongThem) {
  const int dp = 2, tp = 3;
  expectAllOk(runProcesses(dp * tp, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm world = Comm::fromEnv();
    Mesh mesh(world, {{"dp", dp}, {"tp", tp}});
    EXPECT_EQ(mesh.rank(), rank);
    EXPECT_EQ(mesh.size(), dp * tp);
    EXPECT_EQ(mesh.coordinate("dp"), rank / tp);
    EXPECT_EQ(mesh.coordinate("tp"), rank % tp);
    EXPECT_EQ(mesh.axisSize("tp"), tp);
    EXPECT_EQ(mesh.comm("tp").size(), tp);
    EXPECT_EQ(mesh.comm("tp").rank(), rank % tp);
    EXPECT_EQ(mesh.comm("dp").size(), dp);
    EXPECT_EQ(mesh.comm("dp").rank(), rank / tp);
    EXPECT_EQ(allReduceOver(mesh.comm("tp"), rank), lineSum(rank, dp, tp, true));
    EXPECT_EQ(allReduceOver(mesh.comm("dp"), rank), lineSum(rank, dp, tp, false));
  }));
}

TEST(Mesh, ThreeAxesWithOneOfSizeOne) {
  expectAllOk(runProcesses(4, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm world = Comm::fromEnv();
    Mesh mesh(world, {{"pp", 2}, {"dp", 1}, {"tp", 2}});
    EXPECT_EQ(mesh.coordinate("pp"), rank / 2);
    EXPECT_EQ(mesh.coordinate("dp"), 0);
    EXPECT_EQ(mesh.coordinate("tp"), rank % 2);
    EXPECT_EQ(mesh.comm("dp").size(), 1);
    // pp joins ranks r and r + 2; tp joins 2k and 2k + 1.
    EXPECT_EQ(allReduceOver(mesh.comm("pp"), rank), rank % 2 + (rank % 2 + 2));
    EXPECT_EQ(allReduceOver(mesh.comm("tp"), rank), rank / 2 * 4 + 1);
  }));
}

// What the error says, for axes that cannot make a mesh of `world`.
std::string meshError(const Comm& world, std::vector<Axis> axes) {
  try {
    Mesh mesh(world, std::move(axes));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(Mesh, AxesThatDoNotFitAreClearErrors) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm world = Comm::fromEnv();
    EXPECT_NE(meshError(world, {{"dp", 2}, {"tp", 3}})
                  .find("mesh axes dp 2 x tp 3 make 6 ranks, "
                        "but the communicator has 2"),
              std::string::npos);
    EXPECT_NE(meshError(world, {}).find("no axes"), std::string::npos);
    EXPECT_NE(meshError(world, {{"dp", 0}, {"tp", 2}}).find("sizes must be at least 1"),
              std::string::npos);
    EXPECT_NE(meshError(world, {{"dp", 1}, {"dp", 2}}).find("dp appears twice"), std::string::npos);
    // Ranks that give different axes all fail, before any split.
    try {
      Mesh differ(world, rank == 0 ? std::vector<Axis>{{"dp", 2}} : std::vector<Axis>{{"tp", 2}});
      ADD_FAILURE() << "different axes were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), weftInvalidUsage);
      EXPECT_NE(std::string(e.what()).find("the ranks gave different mesh axes"), std::string::npos)
          << e.what();
    }
    // None of those made a split, so the world still works and a good mesh follows.
    Mesh mesh(world, {{"dp", 2}});
    try {
      mesh.comm("tp");
      ADD_FAILURE() << "an unknown axis did not throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the mesh (dp 2) has no axis tp"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(allReduceOver(mesh.comm("dp"), 1), 2);
  }));
}

}  // namespace
}  // namespace weft::test

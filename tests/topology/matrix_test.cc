// The nvidia-smi table: where a file has one, Weft's table reproduces it cell for cell.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/topology/test_util.h"
#include "topology/matrix.h"
#include "topology/nvsmi_reader.h"

namespace weft::topo {
namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares two tables on the devices, the cells and the CPU affinity column.
void expectSameTable(const MatrixTable& want, const MatrixTable& got) {
  ASSERT_EQ(got.columns, want.columns);
  ASSERT_EQ(got.rows, want.rows);
  for (size_t r = 0; r < want.rows.size(); ++r) {
    for (size_t c = 0; c < want.columns.size(); ++c) {
      EXPECT_EQ(got.cells[r][c], want.cells[r][c]) << want.rows[r] << " x " << want.columns[c];
    }
    if (want.hasCpuAffinity) {
      EXPECT_EQ(got.cpuAffinity[r], want.cpuAffinity[r]) << want.rows[r];
    }
    if (want.hasNumaAffinity) {
      EXPECT_EQ(got.numaAffinity[r], want.numaAffinity[r]) << want.rows[r];
    }
  }
}

TEST(Matrix, ReproducesTheDgx1Matrix) {
  std::string path = test::dataPath("nvidia-dgx1-v100-4xedr.nvsmi.txt");
  std::string original = readAll(path);
  MatrixTable want;
  ASSERT_TRUE(parseMatrixTable(original, path, &want).ok());
  ASSERT_EQ(want.columns.size(), 12u);
  EXPECT_EQ(want.columns[9], "mlx5_2");  // the file's order, kept
  System s = test::load("nvidia-dgx1-v100-4xedr.nvsmi.txt");
  std::string printed = formatMatrix(buildMatrix(s));
  MatrixTable got;
  ASSERT_TRUE(parseMatrixTable(printed, "weft", &got).ok());
  expectSameTable(want, got);
  EXPECT_TRUE(got.hasNumaAffinity);
  EXPECT_EQ(got.numaAffinity[4], "1");
  // No note about cells the inferred PCIe tree could not match.
  for (const std::string& n : s.notes)
    EXPECT_EQ(n.find("no PCIe tree"), std::string::npos) << n;
}

TEST(Matrix, ReproducesTheSeedMatrices) {
  for (const char* seed : {"nvsmi_spaces_node.txt", "nvsmi_nvswitch.txt"}) {
    SCOPED_TRACE(seed);
    std::string path = std::string(WEFT_TOPO_DATA_DIR) + "/../fuzz/corpus/" + seed;
    std::string original = readAll(path);
    MatrixTable want;
    ASSERT_TRUE(parseMatrixTable(original, path, &want).ok());
    System s;
    ASSERT_TRUE(parseNvsmiMatrix(original, path, &s).ok());
    MatrixTable got;
    ASSERT_TRUE(parseMatrixTable(formatMatrix(buildMatrix(s)), "weft", &got).ok());
    expectSameTable(want, got);
  }
}

TEST(Matrix, FromNcclXml) {
  System s = test::load("azure-ndv5-h100x8-ndr400x8.nccl.xml");
  Matrix m = buildMatrix(s);
  ASSERT_EQ(m.labels.size(), 16u);
  EXPECT_EQ(m.labels[0], "GPU0");
  EXPECT_EQ(m.labels[8], "NIC0");
  EXPECT_EQ(m.cells[0][0], "X");
  EXPECT_EQ(m.cells[0][8], "PIX");  // GPU0 and NIC0 share a switch
  EXPECT_EQ(m.cells[0][1], "PHB");  // GPU1 under another switch of NUMA 0
  EXPECT_EQ(m.cells[0][4], "SYS");
  EXPECT_EQ(m.cpuAffinity[0], "0-47");
  EXPECT_EQ(m.numaAffinity[7], "1");
  EXPECT_EQ(m.cpuAffinity[8], "");
  std::string text = formatMatrix(m, false);
  EXPECT_EQ(text.find("Legend"), std::string::npos);
  EXPECT_EQ(text.rfind("\tGPU0\tGPU1", 0), 0u);
}

}  // namespace
}  // namespace weft::topo

// The nvidia-smi table: where a file has one, Weft's table reproduces it cell for cell.
#include <gtest/gtest.h>

#include "tests/topology/test_util.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/matrix.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nvsmi_reader.h"

namespace weft::topo {
namespace {

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
  std::string original = test::readFile(path);
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
    std::string path = test::corpusPath(seed);
    std::string original = test::readFile(path);
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

// Files without a GPU: their NICs, and the PCI endpoints they leave unclassified, with each row's
// affinity and a line saying why there is no GPU column; nothing at all gives the line alone.
TEST(Matrix, FilesWithoutGpus) {
  System g5 = test::load("aws-g5.48xlarge-a10gx8-pcie.nccl.xml");
  Matrix m = buildMatrix(g5);
  ASSERT_EQ(m.labels.size(), 9u);
  EXPECT_EQ(m.labels[0], "DEV0");
  EXPECT_EQ(m.legend[0], "DEV0: 0000:00:16.0, kind unknown");
  EXPECT_EQ(m.legend[8], "DEV8: 0000:00:15.0, kind unknown");  // the probable EFA, on NUMA 1
  EXPECT_EQ(m.numaAffinity[0], "0");
  EXPECT_EQ(m.numaAffinity[8], "1");
  EXPECT_EQ(m.cpuAffinity[0], "N/A");  // the file gives no CPU list
  EXPECT_EQ(m.cells[0][1], "PHB");
  EXPECT_EQ(m.cells[0][4], "SYS");
  EXPECT_NE(m.note.find("No GPU or NIC in this file"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("9 PCI endpoint(s) have no class"), std::string::npos) << m.note;
  std::string text = formatMatrix(m);
  EXPECT_NE(text.find("DEV0\t X \tPHB\tPHB\tPHB\tSYS"), std::string::npos) << text;
  EXPECT_NE(text.find("Device Legend:\n  DEV0: 0000:00:16.0, kind unknown\n"), std::string::npos)
      << text;

  // p5: four endpoints (EFA NICs, by the file's comment) under each of eight switches.
  System p5 = test::load("aws-p5.48xlarge-h100x8-efa32.nccl.xml");
  m = buildMatrix(p5);
  ASSERT_EQ(m.labels.size(), 32u);
  EXPECT_EQ(m.cells[0][3], "PIX");
  EXPECT_EQ(m.cells[0][4], "PHB");
  EXPECT_EQ(m.cells[0][16], "SYS");
  EXPECT_EQ(m.numaAffinity[31], "1");

  if (hwlocAvailable()) {
    System cisco = test::load("cisco-ucs-2s-cpuonly-usnic.hwloc.xml");
    m = buildMatrix(cisco);
    ASSERT_EQ(m.labels.size(), 6u);
    ASSERT_EQ(m.legend.size(), 6u);
    EXPECT_NE(m.note.find("No GPU in this file (a CPU-only machine)"), std::string::npos);
    EXPECT_EQ(m.labels[4], "usnic_2");
    // The usNIC is OpenFabrics device usnic_2 and interface eth6 of PCI function 0000:88:00.0.
    EXPECT_EQ(m.legend[4], "usnic_2: 0000:88:00.0, interface eth6");
    EXPECT_EQ(m.cpuAffinity[4], "8-15");
    EXPECT_EQ(m.numaAffinity[0], "0");
  }

  System bare;
  ASSERT_TRUE(parseNcclXml("<system version=\"1\"><cpu numaid=\"0\"/><cpu numaid=\"1\"/></system>",
                           "bare", &bare)
                  .ok());
  m = buildMatrix(bare);
  EXPECT_TRUE(m.labels.empty());
  EXPECT_EQ(formatMatrix(m), "");
  EXPECT_EQ(m.note, "No GPU, NIC or PCI device in this file (2 NUMA node(s) only): no table.");

  // Files with GPUs have no note, and no affinity on NIC rows (as nvidia-smi).
  m = buildMatrix(test::load("aws-p4d.24xlarge-a100x8-efa4.nccl.xml"));
  EXPECT_TRUE(m.note.empty());
  EXPECT_EQ(m.cpuAffinity.back(), "");
}

// Generic column names get a legend with their bus ids. ndv4: GPUs are numbered by bus id
// (0001 ... 000e), NICs in the file's order (0103, 0104 under NUMA 0 come first); ncv4's eth0 has
// no PCI device. An nvidia-smi matrix names its own columns and has no bus ids: no legend.
TEST(Matrix, LegendSaysWhichDeviceEachColumnIs) {
  Matrix m = buildMatrix(test::load("azure-ndv4-a100x8-hdr200x8.nccl.xml"));
  ASSERT_EQ(m.legend.size(), 16u);
  EXPECT_EQ(m.legend[0], "GPU0: 0001:00:00.0");
  EXPECT_EQ(m.legend[2], "GPU2: 0003:00:00.0");
  EXPECT_EQ(m.legend[4], "GPU4: 000b:00:00.0");
  EXPECT_EQ(m.legend[8], "NIC0: 0103:00:00.0");
  EXPECT_EQ(m.legend[10], "NIC2: 0101:00:00.0");
  EXPECT_EQ(m.legend[15], "NIC7: 0106:00:00.0");
  std::string text = formatMatrix(m);
  EXPECT_NE(text.find("\nDevice Legend:\n  GPU0: 0001:00:00.0\n"), std::string::npos) << text;
  EXPECT_EQ(formatMatrix(m, false).find("Device Legend"), std::string::npos);
  // The table still reads back: the legend is not taken for rows or a NIC renaming.
  MatrixTable back;
  ASSERT_TRUE(parseMatrixTable(text, "weft", &back).ok());
  EXPECT_EQ(back.columns, m.labels);
  EXPECT_EQ(back.rows, m.labels);

  m = buildMatrix(test::load("azure-ncv4-a100x4-pcie.nccl.xml"));
  EXPECT_EQ(m.legend.back(), "eth0: no PCI device (virtual interface)");
  m = buildMatrix(test::load("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml"));
  EXPECT_EQ(m.legend[0], "GPU0: 0000:13:00.0");
  m = buildMatrix(test::load("nvidia-dgx1-v100-4xedr.nvsmi.txt"));
  EXPECT_TRUE(m.legend.empty());
  EXPECT_EQ(formatMatrix(m).find("Device Legend"), std::string::npos);
}

}  // namespace
}  // namespace weft::topo

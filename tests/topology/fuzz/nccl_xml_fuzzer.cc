// libFuzzer target: NCCL topology XML reader. Seeds: tests/topology/data/*.nccl.xml and
// fuzz/corpus/. Run: topology_nccl_xml_fuzzer -max_total_time=60 corpus_dir
#include "tests/topology/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return weft::topo::fuzz::ncclXml(data, size);
}

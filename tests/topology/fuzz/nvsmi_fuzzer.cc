// libFuzzer target: nvidia-smi topo -m reader. Seeds: tests/topology/data/*.nvsmi.txt and
// fuzz/corpus/. Run: topology_nvsmi_fuzzer -max_total_time=60 corpus_dir
#include "tests/topology/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return weft::topo::fuzz::nvsmiMatrix(data, size);
}

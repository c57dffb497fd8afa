/* The public header compiles as C, and a C program can run a communicator through it. */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

int main(void) {
  weftComm_t comm = NULL;
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  weftUniqueId id;
  if (weftGetUniqueId(&id) != weftSuccess) return 1;
  config.commName = "c-api";
  if (weftCommInitRankConfig(&comm, 1, id, 0, &config) != weftSuccess) {
    fprintf(stderr, "init: %s\n", weftGetLastError(NULL));
    return 1;
  }
  double in[3] = {1.5, 2.5, -4};
  double out[3] = {0, 0, 0};
  if (weftAllReduce(in, out, 3, weftFloat64, weftMax, comm, NULL) != weftSuccess) return 1;
  if (memcmp(in, out, sizeof(in)) != 0) return 1;
  /* An invalid operator is reported, not undefined. */
  if (weftAllReduce(in, out, 3, weftFloat64, (weftRedOp_t)77, comm, NULL) != weftInvalidArgument) {
    return 1;
  }
  printf("%s\n", weftGetLastError(comm));
  return weftCommDestroy(comm) == weftSuccess ? 0 : 1;
}

/* Two ranks as threads: an all-reduce from C, linked statically against libweft.a with the flags
   pkg-config --static gives. */
#include <pthread.h>
#include <stdio.h>
#include <weft/weft.h>

static weftComm_t comms[2];
static int values[2] = {1, 2};

static void* rank(void* arg) {
  int r = *(int*)arg;
  weftResult_t result =
      weftAllReduce(&values[r], &values[r], 1, weftInt32, weftSum, comms[r], NULL);
  if (result != weftSuccess) fprintf(stderr, "rank %d: %s\n", r, weftGetErrorString(result));
  return NULL;
}

int main(void) {
  if (weftCommInitAll(comms, 2, NULL) != weftSuccess) return 1;
  pthread_t threads[2];
  int ranks[2] = {0, 1};
  for (int r = 0; r < 2; ++r)
    pthread_create(&threads[r], NULL, rank, &ranks[r]);
  for (int r = 0; r < 2; ++r)
    pthread_join(threads[r], NULL);
  for (int r = 0; r < 2; ++r)
    weftCommDestroy(comms[r]);
  printf("C sums %d %d\n", values[0], values[1]);
  return values[0] == 3 && values[1] == 3 ? 0 : 1;
}

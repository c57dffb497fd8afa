/* Weft: collective communication for CPU clusters and GPUs.
 *
 * The C API mirrors NCCL's: same names with the prefix `weft`, same argument order and
 * semantics. `weftStream_t` stands where NCCL takes `cudaStream_t`: NULL runs the call on the
 * calling thread and returns when it is done; a stream from weftStreamCreate queues it. */
#ifndef WEFT_WEFT_H_
#define WEFT_WEFT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MAJOR 0
#define WEFT_MINOR 1
#define WEFT_PATCH 0
#define WEFT_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define WEFT_VERSION_CODE WEFT_VERSION(WEFT_MAJOR, WEFT_MINOR, WEFT_PATCH)

/* In C++ the enums get int as their underlying type, so any int a caller passes is a valid value
 * to check (and reject), not undefined behaviour. */
#ifdef __cplusplus
#define WEFT_ENUM_BASE : int
#else
#define WEFT_ENUM_BASE
#endif

typedef struct weftComm* weftComm_t;
typedef struct weftStream* weftStream_t;
typedef struct weftWindow* weftWindow_t;

#define WEFT_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[WEFT_UNIQUE_ID_BYTES];
} weftUniqueId;

/* Codes 0-7 match NCCL's. */
typedef enum WEFT_ENUM_BASE {
  weftSuccess = 0,
  weftUnhandledCudaError = 1,
  weftSystemError = 2,
  weftInternalError = 3,
  weftInvalidArgument = 4,
  weftInvalidUsage = 5,
  weftRemoteError = 6,
  weftInProgress = 7,
  weftTimeout = 8, /* a wait passed its deadline (WEFT_TIMEOUT) */
  weftNumResults = 9
} weftResult_t;

typedef enum WEFT_ENUM_BASE {
  weftInt8 = 0,
  weftChar = 0,
  weftUint8 = 1,
  weftInt32 = 2,
  weftInt = 2,
  weftUint32 = 3,
  weftInt64 = 4,
  weftUint64 = 5,
  weftFloat16 = 6,
  weftHalf = 6,
  weftFloat32 = 7,
  weftFloat = 7,
  weftFloat64 = 8,
  weftDouble = 8,
  weftBfloat16 = 9,
  weftNumTypes = 10
} weftDataType_t;

typedef enum WEFT_ENUM_BASE {
  weftSum = 0,
  weftProd = 1,
  weftMax = 2,
  weftMin = 3,
  weftAvg = 4,
  weftNumOps = 5
} weftRedOp_t;

/* Per-communicator settings. Start from WEFT_CONFIG_INITIALIZER; a field left at its
 * "undefined" value takes the WEFT_* environment variable or the built-in default. */
#define WEFT_CONFIG_UNDEF_INT (-2147483647 - 1)
#define WEFT_CONFIG_MAGIC 0x57454654u /* "WEFT" */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;         /* 1: init returns when done; 0: returns weftInProgress, poll
                           weftCommGetAsyncError */
  int timeoutMs;        /* deadline of every wait; 0 waits forever (WEFT_TIMEOUT) */
  const char* netName;  /* transport between ranks of one host: "shm", "tcp" or NULL for
                           automatic (WEFT_TRANSPORT) */
  int nSocketsPerPeer;  /* tcp sockets per peer (WEFT_NSOCKS_PERPEER) */
  const char* commName; /* shown in log lines and error messages */
  int logCalls;         /* 0: leave this communicator's calls out of the COLL log (a tool's own
                           bookkeeping); 1: log them (the default) */
} weftConfig_t;

#define WEFT_CONFIG_INITIALIZER                                                         \
  {                                                                                     \
    sizeof(weftConfig_t), WEFT_CONFIG_MAGIC, WEFT_VERSION_CODE, WEFT_CONFIG_UNDEF_INT,  \
        WEFT_CONFIG_UNDEF_INT, NULL, WEFT_CONFIG_UNDEF_INT, NULL, WEFT_CONFIG_UNDEF_INT \
  }

#define WEFT_SPLIT_NOCOLOR (-1)

/* Traffic statistics of a communicator (weftCommGetStats), by kind of call. */
typedef enum WEFT_ENUM_BASE {
  weftStatsBroadcast = 0,
  weftStatsReduce = 1,
  weftStatsAllReduce = 2,
  weftStatsReduceScatter = 3,
  weftStatsAllGather = 4,
  weftStatsAllToAll = 5, /* weftAllToAll and weftAllToAllv */
  weftStatsBarrier = 6,
  weftStatsSend = 7,
  weftStatsRecv = 8, /* weftRecv and weftRecvAnySource */
  weftNumStatsKinds = 9
} weftStatsKind_t;

typedef struct {
  uint64_t calls;         /* calls completed */
  uint64_t bytes;         /* their sizes: the larger of each call's send and receive buffers */
  uint64_t bytesSent;     /* payload this rank sent its peers for them: messages, bytes it wrote
                             into shared memory for them to read, and into their buffers */
  uint64_t bytesReceived; /* payload it got from its peers: messages, and bytes it read of their
                             shared memory or buffers */
} weftCallStats_t;

/* Kinds may be added at the end: a caller sets size to the sizeof(weftCommStats_t) it was built
 * with, and gets the kinds that fit. */
typedef struct {
  size_t size;
  weftCallStats_t total;
  weftCallStats_t byKind[weftNumStatsKinds];
} weftCommStats_t;

/* The library hides every symbol but these declarations, its API. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Setup and teardown */
weftResult_t weftGetVersion(int* version);
weftResult_t weftGetUniqueId(weftUniqueId* uniqueId);
weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId, int rank);
weftResult_t weftCommInitRankConfig(weftComm_t* comm, int nranks, weftUniqueId commId, int rank,
                                    weftConfig_t* config);
/* ndev ranks as threads of this process; devlist is ignored on the CPU and may be NULL. */
weftResult_t weftCommInitAll(weftComm_t* comms, int ndev, const int* devlist);
/* Rank, size and rendezvous from the launcher: weft-run (WEFT_RANK, WEFT_WORLD_SIZE,
 * WEFT_COMM_ID), Open MPI's mpirun, Slurm's srun or torchrun. */
weftResult_t weftCommInitFromEnv(weftComm_t* comm);
weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                           weftConfig_t* config);
weftResult_t weftCommFinalize(weftComm_t comm);
weftResult_t weftCommDestroy(weftComm_t comm);
weftResult_t weftCommAbort(weftComm_t comm);
weftResult_t weftCommCount(const weftComm_t comm, int* count);
weftResult_t weftCommUserRank(const weftComm_t comm, int* rank);
weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError);
/* Calls and bytes since the communicator was created or weftCommResetStats, this rank's: each
 * call is counted when it completes (on a stream, once it ran). Safe from any thread. */
weftResult_t weftCommGetStats(weftComm_t comm, weftCommStats_t* stats);
weftResult_t weftCommResetStats(weftComm_t comm);

const char* weftGetErrorString(weftResult_t result);
/* The message of the last failed call on this thread (comm may be NULL): on comm when given.
 * The string stays valid until the next call of weftGetLastError for the same comm on this
 * thread. */
const char* weftGetLastError(weftComm_t comm);

/* Collectives */
weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, int root, weftComm_t comm, weftStream_t stream);
weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                        weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream);
weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                           weftStream_t stream);
weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                               weftStream_t stream);
weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream);
/* count elements go to each rank: sendbuff and recvbuff hold nranks * count. */
weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          weftDataType_t datatype, weftComm_t comm, weftStream_t stream);
/* Counts and displacements in elements, one per rank, as in MPI_Alltoallv. */
weftResult_t weftAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                           void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream);
weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream);
weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream);
/* A receive from whichever rank sends to this one first (MPI_ANY_SOURCE): count must match
 * that send's. *source gets the sender's rank when the receive completes (on a stream, once
 * the stream is synchronized). It cannot be part of a group; a gone peer ends it with an error. */
weftResult_t weftRecvAnySource(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                               weftComm_t comm, weftStream_t stream);
weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream);

/* Calls between GroupStart and GroupEnd are recorded and run together at GroupEnd: sends and
 * receives complete without deadlock whatever the order they were posted in. */
weftResult_t weftGroupStart(void);
weftResult_t weftGroupEnd(void);

/* Memory the ranks of a communicator on one host can map (as ncclMemAlloc): collectives above
 * WEFT_DIRECT_BYTES whose buffers are such memory on every rank read and write each other's
 * buffers in place instead of staging them. Free it with weftMemFree; peers that mapped it may
 * keep it alive until the communicator is destroyed (they cache their mappings). */
weftResult_t weftMemAlloc(void** ptr, size_t size);
weftResult_t weftMemFree(void* ptr);

/* Windows (as ncclCommWindowRegister): every rank lends its peers `size` bytes at buff, which
 * must stay allocated until deregistered, and each peer may then put into it, host-side, and
 * signal. Peers on this host map the part in place, so there it must be weftMemAlloc memory;
 * peers across hosts (or over WEFT_TRANSPORT=tcp) put through tcp connections of the window's
 * own, which a thread of the window moves, so their puts land while this rank computes. Both
 * calls are collective: every rank of comm calls them, in the same order as its collectives,
 * outside groups; one rank's bad arguments fail every rank's call. winFlags: WEFT_WIN_DEFAULT.
 * Deregister waits for every rank, and for the puts made before it to land; destroying the
 * communicator frees its windows. */
#define WEFT_WIN_DEFAULT 0
weftResult_t weftCommWindowRegister(weftComm_t comm, void* buff, size_t size, weftWindow_t* win,
                                    int winFlags);
weftResult_t weftCommWindowDeregister(weftComm_t comm, weftWindow_t win);
/* One-sided, in turn with comm's other calls: on the calling thread where stream is NULL, else
 * queued on the stream like a collective (ctx and flags 0). Copies count elements from localbuff
 * into peer's part of peerWin at peerWinOffset bytes, then raises the window's signal sigIdx (0
 * to 7) that peer keeps for this rank. count 0 only signals. Done (on a stream: once the stream
 * has run it) when localbuff may change; across hosts the data is on its way then. */
weftResult_t weftPutSignal(const void* localbuff, size_t count, weftDataType_t datatype, int peer,
                           weftWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx,
                           unsigned int flags, weftComm_t comm, weftStream_t stream);
/* Waits until each descriptor's signal, from its peer, has been raised opCnt more times (since
 * the waits before took theirs); the data of those puts is then in this rank's part. WEFT_TIMEOUT
 * without a raise, or a peer that dies, is an error naming the peer and the signal. Signals
 * belong to the window (unlike NCCL's, which belong to the communicator). */
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} weftWaitSignalDesc_t;
weftResult_t weftWaitSignal(int nDesc, const weftWaitSignalDesc_t* signalDescs, weftWindow_t win,
                            weftComm_t comm, weftStream_t stream);

/* CPU streams: calls on a stream return at once and run in order on its worker thread. */
weftResult_t weftStreamCreate(weftStream_t* stream);
/* Waits for all work queued so far; returns the first error it met. */
weftResult_t weftStreamSynchronize(weftStream_t stream);
/* weftSuccess when all queued work is done, weftInProgress while some runs. */
weftResult_t weftStreamQuery(weftStream_t stream);
weftResult_t weftStreamDestroy(weftStream_t stream);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_H_ */

// dbsmack's native I/O core: the load connections' socket I/O after the handshake, out of the JavaScript
// event loop (issue 13). Node-API in C++ (node_api.h only: no npm dependency, built by node-gyp from
// binding.gyp at install when a compiler is there; without it dbsmack runs its JavaScript path).
//
// What is native and what is not. JavaScript (src/driver/native-*.ts) logs in with the lean clients, then
// hands the socket's file descriptor over: open() dup()s it, and JavaScript destroys its own socket (libuv
// closes its descriptor; the dup keeps the connection open, no FIN is sent). From then on JavaScript
// encodes each statement (mysql-wire-encode.ts / pg-wire-encode.ts) and submit()s the bytes; this file sends
// them, reads until the response is complete, counts rows and affected rows, and times the statement with
// CLOCK_MONOTONIC where its bytes are sent and where the last byte of its response was read. Errors come
// back whole (the ERR packet's payload, the ErrorResponse's body) for the classifiers in JavaScript; rare
// requests (prepare, all()) come back as the raw response bytes, decoded by mysql-wire-decode.ts /
// pg-wire-decode.ts. The framing and end-of-response rules here mirror those two files (MysqlPacketReader,
// onResultPacket, onPrepareOk; PgMessageReader, tagCount, onReadyForQuery).
//
// Why design B (epoll driven from the load worker's own thread), and D where it does better (below).
// Measured with bench/native-floor.ts, the raw point select of bench/node-floor.ts on this 2-core machine
// (see docs/performance.md):
//  (A) a thread per connection with blocking send/recv, completions handed to the JS thread through a
//      mutex + condition variable: every statement costs two cross-thread wake-ups (submit wakes the I/O
//      thread, the completion wakes the JS thread), each a futex and a context switch on a machine whose
//      two cores the server needs too;
//  (B) non-blocking send() in submit(), and wait() = epoll_wait over all connections of the worker, reading
//      and parsing each ready socket to the end of its response, returning every completion of the round as
//      one batch in a Float64Array: no thread hand-off at all, and one return into JavaScript per batch
//      rather than per read. The JS worker thread is dedicated to load, so it may block here (bounded by
//      the timeout JavaScript passes: the next timer it knows of, 50 ms at most, and libuv's own epoll
//      descriptor is in the set, so a message from the main thread wakes it too).
// Measured (bench/native-floor.ts --clients 1,8,32 --time 4 --repeat 2 --sysbench, MariaDB and PostgreSQL,
// while the machine was shared, load 13-27): B 12.7-25 us of CPU per query, A 19-56 us, sysbench 9.5-20 us.
// A made more queries per second at 8 and 32 clients there, because 33 runnable threads get a larger share
// of a loaded scheduler than one; on the machine dbsmack shares with the server, the CPU per query is what
// the server loses, and B spends the least of it at every client count. A is kept (init(1)) only so that
// bench/native-floor.ts can repeat the comparison.
// Tried once batches existed and dropped (2026-12): C, B with each batch run on its connection's own thread
// with blocking send/recv (sysbench's pattern, the JavaScript thread woken once per batch through an
// eventfd). oltp_point_select, 6 s, alternated with B and sysbench, two rounds, 2-core KVM guest: MariaDB
// 8 clients 34-37k q/s (B 33-35k), 32 clients 21-23k (B 30-36k, client CPU 41-46 us/query against 21-27);
// PostgreSQL 8 clients 40k (B 46-54k), 32 clients 39-40k (B 40-47k). A wake-up per statement per thread
// costs more than B's one per 1.2 replies, and the cross-CPU wake-ups (IPIs per query, /proc/interrupts)
// doubled. Spinning up to 20-100 us in epoll_wait(0) (with or without sched_yield) before sleeping: MariaDB
// 8 clients 30-33k q/s against B's 34-37k, client CPU 24-34 us/query against 22-24. Each load worker's
// thread pinned to its own CPU (sched_setaffinity): steady-state q/s against B, three rounds, MariaDB 8
// clients 39-48k against 32-40k, but 32 clients 31-35k against 34k and PostgreSQL 8 clients 55-65k
// against 65-67k: within this machine's noise, not kept.
// Tried and dropped (2026-12-02): io_uring in place of epoll_wait, to wake the load thread once per two
// replies (IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN, a multishot POLL_ADD per connection and one on
// libuv's descriptor, io_uring_enter with min_complete 2 and EXT_ARG's min_wait_usec, kernel 6.18).
// MariaDB, 8 clients, 8 s runs alternated with B: 15-22k q/s against 26-30k, client CPU 29-38 us/query
// against 21-26, although the cross-CPU wake-ups fell from 0.18-0.26 to 0.12-0.18 per query (a 15 us
// min-wait: 20-21k against 25-27k). A reply left unread holds its connection idle, and the timer and the
// deferred task work cost more than the wake-up they save. The same rings waiting for one completion
// (epoll's behaviour): MariaDB 8 clients 26-29k against 21-32k, 32 clients 22-26k against 24-28k,
// PostgreSQL 8 clients 37-44k against 34-44k: no better than epoll, not kept.
// D, B for single statements and each statement batch run on its connection's own thread with blocking
// send/recv (the descriptor stays blocking; B's calls pass MSG_DONTWAIT), the connection out of the worker's
// epoll set while its batch runs, the batch's end handed back through an eventfd (2026-12-02). On a faster
// 2-core guest (sysbench 60-110k q/s on MariaDB at 8 clients), where B ran at 0.71-0.88 of sysbench with
// 0.09-0.41 cross-CPU wake-ups per query against sysbench's 0.01-0.22, bench/peers --time 8 --repeat 6
// --variant DBSMACK_NATIVE_DESIGN=0 --variant DBSMACK_NATIVE_DESIGN=2 (B and D after the same peer run, in
// turn), D's q/s against B's: 1 client 1.06 (MariaDB), 1.04 (PostgreSQL, sysbench), 1.04 (pgbench -S), at
// 3-8% less client CPU per query; 8 clients (4 per worker) MariaDB 1.19 [1.01-1.33] at 0.97 of sysbench's
// CPU per query against B's 1.07, but PostgreSQL 0.82 [0.73-0.97] and pgbench 0.87-0.89 at 1.32-1.53 of the
// peer's CPU against B's 1.04-1.18; 32 clients MariaDB 0.95 [0.80-1.11], PostgreSQL 0.92, both costlier.
// A MariaDB server thread answers its one client as sysbench's thread does, and a blocked client thread
// woken by that answer keeps the pair on one CPU; PostgreSQL's backends answer faster than B's loop comes
// round, and a thread per connection there wakes once per statement where B's loop collects several.
// C above is D on a slower guest, where it lost at 32 clients as D does here; at 1 and 8 it was not worse.
// So the default, design 3, chooses per batch (batchOnThread): D for MySQL from 2 connections per worker up
// (up to 8 until 2026-12-06, to 24 until 2026-12-07: see batchOnThread), for PostgreSQL at exactly 2
// (PG_THREADED, since 2026-12-06); B elsewhere; and a worker's only connection is read by the worker's thread
// (solo(), below).
// Against B (when one connection was D), --repeat 4, 1/8/16/32 clients: MariaDB 1.06 / 1.10 / 1.01 / 1.02,
// PostgreSQL 0.99 / 1.02 / 1.07 / 1.04 (the last three B in both: the noise of this machine).
// Where D loses on PostgreSQL (8 clients, 4 s of sched:sched_wakeup system-wide): sysbench's threads and
// their backends wake each other on the same CPU (1.25 wake-ups per query, 3 of 413,000 across CPUs); B in
// a fast run, 1.09 per query, none across; D 1.45 per query, 24-39% of them across CPUs. Pinning each D
// thread to a CPU (pthread_setaffinity_np, id modulo the CPUs) did not keep the backends with them: four
// rounds at 8 clients, against B, MariaDB 1.04 and PostgreSQL 0.90 (D unpinned 1.02 and 0.96). Dropped.
// Where the worker has one connection, design 3 now reads it with blocking recv() on the worker's own thread
// (solo(), 2026-12-04), for single statements and batches alike: D's thread per batch without the hand-off.
// pgbench's TPC-B, one client, 20 s runs alternated (perf stat, /usr/bin/time): context switches per
// transaction 7.1 against D's 10.0 and pgbench's 7.0; system time 281-313 us a transaction against D's
// 320-325 and pgbench's 311-322; whole CPU 368-430 against D's 419-430 (2 of 3 pairs lower). bench/peers
// --clients 1 --repeat 3, against D: within this machine's noise (+-10-25%) either way.
// Design 4 (2026-12-05, DBSMACK_NATIVE_DESIGN=4 with --workers 1; batchOnHelper): one load thread, and every
// second connection's batches on one shared native I/O thread of the core's (B's loop, D's hand-off), so that
// a run has one V8 isolate to start and to compile for while its system calls run on two threads. bench/peers
// --time 8 --clients 32,8 --repeat 2 against the default: start-up 0.21-0.39 s against 0.30-0.51; q/s 0.85
// (MariaDB, 8 clients, where the default runs D) to 1.24; CPU a query after start-up lower on pgbench -S
// (0.90-1.16 of pgbench's against 1.10-1.37), higher on MariaDB (1.10-1.28 of sysbench's against 1.03-1.17)
// and PostgreSQL's point select. At 16 and 64 clients on PostgreSQL (pgbench -S, TPC-B, oltp_read_only) better
// in every row: after start-up 1.05-1.18 of pgbench's CPU a query against 1.07-1.48 (read_only 0.50-0.67 of
// sysbench's against 0.58-0.76), q/s 0.96-1.15 of the default's. The one isolate is what pays most: each of
// two load threads with a shared thread of its own (design 4 without --workers 1, 8 to 32 connections a
// thread) was mixed, 0.92-1.24 of the then default's CPU.
// The default since 2026-12-05 where one load thread holds all of a run's PostgreSQL clients, 16 or more (the
// default worker count is then one: src/driver/native-core.ts loadDesign, src/engine/capacity.ts): against
// the two load threads of before, bench/peers --clients 16,32,64, CPU a query after start-up 0.59-0.72 of
// sysbench's against 0.67-0.96, start-up 0.27-0.43 s against 0.40-0.58. Against one load thread alone (no
// shared thread), 13 pairs by hand at 32 and 64 clients (point select, pgbench -S): 1.01-1.14 of its queries
// a second in 12, at 0.95-1.13 of its CPU a query (median 1.06: the hand-offs); level in bench/peers' pgbench
// rows at 64 clients. Kept for the throughput: the system calls of a load with one JavaScript thread still
// run on two CPUs. Should the shared thread ever leave its loop (a failing epoll_wait), the batches it holds
// end as lost and later ones run on the load thread (helperFail); the next init with no connection open
// makes it again.

#include <node_api.h>
#include <uv.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

// Protocols.
constexpr int P_MYSQL = 0;
constexpr int P_PG = 1;

// Request kinds (submit's `kind`).
constexpr int K_MY_RESULT = 0;   // COM_QUERY / COM_STMT_EXECUTE: OK, ERR or result set(s)
constexpr int K_MY_PREPARE = 1;  // COM_STMT_PREPARE: PREPARE_OK and its definitions (raw bytes back)
constexpr int K_NO_REPLY = 2;    // COM_STMT_CLOSE, COM_QUIT, PostgreSQL Terminate: done once sent
constexpr int K_PG = 3;          // anything ending in Sync or a simple Query: up to ReadyForQuery

// Flags.
constexpr int F_RAW = 1;     // keep the whole response's bytes for JavaScript
constexpr int F_PG_EXT = 2;  // extended protocol (a COPY refusal must Sync again)

// Completion status.
constexpr int ST_OK = 0;    // value = rows (result sets) or affected rows
constexpr int ST_ERR = 1;   // the server's error: bytes = ERR payload / ErrorResponse body
constexpr int ST_RAW = 2;   // bytes = the response
constexpr int ST_LOST = 3;  // the connection is gone: value = errno (0: closed by the server); bytes =
                            // the error the server sent before closing, if any
constexpr int ST_BATCH = 4; // a batch ended (submitBatch): value = the statements it has results for

constexpr size_t MAX_PAYLOAD = 0xffffff;
constexpr uint32_t SERVER_MORE_RESULTS_EXISTS = 0x8;

// Parts of a MySQL result (as mysql-lean.ts's RS_*).
constexpr int RS_HEAD = 0;
constexpr int RS_COLUMNS = 1;
constexpr int RS_COLUMNS_EOF = 2;
constexpr int RS_ROWS = 3;

// open()'s MySQL session options: the capabilities the handshake settled that change how responses end.
constexpr int O_DEPRECATE_EOF = 1;    // an OK packet (0xFE header) ends the rows; no EOF packets
constexpr int O_CACHE_METADATA = 2;   // MariaDB's MARIADB_CLIENT_CACHE_METADATA: column count packets carry
                                      // a byte saying whether the column definitions follow

// A measuring knob's count from the environment (src/driver/connectors.ts loadEnvironmentNotes checks it the
// same way): strtol to the end, not negative, at most `most`; `notAsked` when unset, empty or not a count.
int envCount(const char* name, int notAsked, int most) {
  const char* v = getenv(name);
  if (v == nullptr || *v == 0) return notAsked;
  char* end = nullptr;
  long n = strtol(v, &end, 10);
  if (*end != 0 || n < 0) return notAsked;
  return n > most ? most : static_cast<int>(n);
}

double monoUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct Completion {
  int id;
  int status;
  double value;
  double latencyUs;
};

struct Core;

struct Conn {
  Core* core = nullptr;
  int id = -1;
  int fd = -1;
  int proto = P_MYSQL;
  bool deprecateEof = false;
  bool cacheMetadata = false;
  bool dead = false;
  bool inEpoll = false;
  int ep = -1;  // the epoll set it is in while inEpoll: its core's, or (design 4) the shared I/O thread's
  int lostErrno = 0;

  // Unparsed input: in[inStart, in.size()).
  std::vector<uint8_t> in;
  size_t inStart = 0;

  // The request in flight.
  bool busy = false;
  int kind = 0;
  int flags = 0;
  double tSend = 0;
  // MySQL result state.
  int part = RS_HEAD;
  uint64_t left = 0;
  double rows = 0;
  double affected = 0;
  bool sawResultSet = false;
  // A 16 MiB+ logical packet in pieces: its first byte, and whether a continuation follows.
  bool continued = false;
  int firstByte = 0;
  size_t logicalLen = 0;
  // PostgreSQL.
  double pgRows = 0;
  double pgCount = 0;
  bool errSeen = false;

  // Bytes for JavaScript (error or raw response), and the last error the server sent unasked.
  std::vector<uint8_t> out;
  std::vector<uint8_t> fatal;
  // Bytes not yet sent (design B: the kernel took only part of them).
  std::vector<uint8_t> wq;
  size_t wqOff = 0;

  // A batch (submitBatch, designs B and D): statements sent one after another on this connection, each
  // when the response to the one before is complete, without returning to JavaScript in between. Each
  // statement's result goes into JavaScript's Float64Array `bRes` as it completes: bRes[0] = statements with
  // a result, then per statement [status, value, latencyUs, endUs], endUs from the batch's submit. The
  // array is a field of the JavaScript connection's batch, which keeps it alive while the batch is in
  // flight. One thread writes it: the worker's inside wait(), when no JavaScript runs (B), or the
  // connection's own (D), while JavaScript may read the count that covers finished entries (an interval's
  // harvest; see complete()).
  bool inBatch = false;
  bool bAdvance = false;  // the statement before completed: send the next (after the parse returns)
  int bKind = 0;
  int bFlags = 0;
  std::vector<uint8_t> bBytes;
  std::vector<uint32_t> bOff;
  size_t bCount = 0;
  size_t bNext = 0;
  // Statements per event (submitBatch's `group`): the budget is looked at only where an event starts, so an
  // event of several statements (a pgbench transaction, BEGIN to END) is never cut in the middle.
  size_t bGroup = 1;
  double* bRes = nullptr;
  double bStart = 0;
  double bDeadline = 0;

  // solo(): SO_RCVTIMEO is set on the descriptor (SOLO_SLICE_MS), so a blocking recv() returns in time.
  bool sliced = false;

  // followServer(): the server is on this machine (set by open()), and the reads since the last look.
  bool local = false;
  int followReads = 0;

  // Design D: the batch runs on this connection's own thread (`threaded`, from submitBatch until wait()
  // hands its ST_BATCH completion over); the connection is out of the worker's epoll set meanwhile.
  bool threaded = false;
  bool bGo = false;
  Completion bDone{};

  // Design 4: this connection's batches run on the core's shared I/O thread (`toHelper`, chosen at open);
  // `onHelper` while the I/O thread has the batch (from submitBatch until it hands the ST_BATCH over), under
  // the core's `hm`.
  bool toHelper = false;
  bool onHelper = false;

  // Designs A and D.
  std::thread thread;
  std::mutex m;
  std::condition_variable cv;
  bool haveRequest = false;
  bool quit = false;
  int nextKind = 0;
  int nextFlags = 0;
};

struct Core {
  int design = 0;  // 0: B (epoll on the caller's thread); 1: A (thread per connection); 2: D (B + batches
                   // on a thread per connection); 3: B or D for each batch (batchOnThread, the default);
                   // 4: B + every second connection's batches on one shared I/O thread (batchOnHelper)
  int live = 0;    // connections open
  Conn* only = nullptr;  // the connection, while exactly one is open (solo())
  int ep = -1;
  int uvFd = -1;
  uv_loop_t* loop = nullptr;  // the thread's libuv loop: its timers bound wait() (uvTimerLeftMs)
  int evFd = -1;  // design D: the batch threads' completions are waiting in `queue`
  std::vector<Conn*> conns;
  std::vector<int> freeIds;
  std::vector<Completion> ready;  // completions not yet handed to JavaScript (design B, and errors)
  // Design A: completions from the I/O threads.
  std::mutex m;
  std::condition_variable cv;
  std::deque<Completion> queue;
  // Design 4: the shared I/O thread (helperThread), its epoll set and eventfd, the batches handed to it and
  // the connections to drop (closeConn), under `hm`; `hcv` tells closeConn a drop is done.
  std::thread helper;
  int hEp = -1;
  int hEv = -1;
  int helperConns = 0;  // open connections whose batches go to it (every second one: balanced at open)
  std::mutex hm;
  std::condition_variable hcv;
  std::vector<Conn*> hInbox;
  std::vector<Conn*> hDrop;
  bool hQuit = false;
  bool hDead = false;   // under hm: the thread left its loop on a failure (helperFail); batches run here
  bool hFail = false;   // under hm: failSharedThread() (tests) asks it to leave as on a failure
  std::atomic<int> yields{0};  // sched_yields before a sleep in epoll_wait (waitYielding), set by open()
};

// One core per load worker (each worker thread is its own Node-API environment and calls in from its own
// thread only).
thread_local Core* tcore = nullptr;

void complete(Conn* c, int status, double value, double tDone) {
  c->busy = false;
  if (c->inBatch) {
    // One statement of a batch: its result goes straight into the batch's array. The batch goes on while
    // statements succeed, until its last one or the first that ends an event at or after its deadline (an
    // event is only started before it, as the JavaScript loop starts one only before its deadline; the
    // statements of an event started all run); it ends at its first error, which JavaScript then handles
    // as on the per-statement path.
    double* r = c->bRes;
    size_t i = static_cast<size_t>(r[0]);
    double* e = r + 1 + 4 * i;
    e[0] = status;
    e[1] = value;
    e[2] = tDone - c->tSend;
    e[3] = tDone - c->bStart;
    // Design D: JavaScript may read the count while this thread writes (an interval's harvest): the
    // statement's entries are written before the count that covers them.
    std::atomic_thread_fence(std::memory_order_release);
    r[0] = static_cast<double>(i + 1);
    if (status == ST_OK && c->bNext < c->bCount && (c->bNext % c->bGroup != 0 || tDone < c->bDeadline) &&
        !c->dead) {
      c->bAdvance = true;
      return;
    }
    c->inBatch = false;
    Completion done{c->id, ST_BATCH, static_cast<double>(i + 1), tDone - c->bStart};
    if (c->threaded)
      c->bDone = done;  // the batch thread hands it over when its loop sees the batch ended
    else
      c->core->ready.push_back(done);
    return;
  }
  Completion done{c->id, status, value, tDone - c->tSend};
  if (c->core->design == 1) {
    std::lock_guard<std::mutex> g(c->core->m);
    c->core->queue.push_back(done);
    c->core->cv.notify_one();
  } else {
    c->core->ready.push_back(done);
  }
}

// ---- MySQL -----------------------------------------------------------------------------------------------

uint64_t lenenc(const uint8_t* b, size_t* o) {
  uint8_t h = b[*o];
  if (h < 0xfb) {
    *o += 1;
    return h;
  }
  if (h == 0xfc) {
    uint64_t v = b[*o + 1] | (b[*o + 2] << 8);
    *o += 3;
    return v;
  }
  if (h == 0xfd) {
    uint64_t v = b[*o + 1] | (b[*o + 2] << 8) | (b[*o + 3] << 16);
    *o += 4;
    return v;
  }
  uint64_t v = 0;
  for (int i = 8; i >= 1; i--) v = (v << 8) | b[*o + i];
  *o += 9;
  return v;
}

// OK packet at p (header byte included): sets affected, returns the status flags.
uint32_t okStatus(Conn* c, const uint8_t* p) {
  size_t o = 1;
  c->affected = static_cast<double>(lenenc(p, &o));
  lenenc(p, &o);  // last insert id
  return p[o] | (p[o + 1] << 8);
}

void sendSmall(Conn* c, const uint8_t* b, size_t n) {
  // A few bytes the protocol answers with (empty LOCAL INFILE file, CopyFail): the socket buffer has room.
  while (n > 0) {
    ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    b += w;
    n -= static_cast<size_t>(w);
  }
}

// One logical packet of a MySQL response; `p` is its payload when it is short (not a 16 MiB+ packet).
void mysqlPacket(Conn* c, const uint8_t* p, size_t len, int h, uint8_t seq, double t) {
  if (!c->busy) {
    // Unrequested: the server says why it is about to close (e.g. 1927 connection killed).
    if (h == 0xff && c->fatal.empty()) c->fatal.assign(p, p + len);
    return;
  }
  if (c->kind == K_MY_PREPARE) {
    if (c->part == RS_HEAD) {
      if (h == 0xff) {
        c->out.assign(p, p + len);
        complete(c, ST_ERR, 0, t);
        return;
      }
      uint32_t cols = p[5] | (p[6] << 8);
      uint32_t params = p[7] | (p[8] << 8);
      c->left = params + cols;
      if (!c->deprecateEof) c->left += (params > 0 ? 1 : 0) + (cols > 0 ? 1 : 0);
      c->part = RS_COLUMNS;
      if (c->left == 0) complete(c, ST_RAW, 0, t);
    } else if (--c->left == 0) {
      complete(c, ST_RAW, 0, t);
    }
    return;
  }
  bool raw = (c->flags & F_RAW) != 0;
  switch (c->part) {
    case RS_ROWS:
      if (h == 0xfe && len < MAX_PAYLOAD) {
        uint32_t status = c->deprecateEof ? okStatus(c, p) : (p[3] | (p[4] << 8));
        if (status & SERVER_MORE_RESULTS_EXISTS)
          c->part = RS_HEAD;
        else
          complete(c, raw ? ST_RAW : ST_OK, c->rows, t);
      } else if (h == 0xff) {
        c->out.assign(p, p + len);
        complete(c, ST_ERR, 0, t);
      } else {
        c->rows++;
      }
      return;
    case RS_HEAD:
      if (h == 0x00) {
        uint32_t status = okStatus(c, p);
        if (status & SERVER_MORE_RESULTS_EXISTS) return;
        complete(c, raw ? ST_RAW : ST_OK, c->sawResultSet ? c->rows : c->affected, t);
      } else if (h == 0xff) {
        c->out.assign(p, p + len);
        complete(c, ST_ERR, 0, t);
      } else if (h == 0xfb) {
        uint8_t empty[4] = {0, 0, 0, static_cast<uint8_t>(seq + 1)};
        sendSmall(c, empty, 4);
      } else {
        size_t o = 0;
        c->left = lenenc(p, &o);
        c->sawResultSet = true;
        if (c->cacheMetadata && o < len && p[o] == 0) {
          // The server left the (unchanged) column definitions out.
          c->left = 0;
          c->part = c->deprecateEof ? RS_ROWS : RS_COLUMNS_EOF;
        } else {
          c->part = RS_COLUMNS;
        }
      }
      return;
    case RS_COLUMNS:
      if (--c->left == 0) c->part = c->deprecateEof ? RS_ROWS : RS_COLUMNS_EOF;
      return;
    default:
      c->part = RS_ROWS;
  }
}

// Parse the whole packets in data[0, n); stops after the one that completes the request. Returns the
// bytes used.
size_t mysqlFeed(Conn* c, const uint8_t* in, size_t n, double t) {
  size_t o = 0;
  while (n - o >= 4) {
    size_t len = in[o] | (in[o + 1] << 8) | (in[o + 2] << 16);
    if (n - o < 4 + len) break;
    const uint8_t* p = in + o + 4;
    uint8_t seq = in[o + 3];
    bool wasBusy = c->busy;
    if (wasBusy && (c->flags & F_RAW)) c->out.insert(c->out.end(), in + o, in + o + 4 + len);
    if (!c->continued) {
      c->firstByte = len > 0 ? p[0] : -1;
      c->logicalLen = 0;
    }
    c->logicalLen += len;
    o += 4 + len;
    if (len == MAX_PAYLOAD) {
      c->continued = true;
      continue;
    }
    bool big = c->continued;
    c->continued = false;
    // A joined packet is a row (or a huge value): only its first byte and length matter here.
    mysqlPacket(c, big ? nullptr : p, big ? c->logicalLen : len, c->firstByte, seq, t);
    if (wasBusy && !c->busy) break;
  }
  return o;
}

// ---- PostgreSQL ------------------------------------------------------------------------------------------

double tagCount(const uint8_t* b, size_t n, double rows) {
  // b: the tag without its NUL. SELECT/SHOW/FETCH (S…, F…): the DataRows counted; else the last number.
  if (n > 0 && (b[0] == 'S' || b[0] == 'F')) return rows;
  double v = 0, mul = 1;
  for (size_t i = n; i > 0; i--) {
    uint8_t ch = b[i - 1];
    if (ch < '0' || ch > '9') break;
    v += (ch - '0') * mul;
    mul *= 10;
  }
  return v;
}

bool pgFatal(const uint8_t* body, size_t len) {
  // Severity field V (not localised), else S.
  size_t p = 0;
  bool fatal = false;
  while (p < len && body[p] != 0) {
    uint8_t field = body[p];
    const char* v = reinterpret_cast<const char*>(body + p + 1);
    size_t z = p + 1;
    while (z < len && body[z] != 0) z++;
    if (field == 'V' || field == 'S') fatal = strcmp(v, "FATAL") == 0 || strcmp(v, "PANIC") == 0;
    p = z + 1;
  }
  return fatal;
}

size_t pgFeed(Conn* c, const uint8_t* in, size_t n, double t) {
  size_t o = 0;
  while (n - o >= 5) {
    uint32_t len = (static_cast<uint32_t>(in[o + 1]) << 24) | (in[o + 2] << 16) | (in[o + 3] << 8) | in[o + 4];
    if (n - o < 1 + static_cast<size_t>(len)) break;
    uint8_t type = in[o];
    const uint8_t* body = in + o + 5;
    size_t blen = len - 4;
    bool busy = c->busy;
    if (busy && (c->flags & F_RAW)) c->out.insert(c->out.end(), in + o, in + o + 1 + len);
    o += 1 + len;
    if (!busy) {
      if (type == 'E' && pgFatal(body, blen)) c->fatal.assign(body, body + blen);
      continue;
    }
    switch (type) {
      case 'D':
        c->pgRows++;
        break;
      case 'C':
        c->pgCount += tagCount(body, blen > 0 ? blen - 1 : 0, c->pgRows);
        c->pgRows = 0;
        break;
      case 'E':
        if (!c->errSeen) {
          c->errSeen = true;
          if (c->flags & F_RAW) c->out.clear();
          c->out.assign(body, body + blen);
        }
        if (pgFatal(body, blen)) c->fatal.assign(body, body + blen);
        break;
      case 'G': {
        // CopyInResponse: dbsmack sends no COPY data; refuse (and Sync again on the extended protocol).
        static const char msg[] = "dbsmack sends no COPY data";
        uint8_t b[5 + sizeof msg + 5];
        uint32_t l = 4 + sizeof msg;
        b[0] = 'f';
        b[1] = l >> 24;
        b[2] = l >> 16;
        b[3] = l >> 8;
        b[4] = l;
        memcpy(b + 5, msg, sizeof msg);
        size_t total = 5 + sizeof msg;
        if (c->flags & F_PG_EXT) {
          uint8_t sync[5] = {'S', 0, 0, 0, 4};
          memcpy(b + total, sync, 5);
          total += 5;
        }
        sendSmall(c, b, total);
        break;
      }
      case 'Z':
        if (c->errSeen)
          complete(c, ST_ERR, 0, t);
        else
          complete(c, (c->flags & F_RAW) ? ST_RAW : ST_OK, c->pgCount, t);
        break;
      default:
        break;
    }
    if (!c->busy) break;
  }
  return o;
}

size_t parse(Conn* c, const uint8_t* data, size_t n, double t) {
  return c->proto == P_MYSQL ? mysqlFeed(c, data, n, t) : pgFeed(c, data, n, t);
}

// Parse bytes kept from earlier reads (c->in), as far as they go.
void feed(Conn* c, double t) {
  if (c->inStart >= c->in.size()) return;
  c->inStart += parse(c, c->in.data() + c->inStart, c->in.size() - c->inStart, t);
  // Keep the buffer small: drop what was parsed, and a buffer grown past 1 MiB for one huge value.
  if (c->inStart == c->in.size()) {
    c->in.clear();
    c->inStart = 0;
    if (c->in.capacity() > (1u << 20)) c->in.shrink_to_fit();
  } else if (c->inStart > 65536) {
    c->in.erase(c->in.begin(), c->in.begin() + static_cast<long>(c->inStart));
    c->inStart = 0;
  }
}

// `n` bytes just read into `buf`: parsed in place when nothing is kept from before (the usual case);
// what a message spanning reads leaves is kept in c->in. While a request is complete and another is not
// yet sent, bytes after it wait in c->in too.
void received(Conn* c, const uint8_t* buf, size_t n, double t) {
  if (c->in.size() > c->inStart) {
    c->in.insert(c->in.end(), buf, buf + n);
    feed(c, t);
    // The request may have completed with more (unasked) bytes behind it: parse those too.
    if (!c->busy) feed(c, t);
    return;
  }
  size_t used = parse(c, buf, n, t);
  if (used < n && !c->busy) used += parse(c, buf + used, n - used, t);
  if (used < n) {
    c->in.assign(buf + used, buf + n);
    c->inStart = 0;
  }
}

// One read buffer per thread: the load worker's, and each I/O thread's in design A.
thread_local uint8_t readBuffer[65536];

void startRequest(Conn* c, int kind, int flags) {
  c->busy = true;
  c->kind = kind;
  c->flags = flags;
  c->part = RS_HEAD;
  c->left = 0;
  c->rows = 0;
  c->affected = 0;
  c->sawResultSet = false;
  c->pgRows = 0;
  c->pgCount = 0;
  c->errSeen = false;
  c->out.clear();
}

void dropFromEpoll(Conn* c) {
  if (c->inEpoll) {
    epoll_ctl(c->ep, EPOLL_CTL_DEL, c->fd, nullptr);
    c->inEpoll = false;
  }
}

// The connection is gone: the request in flight (if any) completes as lost.
void lost(Conn* c, int err, double t) {
  if (c->dead) return;
  c->dead = true;
  c->lostErrno = err;
  if (c->core->design != 1) dropFromEpoll(c);
  if (c->busy) {
    c->out = c->fatal;
    complete(c, ST_LOST, err, t);
  }
}

void batchNext(Conn* c);

// Read what the socket has (design B: non-blocking) and parse it. Returns false when the peer is gone.
bool readSome(Conn* c) {
  for (;;) {
    ssize_t r = recv(c->fd, readBuffer, sizeof readBuffer, MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      lost(c, errno, monoUs());
      return false;
    }
    double t = monoUs();
    if (r == 0) {
      lost(c, 0, t);
      return false;
    }
    received(c, readBuffer, static_cast<size_t>(r), t);
    if (c->bAdvance) batchNext(c);
    if (static_cast<size_t>(r) < sizeof readBuffer) return true;
  }
}

// ---- following the server's thread to its CPU ------------------------------------------------------------

// A connection's own thread, running a batch with blocking recv() (design D), moves now and then to the CPU its
// server thread last replied from. Why: on a machine the server shares, a client thread on the CPU of the server
// thread it wakes preempts it there and has sent its next statement before the server thread looks for one, so
// neither sleeps, and no wake-up crosses CPUs; a pair split over two CPUs costs each statement a sleep and a
// reschedule interrupt. The kernel's wake-up rules keep a pair together once it is, but bring it together slowly:
// MariaDB point select at 32 clients (2026-12-07, a 2-core AMD EPYC PVM guest, per second of 10 s runs) began at
// 17-29k q/s with its server's threads sleeping 0.4-1.0 times a query, 45% of the server's wake-ups of a client
// thread crossing CPUs (sched_wakeup traces), and rose by 30-75% over the next 3-7 s as the sleeps fell to
// 0.01-0.1 a query; sysbench's threads, which meet their server threads at the connection's first statement, ran
// level from the first second at 0.1-0.2. The CPU the reply came from is the socket's SO_INCOMING_CPU (on loopback
// the sender's: the softirq that delivers it runs there); a thread not on it asks for that CPU alone and then for
// its whole mask again (sched_setaffinity twice: it moves now, and the scheduler stays free to move it later). A
// look is a system call (1.2 us on that guest), a move about 19 us, so the core looks every FOLLOW_EVERY-th read.
// Measured (bench/peers --time 8 --clients 8,32 --repeat 3 --only mysql, each round's sysbench run then the
// variants in turn): the server's sleeps a query 0.04-0.06 looking at every 16th read or every read, against
// 0.20-0.41 without and sysbench's 0.11-0.21; q/s 1.05-1.12 of sysbench's (every read 1.03-1.09) against 0.90-1.00
// without; the client's CPU a query after start-up 0.88 of sysbench's (every read 0.90-0.96) against 0.86-1.10
// without; the server's CPU a query 25.1-33.0 us against 27.5-34.3.
// Only where the server is on this machine (the connection's two ends have one address: sameHost): a remote
// server's replies come from the CPU that took the network card's interrupt, and following every connection there
// could pile the client threads onto one CPU. A Unix socket has no incoming CPU (-1): nothing moves.
// Not in solo() (a load thread with one connection): at 1 client a server thread sleeps at every statement
// wherever its client runs, and following there made 0.93-0.99 of sysbench's and pgbench's q/s against 1.01-1.05
// without, at 1.02-1.10 times the CPU a query after start-up; at 4 PostgreSQL clients (a load thread each) it was
// level (bench/peers --clients 1,4 --repeat 3, a build that followed there too).
// DBSMACK_NATIVE_FOLLOW=N looks every N-th read instead, 0 never (to measure).
constexpr int FOLLOW_EVERY = 16;
static const int followEvery = envCount("DBSMACK_NATIVE_FOLLOW", FOLLOW_EVERY, 1000000);

// Whether the socket's two ends have one address (the server is on this machine: loopback, or this host's
// own address).
bool sameHost(int fd) {
  sockaddr_storage a{}, b{};
  socklen_t la = sizeof a, lb = sizeof b;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &la) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&b), &lb) != 0) return false;
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET)
    return reinterpret_cast<sockaddr_in*>(&a)->sin_addr.s_addr == reinterpret_cast<sockaddr_in*>(&b)->sin_addr.s_addr;
  if (a.ss_family == AF_INET6)
    return memcmp(&reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr, &reinterpret_cast<sockaddr_in6*>(&b)->sin6_addr,
                  sizeof(in6_addr)) == 0;
  return false;  // a Unix socket: no incoming CPU to follow
}

// After a read on `c` by a thread that waits for it alone: every followEvery-th time, move to the CPU the
// reply came from if this thread is not on it.
void followServer(Conn* c) {
  if (!c->local || followEvery == 0 || ++c->followReads < followEvery) return;
  c->followReads = 0;
  int from = -1;
  socklen_t l = sizeof from;
  if (getsockopt(c->fd, SOL_SOCKET, SO_INCOMING_CPU, &from, &l) != 0 || from < 0 || from >= CPU_SETSIZE) return;
  if (sched_getcpu() == from) return;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(from, &mask)) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(from, &one);
  if (sched_setaffinity(0, sizeof one, &one) == 0) sched_setaffinity(0, sizeof mask, &mask);
}

// ---- design B: sending and waiting on the caller's thread --------------------------------------------------

void flushWrite(Conn* c) {
  while (c->wqOff < c->wq.size()) {
    ssize_t w = send(c->fd, c->wq.data() + c->wqOff, c->wq.size() - c->wqOff, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT;
        ev.data.u64 = static_cast<uint64_t>(c->id);
        epoll_ctl(c->ep, EPOLL_CTL_MOD, c->fd, &ev);
        return;
      }
      lost(c, errno, monoUs());
      return;
    }
    c->wqOff += static_cast<size_t>(w);
  }
  c->wq.clear();
  c->wqOff = 0;
}

void sendB(Conn* c, const uint8_t* b, size_t n) {
  if (!c->wq.empty()) {
    c->wq.insert(c->wq.end(), b, b + n);
    return;
  }
  size_t off = 0;
  while (off < n) {
    ssize_t w = send(c->fd, b + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        c->wq.assign(b + off, b + n);
        c->wqOff = 0;
        flushWrite(c);
        return;
      }
      lost(c, errno, monoUs());
      return;
    }
    off += static_cast<size_t>(w);
  }
}

// Send the batch's next statement (the one before it completed). Its completion may come at once (bytes
// that arrived before, a lost connection), so this loops.
void batchNext(Conn* c) {
  while (c->bAdvance) {
    c->bAdvance = false;
    size_t i = c->bNext++;
    startRequest(c, c->bKind, c->bFlags);
    c->tSend = monoUs();
    sendB(c, c->bBytes.data() + c->bOff[i], c->bOff[i + 1] - c->bOff[i]);
    if (c->busy && c->inStart < c->in.size()) feed(c, c->tSend);
  }
}

// Design D: the batches the connections' threads finished; each connection goes back into the epoll set.
void takeThreadedCompletions() {
  uint64_t v;
  if (read(tcore->evFd, &v, sizeof v) < 0 && errno != EAGAIN) return;
  std::lock_guard<std::mutex> g(tcore->m);
  while (!tcore->queue.empty()) {
    Completion d = tcore->queue.front();
    tcore->queue.pop_front();
    Conn* c = tcore->conns[static_cast<size_t>(d.id)];
    if (c == nullptr) continue;
    c->threaded = false;
    if (!c->dead && !c->inEpoll) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = static_cast<uint64_t>(c->id);
      if (epoll_ctl(tcore->ep, EPOLL_CTL_ADD, c->fd, &ev) == 0) {
        c->inEpoll = true;
        c->ep = tcore->ep;
      }
    }
    tcore->ready.push_back(d);
  }
}

// Milliseconds until the earliest timer of the thread's libuv loop is due (0: due now), or -1 when none is
// armed. wait() never blocks past it: the thread's JavaScript timers (setTimeout, setInterval: Node keeps
// them all behind one uv_timer_t, re-armed for the earliest) fire on time, which matters where the load runs
// in the main thread beside the engine (its deadline, progress lines, probes: spawn.ts MainThreadLoad).
// libuv has no public call for this: uv_backend_timeout() is 0 whenever a JavaScript callback runs (Node 20:
// in an immediate, in a timer's callback), so the loop's timer heap is read instead. Its `min` points at the
// heap node of the earliest uv_timer_t, the field that follows timer_cb (`heap_node` in libuv 1.46 of Node
// 20; a union `node` in later libuv, at the same place), and that timer's `timeout` is in the loop's
// milliseconds (uv_now). The addon is built against the running Node's own headers (node-gyp), so the
// layout is the one the loop has. Checked in a scratch addon: 1 in an immediate before a 5 ms setTimeout,
// 30 after adding a 30 ms one, -1 inside a timer's callback (Node re-arms its handle after the list runs;
// wait() is never called there: the pump runs from setImmediate).
#if UV_VERSION_MAJOR == 1 && UV_VERSION_MINOR < 48
static_assert(offsetof(uv_timer_t, heap_node) == offsetof(uv_timer_t, timer_cb) + sizeof(uv_timer_cb),
              "the heap node follows timer_cb");
#endif
int uvTimerLeftMs() {
  uv_loop_t* loop = tcore->loop;
  if (loop == nullptr || loop->timer_heap.min == nullptr) return -1;
  const char* node = static_cast<const char*>(loop->timer_heap.min);
  const uv_timer_t* t = reinterpret_cast<const uv_timer_t*>(
      node - (offsetof(uv_timer_t, timer_cb) + sizeof(uv_timer_cb)));
  uv_update_time(loop);
  uint64_t now = uv_now(loop);
  if (t->timeout <= now) return 0;
  uint64_t left = t->timeout - now;
  return left > 0x7fffffff ? 0x7fffffff : static_cast<int>(left);
}

// Design 3, a worker with one connection (pgbench -c 1, or -c N -j N; the engine's --workers as many as the
// clients): its request or batch in flight is read with a blocking recv() on this thread, as pgbench's and
// sysbench's threads read theirs: no epoll_wait before each read (design B), and no hand-off of each batch to
// a thread of its own and back (design D: two epoll_ctl, an eventfd write and read, a futex or three and two
// context switches a batch). Both were the cost of short batches: pgbench's TPC-B, seven statements a
// transaction, made ten context switches a transaction against pgbench's seven (see docs/performance.md).
// The descriptor is blocking in designs 2 and 3; SO_RCVTIMEO bounds each recv() to SOLO_SLICE_MS, after
// which wait() looks at libuv's descriptor (a message from the main thread, a signal, an admin connection's
// reply) and at its timeout. The thread's JavaScript timers (the deadline, progress lines, a 5 ms chain in
// test/main-thread-load.test.ts) still fire on time: when the next is due sooner than a slice, wait()
// waits in epoll_wait for that stretch instead (a recv() slice would make them up to a slice late: the
// chain ticked 59 times a second instead of ~190 on a loaded machine). The slice is set once per connection, not per call (a system call each). At 2 ms the thread woke
// about 125 times a second through a pg_sleep, 1.5% of a CPU; at 10 ms its CPU over 2 s of pg_sleep(0.5)
// statements is D's (0.13-0.18 s user, start-up included, against 0.17-0.18).
constexpr int SOLO_SLICE_MS = 10;

Conn* solo() {
  Conn* c = tcore->only;
  if (tcore->design != 3 || c == nullptr || c->dead || c->threaded || !c->busy || !c->wq.empty()) return nullptr;
  return c;
}

// One blocking read of the solo connection. False when the slice ended with nothing to read.
bool soloRead(Conn* c) {
  if (!c->sliced) {
    timeval tv{0, SOLO_SLICE_MS * 1000};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    c->sliced = true;
  }
  for (;;) {
    ssize_t r = recv(c->fd, readBuffer, sizeof readBuffer, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    double t = monoUs();
    if (r <= 0) {
      lost(c, r < 0 ? errno : 0, t);
      return true;
    }
    received(c, readBuffer, static_cast<size_t>(r), t);
    if (c->bAdvance) batchNext(c);
    return true;
  }
}

// A connection's epoll event (`tag`: its id), in B's loop and the shared I/O thread's: what was left to send
// goes (and the connection waits for reads only once it has), then what came is read.
void connEvent(Conn* c, uint32_t events, uint64_t tag) {
  if (events & EPOLLOUT) {
    flushWrite(c);
    if (c->wq.empty() && !c->dead && c->inEpoll) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag;
      epoll_ctl(c->ep, EPOLL_CTL_MOD, c->fd, &ev);
    }
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) readSome(c);
}

// How many times a thread that would block in epoll_wait first gives its CPU away (sched_yield) and looks
// again without waiting: design B's loop (waitB) and the shared I/O thread. Why: on a small machine the
// server's process or thread that will answer next is often runnable on this very CPU; yielding lets it run
// and reply, and the loop goes on without sleeping, where a sleep costs a context switch and, when the reply
// comes from the other CPU, a reschedule interrupt (both dear in a virtual machine: the hypervisor's
// pvm_irq_enable was half of a load thread's samples). pgbench's threads do the same in effect: before
// poll() they try every connection in turn with a non-blocking read (a fifth of its reads come back empty),
// and call poll() once every 115 queries at 32 clients (perf trace -s), where dbsmack's loops called
// epoll_wait once every 18.
// Measured (2026-12-05, bench/peers --time 8 --repeat 2, `--only mysql,postgres,pgbench`, two runs, the
// second with 1, 3 and 8 yields; the same figures under DBSMACK_SPIN, its first name): at 32 clients, 3
// against none, reschedule interrupts a query 0.08 -> 0.04 (pgbench's), PostgreSQL's throughput 1.04-1.18 of
// the no-yield one's at 0.84-0.96 of its CPU a query after start-up, MariaDB 1.07 and 0.96 (noise); at 8
// clients MariaDB 1.06, PostgreSQL 1.00-1.02. One yield was half the gain, eight no better than three (on
// that machine; on the twenty-first session's the second and third found a reply in 0.1% of the rounds: one
// since, below). When nothing else is runnable a yield returns at once: three yields and three empty
// epoll_waits cost about 2 us before a sleep. For MySQL/MariaDB none: three rounds of 0 against 3 (--clients
// 32,8 --repeat 3 --only mysql) gave 0.96 and 0.95 of the throughput, at 32 clients at 1.26 of the CPU a query
// (measured part). One, with the rule below (2026-12-05, MariaDB point select, bench/peers --time 8 --only
// mysql, a build with it and one without as the variants, in either order): at 32 clients (16 connections a
// load thread) 1.02-1.09 of the throughput at 0.86-0.92 of the CPU a query after start-up in four runs of
// six, 0.97 at 1.29 and 0.99 at 0.98 in the other two; at 24 (12 a thread) 0.83 and 0.80 at 1.26 and 1.28,
// at 48 0.83, at 64 1.05 and 0.88 at 1.05-1.13, at 8 (four a thread, design D) 0.94-0.96. Not kept.
// DBSMACK_NATIVE_YIELDS=N sets the count for both (0: none). A core's connections are one run's, of one
// protocol: open() sets the core's count from the protocol.
constexpr int YIELDS_PG = 1;
constexpr int YIELDS_MYSQL = 0;
// -1: not asked (or not a count: as DBSMACK_NATIVE_DESIGN, ignored)
static const int yieldsAsked = envCount("DBSMACK_NATIVE_YIELDS", -1, 100);

// The yields give up when they keep finding nothing: a thread keeps the share of its recent yielding rounds
// that found a reply (a connection's event or a batch's end; a message or a timer of the thread's own loop is
// neither a find nor a miss), an average that each round moves an eighth of the way, and yields only while
// that share is at least half, else in every YIELD_PROBE-th round, whose find or miss moves the share as any
// round's. Where nothing the yields let run would answer sooner (statements that sleep or wait for locks in
// the server) they are system calls for nothing. The share is the thread's and outlives a run: a sweep's next
// run may start with the yields off, and its probes' finds bring them back within a few dozen rounds.
// Measured (2026-12-05, twenty-first session; counters in a build of this function, 5 s runs): a round's
// first yield finds a reply or none does. `dbsmack pgbench -S` at 8 and 32 clients, `run oltp_point_select` at
// 8: 98-99.8% of the rounds found one at the first yield, 0.1% at the second or third. pgbench's TPC-B at 16
// clients (`-c 16 -j 2`; its updates wait for each other's locks), under the rule of before (three yields;
// after four rounds in a row with no find, a yield in every eighth round only): 15-17% of the waits found a
// reply at the first yield, 2% at the second and third, 80% slept, and a statement cost 1.14 yields and 1.74
// epoll_waits; with one yield, 36% of the rounds that yielded found one. So one yield (YIELDS_PG), and the
// share decides: the same TPC-B (perf stat) 0.13 yields, 0.94 epoll_waits and 0.91 context switches a
// statement against 1.14, 1.74 and 1.17; client CPU a transaction in four pairs of 8 s runs 0.86-0.99 of the
// rule of before's, bench/peers (`--clients 64,16 --repeat 3 --only pgbench-tpcb`) 0.92 of its CPU after
// start-up at 64 clients at 1.06 of its throughput, level at 16; `-S` and the point select at 8 and 32
// clients level (0.97-1.02 of the throughput; the module row's 0.89-0.92 in two runs was 1.01 in twelve runs
// by hand, six each in turn). `SELECT pg_sleep(0.02)`, 8 clients: 0.08-0.10 yields a statement against 0.6-0.9
// (test/native-yields; with three before every sleep and no giving up, 2.4).
// Measured again 2026-12-06 (docs/performance.md, twenty-fifth session; --variant DBSMACK_NATIVE_YIELDS=0,
// three rounds a set): without yields TPC-B at 32 clients (the shared I/O thread's design) cost 0.88 and 0.92
// of the default's CPU a transaction in two sets, but the point select, the module and `dbsmack pgbench -S`
// at 32 cost 1.04-1.07 of its CPU a query, with more cross-CPU wake-ups; at 8 clients two sets contradicted
// each other, at 16 level or worse. Kept.
constexpr int YIELD_SHARE_ONE = 256;  // the share's unit: 256 is every round
constexpr int YIELD_SHARE_MIN = YIELD_SHARE_ONE / 2;
constexpr unsigned YIELD_PROBE = 8;
thread_local int yieldShare = YIELD_SHARE_ONE;
thread_local unsigned yieldSkipped = 0;

// epoll_wait that first yields the CPU `yields` times, looking again after each, before it waits `timeoutMs`
// (-1: no end).
int waitYielding(int ep, epoll_event* evs, int timeoutMs, int yields) {
  if (yields > 0 && (yieldShare >= YIELD_SHARE_MIN || ++yieldSkipped % YIELD_PROBE == 0)) {
    for (int k = 0; k < yields; k++) {
      sched_yield();
      int n = epoll_wait(ep, evs, 64, 0);
      if (n != 0) {
        // a find is a connection's event or a batch's end (design D's eventfd); not libuv's descriptor (the
        // thread's own messages and timers) or the shared thread's control eventfd, both tagged UINT64_MAX
        for (int i = 0; i < n; i++)
          if (evs[i].data.u64 != UINT64_MAX) {
            yieldShare += (YIELD_SHARE_ONE - yieldShare) >> 3;
            break;
          }
        return n;
      }
    }
    yieldShare -= yieldShare >> 3;
  }
  return epoll_wait(ep, evs, 64, timeoutMs);
}

int waitB(int timeoutMs) {
  epoll_event evs[64];
  int timerMs = uvTimerLeftMs();
  if (timerMs >= 0 && timerMs < timeoutMs) timeoutMs = timerMs;
  double until = monoUs() + timeoutMs * 1000.0;
  for (;;) {
    if (!tcore->ready.empty()) return 0;
    int left = static_cast<int>((until - monoUs()) / 1000.0 + 0.999);
    if (left < 0) left = 0;
    // A slice shorter than SOLO_SLICE_MS is not given to a blocking recv() (its timeout is set once per
    // connection): the thread's next timer would fire up to a slice late. epoll_wait over the connection
    // (it stays in the set; reads pass MSG_DONTWAIT) waits exactly that long.
    Conn* one = left >= SOLO_SLICE_MS ? solo() : nullptr;
    if (one != nullptr && soloRead(one)) continue;
    // (the solo slice ended: libuv's descriptor and the timeout are looked at without waiting)
    int n = one == nullptr && left > 0 ? waitYielding(tcore->ep, evs, left, tcore->yields)
                                         : epoll_wait(tcore->ep, evs, 64, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    bool uv = false;
    for (int i = 0; i < n; i++) {
      uint64_t tag = evs[i].data.u64;
      if (tag == UINT64_MAX) {
        uv = true;
        continue;
      }
      if (tag == UINT64_MAX - 1) {
        takeThreadedCompletions();
        continue;
      }
      Conn* c = tcore->conns[tag];
      if (c == nullptr || c->dead) continue;
      connEvent(c, evs[i].events, tag);
    }
    if (!tcore->ready.empty() || uv) return 0;
    // timed out; a solo slice that ended goes on reading until the timeout
    if (n == 0 && one == nullptr) return 0;
  }
}

// Wakes the thread waiting on eventfd `fd` (the load thread's evFd, the shared thread's hEv).
void poke(int fd) {
  uint64_t one = 1;
  ssize_t w = write(fd, &one, sizeof one);
  (void)w;
}

// ---- design A: a thread per connection -----------------------------------------------------------------

void startRequest(Conn* c, int kind, int flags);

void ioThread(Conn* c) {
  std::vector<uint8_t> req;
  for (;;) {
    {
      std::unique_lock<std::mutex> g(c->m);
      c->cv.wait(g, [c] { return c->haveRequest || c->quit; });
      if (c->quit) return;
      req.swap(c->wq);
      c->haveRequest = false;
      startRequest(c, c->nextKind, c->nextFlags);
    }
    c->tSend = monoUs();
    size_t off = 0;
    bool ok = true;
    while (off < req.size()) {
      ssize_t w = send(c->fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        lost(c, errno, monoUs());
        ok = false;
        break;
      }
      off += static_cast<size_t>(w);
    }
    req.clear();
    if (!ok) continue;
    if (c->kind == K_NO_REPLY) {
      complete(c, ST_OK, 0, monoUs());
      continue;
    }
    // Bytes already read may complete it.
    feed(c, monoUs());
    while (c->busy && !c->dead) {
      ssize_t r = recv(c->fd, readBuffer, sizeof readBuffer, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        lost(c, r < 0 ? errno : 0, monoUs());
        break;
      }
      received(c, readBuffer, static_cast<size_t>(r), monoUs());
    }
  }
}

// ---- design D: a batch on its connection's own thread -------------------------------------------------------

// Whether this batch runs on the connection's own thread (D) or from wait() on the worker's thread (B).
// Design 3 chooses per batch, from what was measured (bench/peers --variant, six rounds, see the top of this
// file): D for MySQL from 2 connections up (first up to 8, then 24; MariaDB at 4 per worker: 1.19 of B's
// q/s at 9% less CPU, cross-CPU wake-ups per query 0.05-0.19 against 0.09-0.28); B elsewhere (PostgreSQL at
// 4 per worker: D 0.82-0.89 of B at 40% more CPU; both servers at 16 per worker: D 0.92-0.95 at 12-28% more,
// on the slower guests of 2026-12-02, with a budget of 20 ms a batch, about 10 statements at 32 clients). Not
// where the worker has one connection: D was 1.04-1.06 of B's q/s there at 8-10% less client CPU per query,
// and solo() now does D's reads without its hand-off.
// MariaDB oltp_read_only at 32 clients (16 per worker, B), 2026-12-05: the server's threads sleep 0.64-0.88
// times a query waiting for their next statement (voluntary context switches, /proc/PID/task/*/status)
// against 0.05-0.14 under sysbench, whose thread, woken on the server thread's CPU, preempts it and has sent
// the next statement before it reads (0.91-0.97 involuntary switches a query); the server's CPU 49-56 us a
// query against 42-47. D for every batch (design 2) brings the sleeps to 0.23-0.33 and the server's CPU to
// 47-49, but 8 s runs alternated with B gave 1.02, 0.95, 1.02 of B's q/s at the same client CPU: not changed.
// Measured again on 2026-12-06 (another guest of the same kind, sysbench 43-55k point selects a second at 32
// clients), a core with D for every MySQL batch against the one with D up to 8 a worker, bench/peers --time 8
// --repeat 3 (and two earlier rounds): at 32 clients point select 1.17 (1.09, 1.24 before), read_only 1.03
// (1.07, 1.10), read_write 1.10 (1.04); at 64 clients 1.02 (1.14), 0.98 (0.98), 1.06 (1.08); at 24 and 48
// clients point select 1.35 and 1.34; at 8 and 16 clients, where both run D, 0.99-1.06: the noise. The
// server's threads sleep 0.12-0.25 times a query at 32 clients against B's 0.77-0.96 (sysbench 0.03-0.19),
// its CPU 26-29 us a query against 31-32; the client's CPU a query lower at 32 clients (point select 14.9
// against 16.4 us, read_write 22.0 against 24.8), higher at 64 on read_only (23.4 against 20.5). A batch at 32
// clients holds about 45 statements (write()s to the eventfd against sendto()s, perf stat), so the hand-off's
// two wake-ups and three futex calls weigh little. But more connections a load thread favour B again, whose
// epoll_wait collects more replies at each wake-up: at 64 clients (32 a thread) D's client CPU a query was
// higher in three of four rows (point select 15.7-16.6 us against 13.6-16.0, read_only 23.4 against 20.5) for
// 1.02-1.14 of the throughput; at 96 clients 0.91 of B's throughput at 17.5 us against 12.0, at 128 clients
// 0.83 at 18.3 against 11.3. So D up to 24 connections a load thread (48 clients on two), until 2026-12-07.
// Since 2026-12-07 D's threads follow their server threads to their CPUs (followServer, above), and D runs
// every MySQL batch of a load thread with two connections or more. bench/peers --time 8 --repeat 3 --variant ""
// --variant DBSMACK_NATIVE_DESIGN=2 (B, the rule of then, against D for every batch, both following), a
// 2-core AMD EPYC PVM guest: point select at 64, 96 and 128 clients D 1.09, 1.05, 1.06 of sysbench's q/s
// against B's 0.98, 0.99, 0.95, at 0.91, 0.93, 0.85 of sysbench's client CPU a query after start-up against
// 0.87, 0.79, 0.83; oltp_read_only at 64 and 128 1.10 and 1.10 against 0.98 and 0.98 (CPU 0.89 and 0.78
// against 0.90 and 0.80), oltp_read_write 1.24 and 1.10 against 1.07 and 1.05 (CPU 0.65 and 0.85 against
// 0.78 and 0.78). The server's threads slept 0.06-0.15 times a query under D against B's 0.72-1.00 (read_write
// 0.47-0.97 against 1.00-1.33), and its CPU a query fell to 26-66 us from 32-77 (read_write 60-119 from
// 75-127). A connection whose thread cannot be made (the process's thread limit) runs that batch as in B, and
// tries again at its next.
// PostgreSQL: D where a load thread has exactly two connections (4 clients on two load threads: `--workers 2`,
// `dbsmack pgbench -c 4 -j 2`; the default since 2026-12-06 gives up to 4 PostgreSQL clients a load thread
// each, read by solo(): src/driver/native-core.ts SOLO_IO_MAX_CLIENTS), B from three up. Measured 2026-12-06
// (bench/peers --time 8 --only postgres,pgbench, four rounds a set, --variant "" --variant
// DBSMACK_NATIVE_DESIGN=2, D everywhere, against B): at 4 clients, two sets, D's q/s against B's point select
// 1.15 and 1.00 (rounds 0.96-1.35), the module 1.00 and 1.03, `dbsmack pgbench -S` 1.06 and 1.08, its
// whole-process CPU a query lower or level in all six (point select 1.07 of sysbench's against B's 1.27); B
// there had made 0.86-0.87 of sysbench's q/s at 1.12-1.21 of its CPU after start-up, `worse` on both. At 6
// clients (three a thread) D 0.98, 0.96, 0.93 at more CPU, as at 8 before (0.82-0.98).
// A third set with this rule built, against B (DBSMACK_NATIVE_DESIGN=0), on a noisier hour (the peers'
// rounds +-3-28%): 1.01, 1.07 (every round; B's CPU a query after start-up 1.08 of pgbench's against 0.99)
// and 0.97. With two connections B's loop collects few replies a wake-up, and each connection's thread keeps
// to its backend as sysbench's do; from three, B's collecting wins.
constexpr int PG_THREADED = 2;
// Only on x86, whose stores are seen in order by other CPUs: JavaScript reads a batch's results while the
// batch's thread writes them (complete()'s fence orders the writes; JavaScript's reads are plain loads, which
// x86 does not reorder with each other). Elsewhere every batch runs as in B.
bool batchOnThread(const Conn* c) {
#if defined(__x86_64__) || defined(__i386__)
  const Core* core = c->core;
  if (core->design == 2) return true;
  if (core->design != 3) return false;
  return core->live > 1 && (c->proto == P_MYSQL || core->live <= PG_THREADED);
#else
  (void)c;
  return false;
#endif
}

// Blocking send of a whole statement (the descriptor is blocking in design D). False when the peer is gone.
bool sendAll(Conn* c, const uint8_t* b, size_t n) {
  while (n > 0) {
    ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      lost(c, w < 0 ? errno : 0, monoUs());
      return false;
    }
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void batchThread(Conn* c) {
  pthread_setname_np(pthread_self(), "dbsmack-conn");  // (tests count them by this name)
  for (;;) {
    {
      std::unique_lock<std::mutex> g(c->m);
      c->cv.wait(g, [c] { return c->bGo || c->quit; });
      if (c->quit) return;
      c->bGo = false;
    }
    // The batch: each statement sent when the one before completed (complete() sets bAdvance), each read
    // with blocking recv until its response is complete, as sysbench's threads do.
    while (c->inBatch) {
      if (c->bAdvance) {
        c->bAdvance = false;
        size_t i = c->bNext++;
        startRequest(c, c->bKind, c->bFlags);
        c->tSend = monoUs();
        if (!sendAll(c, c->bBytes.data() + c->bOff[i], c->bOff[i + 1] - c->bOff[i])) break;
        if (c->inStart < c->in.size()) feed(c, c->tSend);
        continue;
      }
      ssize_t r = recv(c->fd, readBuffer, sizeof readBuffer, 0);
      // (EAGAIN: the descriptor has solo()'s receive timeout, set while it was the worker's only one)
      if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (r <= 0) {
        lost(c, r < 0 ? errno : 0, monoUs());
        break;
      }
      received(c, readBuffer, static_cast<size_t>(r), monoUs());
      followServer(c);  // after the statement's end is timed, before the next is sent
    }
    // Ended (its last statement, an error, the budget, a lost connection): hand the completion over.
    Core* core = c->core;
    {
      std::lock_guard<std::mutex> g(core->m);
      core->queue.push_back(c->bDone);
    }
    poke(core->evFd);
  }
}

// The connection's own thread for D's batches, made at its first batch; false when it cannot be made (the
// process's or the user's thread limit), and the batch runs as in B (its next batch tries again).
bool batchThreadReady(Conn* c) {
  if (c->thread.joinable()) return true;
  try {
    c->thread = std::thread(batchThread, c);
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

// ---- design 4: batches on one shared I/O thread ----------------------------------------------------------

// Design 4 (to measure, DBSMACK_NATIVE_DESIGN=4): every second connection's batches run on one native I/O
// thread of the core's, an epoll loop as B's over the connections it has, so that one JavaScript thread
// (one V8 isolate: no second one to start, nor its optimising compiler's work) drives the load while the
// system calls of half of it run on another CPU. The hand-off is D's (the connection out of the worker's
// epoll set, its ST_BATCH completion through `queue` and the eventfd), once per batch of 25-256 statements.
bool batchOnHelper(const Conn* c) {
#if defined(__x86_64__) || defined(__i386__)
  return c->core->design == 4 && c->toHelper && c->core->live > 1;
#else
  (void)c;
  return false;
#endif
}

// A batch on a connection already lost (the server closed it, or the shared thread that had it failed) ends
// at once with its first statement as lost, the connection's error its response: JavaScript reconnects or
// stops by its error policy.
void endBatchLost(Conn* c, int err, double t) {
  startRequest(c, c->bKind, c->bFlags);
  c->tSend = t;
  c->out = c->fatal;
  c->bNext = c->bCount;
  complete(c, ST_LOST, err, t);
}

// The I/O thread hands a finished batch back: its last touch of the connection (closeConn may delete it as
// soon as `onHelper` is false, which is why the completion is copied under the same lock). A drop closeConn
// asked for meanwhile goes with it: left in `hDrop`, its pointer could name a later connection made at the
// same address.
void helperHandBack(Core* core, Conn* c) {
  dropFromEpoll(c);
  {
    std::lock_guard<std::mutex> g(core->hm);
    Completion d = c->bDone;
    c->onHelper = false;
    for (auto it = core->hDrop.begin(); it != core->hDrop.end();) it = *it == c ? core->hDrop.erase(it) : it + 1;
    std::lock_guard<std::mutex> q(core->m);
    core->queue.push_back(d);
  }
  core->hcv.notify_all();
  poke(core->evFd);
}

// The shared I/O thread leaves its loop on a failure (epoll_wait or its eventfd failing: a bad descriptor;
// not expected, but a default path must not hang on it): every batch it holds, or was handed and has not
// started, ends as lost, as with a connection the server closed (JavaScript reconnects or stops by its error
// policy); closeConn waits for none of them any longer; later batches run on the load thread (hDead).
void helperFail(Core* core, std::vector<Conn*>& byId, int err) {
  std::vector<Conn*> held;
  for (Conn*& p : byId)
    if (p != nullptr) {
      held.push_back(p);
      p = nullptr;
    }
  {
    std::lock_guard<std::mutex> g(core->hm);
    core->hDead = true;
    for (Conn* c : core->hInbox) held.push_back(c);
    core->hInbox.clear();
  }
  for (Conn* c : held) {
    double t = monoUs();
    lost(c, err, t);  // ends the statement in flight, and with it the batch
    if (c->inBatch) endBatchLost(c, err, t);  // handed over and not started
    helperHandBack(core, c);
  }
}

// Hands the connection's batch to the shared I/O thread; false when that thread has left its loop
// (helperFail), and the batch runs on this thread instead.
bool handToHelper(Conn* c) {
  Core* core = c->core;
  {
    std::lock_guard<std::mutex> g(core->hm);
    if (core->hDead) return false;
    dropFromEpoll(c);
    c->threaded = true;
    c->onHelper = true;
    core->hInbox.push_back(c);
  }
  poke(core->hEv);
  return true;
}

void helperThread(Core* core) {
  pthread_setname_np(pthread_self(), "dbsmack-io");  // (tests find it by this name)
  std::vector<Conn*> byId;  // this thread's connections by epoll tag (their ids); only this thread uses it
  std::vector<Conn*> take;
  std::vector<Conn*> drop;
  epoll_event evs[64];
  for (;;) {
    int n = waitYielding(core->hEp, evs, -1, core->yields);
    if (n < 0) {
      if (errno == EINTR) continue;
      helperFail(core, byId, errno);
      return;
    }
    bool control = false;
    // The connections' events first, then the hand-overs and drops: a connection closeConn waits for is
    // alive until it is acknowledged, at the end of the round.
    for (int i = 0; i < n; i++) {
      uint64_t tag = evs[i].data.u64;
      if (tag == UINT64_MAX) {
        control = true;
        continue;
      }
      Conn* c = tag < byId.size() ? byId[tag] : nullptr;
      if (c == nullptr) continue;
      connEvent(c, evs[i].events, tag);
      if (!c->inBatch) {
        byId[tag] = nullptr;
        helperHandBack(core, c);
      }
    }
    if (!control) continue;
    uint64_t v;
    if (read(core->hEv, &v, sizeof v) < 0 && errno != EAGAIN) {
      helperFail(core, byId, errno);
      return;
    }
    bool quit;
    bool fail;
    {
      std::lock_guard<std::mutex> g(core->hm);
      quit = core->hQuit;
      fail = core->hFail;
      if (!fail) {
        take.swap(core->hInbox);
        drop.swap(core->hDrop);
      }
    }
    if (quit) return;
    if (fail) {
      helperFail(core, byId, EIO);
      return;
    }
    for (Conn* c : take) {
      size_t id = static_cast<size_t>(c->id);
      if (byId.size() <= id) byId.resize(id + 1, nullptr);
      byId[id] = c;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = id;
      if (epoll_ctl(core->hEp, EPOLL_CTL_ADD, c->fd, &ev) == 0) {
        c->inEpoll = true;
        c->ep = core->hEp;
        batchNext(c);
      } else {
        lost(c, errno, monoUs());
      }
      if (!c->inBatch) {
        byId[id] = nullptr;
        helperHandBack(core, c);
      }
    }
    take.clear();
    // Drops: only a connection still in byId is looked at (one handed back above may be gone already; no
    // connection made since can be in byId: the hand-overs of this round were taken before it was deleted).
    bool dropped = false;
    for (Conn* c : drop)
      for (Conn*& p : byId)
        if (p == c) {
          dropFromEpoll(c);
          p = nullptr;
          std::lock_guard<std::mutex> g(core->hm);
          c->onHelper = false;
          dropped = true;
        }
    drop.clear();
    if (dropped) core->hcv.notify_all();
  }
}

// ---- Node-API ---------------------------------------------------------------------------------------------

napi_value undefinedValue(napi_env env) {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

napi_value number(napi_env env, double v) {
  napi_value r;
  napi_create_double(env, v, &r);
  return r;
}

bool throwIf(napi_env env, bool bad, const char* msg) {
  if (bad) napi_throw_error(env, "NATIVE_IO", msg);
  return bad;
}

// throwIf for a failed system call: strerror only once it has failed. Its message is an argument, computed
// before the call; wait() ran strerror(0) at every call, about 0.7% of a load thread's user time.
bool throwIfErrno(napi_env env, bool bad, int err) {
  return bad && throwIf(env, true, strerror(err));
}

int32_t intArg(napi_env env, napi_value v) {
  int32_t i = 0;
  napi_get_value_int32(env, v, &i);
  return i;
}

Conn* connArg(napi_env env, napi_value v) {
  int32_t id = intArg(env, v);
  if (tcore == nullptr || id < 0 || static_cast<size_t>(id) >= tcore->conns.size() || tcore->conns[id] == nullptr) {
    napi_throw_error(env, "NATIVE_IO", "no such native connection");
    return nullptr;
  }
  return tcore->conns[id];
}

void closeConn(Conn* c);

// The worker's environment is torn down: close what JavaScript left open.
void FinalizeCore(napi_env, void* data, void*) {
  Core* core = static_cast<Core*>(data);
  if (core->helper.joinable()) {
    {
      std::lock_guard<std::mutex> g(core->hm);
      core->hQuit = true;
    }
    poke(core->hEv);
    core->helper.join();
    for (Conn* c : core->conns)
      if (c != nullptr) c->onHelper = false;  // (nothing has them now)
  }
  for (Conn* c : core->conns)
    if (c != nullptr) closeConn(c);
  if (core->hEp >= 0) close(core->hEp);
  if (core->hEv >= 0) close(core->hEv);
  if (core->ep >= 0) close(core->ep);
  if (core->evFd >= 0) close(core->evFd);
  if (tcore == core) tcore = nullptr;
  delete core;
}

// init(design): 0 = epoll on this thread (B), 1 = a thread per connection (A), 2 = B with every batch on its
// connection's own thread (D), 3 = B or D for each batch (batchOnThread), 4 = B with every second
// connection's batches on the core's shared I/O thread (batchOnHelper).
napi_value Init(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int design = argc > 0 ? intArg(env, argv[0]) : 0;
  int was = tcore != nullptr ? tcore->design : -1;
  if (tcore != nullptr) {
    // Again (tests: the same thread measures each design): only while no connection is open, because a
    // descriptor is opened blocking or not for the design of its time.
    if (throwIf(env, tcore->live != 0 && design != tcore->design, "init: connections are open")) return nullptr;
    tcore->design = design;
  } else {
    tcore = new Core();
    napi_set_instance_data(env, tcore, FinalizeCore, nullptr);
    tcore->design = design;
    tcore->ep = epoll_create1(EPOLL_CLOEXEC);
    if (throwIfErrno(env, tcore->ep < 0, errno)) return nullptr;
    // libuv's own epoll descriptor: readable when the event loop has work (a message from the main thread).
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    tcore->loop = loop;
    if (loop != nullptr) {
      tcore->uvFd = uv_backend_fd(loop);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = UINT64_MAX;
      if (tcore->uvFd >= 0) epoll_ctl(tcore->ep, EPOLL_CTL_ADD, tcore->uvFd, &ev);
    }
  }
  if (tcore->design >= 2 && tcore->evFd < 0) {
    tcore->evFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (tcore->evFd < 0) {
      int err = errno;
      tcore->design = was < 0 ? 0 : was;  // (as below: the design it had, which needs no eventfd)
      throwIfErrno(env, true, err);
      return nullptr;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = UINT64_MAX - 1;
    epoll_ctl(tcore->ep, EPOLL_CTL_ADD, tcore->evFd, &ev);
  }
  if (tcore->design == 4 && tcore->helper.joinable() && tcore->live == 0) {
    // A shared thread that left its loop on a failure (helperFail) is made again, with new descriptors, at
    // the next init with no connection open (the next run of this load thread; tests).
    bool dead;
    {
      std::lock_guard<std::mutex> g(tcore->hm);
      dead = tcore->hDead;
    }
    if (dead) {
      tcore->helper.join();
      close(tcore->hEp);
      close(tcore->hEv);
      tcore->hEp = tcore->hEv = -1;
      std::lock_guard<std::mutex> g(tcore->hm);
      tcore->hDead = tcore->hFail = false;
    }
  }
  if (tcore->design == 4 && !tcore->helper.joinable()) {
    // Its descriptors may fail (EMFILE with many connections and a low `ulimit -n`): the core then keeps
    // the design it had (design 4 without its thread would hand batches to nobody) and init throws.
    if (tcore->hEp < 0) tcore->hEp = epoll_create1(EPOLL_CLOEXEC);
    if (tcore->hEp >= 0 && tcore->hEv < 0) {
      tcore->hEv = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (tcore->hEv >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = UINT64_MAX;
        epoll_ctl(tcore->hEp, EPOLL_CTL_ADD, tcore->hEv, &ev);
      }
    }
    if (tcore->hEp < 0 || tcore->hEv < 0) {
      int err = errno;
      tcore->design = was < 0 ? 0 : was;
      throwIfErrno(env, true, err);
      return nullptr;
    }
    tcore->helper = std::thread(helperThread, tcore);
  }
  return undefinedValue(env);
}

// open(fd, protocol, options): takes a duplicate of the socket's descriptor; returns the id. options: the
// MySQL session's O_* bits (0 for PostgreSQL).
napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (throwIf(env, argc < 3 || tcore == nullptr, "open(fd, protocol, options) after init()")) return nullptr;
  int fd = intArg(env, argv[0]);
  // A number, strictly: JavaScript of another build passing the flags differently must fail here, not read
  // responses with the wrong rules and wait for packets that never come.
  int32_t options = 0;
  if (throwIf(env, napi_get_value_int32(env, argv[2], &options) != napi_ok,
              "open(): options must be a number (the addon and the JavaScript are of different builds)"))
    return nullptr;
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (throwIfErrno(env, own < 0, errno)) return nullptr;
  int fl = fcntl(own, F_GETFL);
  // The descriptor shares its file description with the one libuv made non-blocking.
  // Design B's calls pass MSG_DONTWAIT; designs A and D block in their threads.
  fcntl(own, F_SETFL, tcore->design == 0 ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK));
  tcore->live++;
  Conn* c = new Conn();
  tcore->only = tcore->live == 1 ? c : nullptr;
  c->core = tcore;
  c->fd = own;
  c->proto = intArg(env, argv[1]);
  tcore->yields = yieldsAsked >= 0 ? yieldsAsked : c->proto == P_PG ? YIELDS_PG : YIELDS_MYSQL;
  c->deprecateEof = (options & O_DEPRECATE_EOF) != 0;
  c->cacheMetadata = (options & O_CACHE_METADATA) != 0;
  c->local = sameHost(own);
  if (!tcore->freeIds.empty()) {
    c->id = tcore->freeIds.back();
    tcore->freeIds.pop_back();
    tcore->conns[c->id] = c;
  } else {
    c->id = static_cast<int>(tcore->conns.size());
    tcore->conns.push_back(c);
  }
  if (tcore->design != 1) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint64_t>(c->id);
    if (epoll_ctl(tcore->ep, EPOLL_CTL_ADD, own, &ev) == 0) {
      c->inEpoll = true;
      c->ep = tcore->ep;
    }
    // Every second connection open (the first stays here): half the batches on each thread.
    c->toHelper = tcore->design == 4 && tcore->helperConns * 2 + 1 < tcore->live;
    if (c->toHelper) tcore->helperConns++;
  } else {
    c->thread = std::thread(ioThread, c);
  }
  return number(env, c->id);
}

// submit(id, bytes, kind, flags): send one request. Its completion comes from wait().
napi_value Submit(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Conn* c = connArg(env, argv[0]);
  if (c == nullptr) return nullptr;
  void* data = nullptr;
  size_t len = 0;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset;
  if (throwIf(env, napi_get_typedarray_info(env, argv[1], &type, &len, &data, &ab, &offset) != napi_ok,
              "submit: bytes must be a Buffer"))
    return nullptr;
  int kind = intArg(env, argv[2]);
  int flags = intArg(env, argv[3]);
  double t = monoUs();
  if (tcore->design == 1) {
    const uint8_t* b = static_cast<const uint8_t*>(data);
    std::lock_guard<std::mutex> g(c->m);
    c->wq.assign(b, b + len);
    c->nextKind = kind;
    c->nextFlags = flags;
    c->haveRequest = true;
    c->cv.notify_one();
    return undefinedValue(env);
  }
  if (throwIf(env, c->busy, "submit: a request is already in flight on this connection")) return nullptr;
  if (c->dead) {
    startRequest(c, kind, flags);
    c->tSend = t;
    c->out = c->fatal;
    complete(c, ST_LOST, c->lostErrno, t);
    return undefinedValue(env);
  }
  startRequest(c, kind, flags);
  const uint8_t* b = static_cast<const uint8_t*>(data);
  c->tSend = t;
  sendB(c, b, len);
  if (kind == K_NO_REPLY && c->busy) complete(c, ST_OK, 0, monoUs());
  else if (c->busy && c->inStart < c->in.size())
    feed(c, t);  // bytes that arrived before (none in the usual case)
  return undefinedValue(env);
}

// submitBatch(id, bytes, offsets: Uint32Array, count, kind, flags, results: Float64Array, budgetUs, group):
// run `count` statements (statement i is bytes[offsets[i], offsets[i + 1])) one after another on the
// connection, each of `kind`/`flags`, in events of `group` statements (count is whole events), no event
// started once `budgetUs` have passed since this call; their
// results go into `results` as they complete (see Conn::bRes) and wait() hands back one ST_BATCH
// completion when the batch ends. Designs B and D. Why batches: a workload whose event is one statement
// (select1, a point select) or a fixed run of them (pgbench's TPC-B) then costs JavaScript one call and one
// promise per batch instead of per event, while the statements still run one at a time on the connection,
// each timed here.
napi_value SubmitBatch(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (throwIf(env, argc < 9, "submitBatch(id, bytes, offsets, count, kind, flags, results, budgetUs, group)"))
    return nullptr;
  Conn* c = connArg(env, argv[0]);
  if (c == nullptr) return nullptr;
  if (throwIf(env, tcore->design == 1, "submitBatch: batches need design B or D")) return nullptr;
  if (throwIf(env, c->busy || c->inBatch, "submitBatch: a request is already in flight on this connection"))
    return nullptr;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset;
  void* bytes = nullptr;
  size_t blen = 0;
  void* offs = nullptr;
  size_t olen = 0;
  void* res = nullptr;
  size_t rlen = 0;
  if (throwIf(env, napi_get_typedarray_info(env, argv[1], &type, &blen, &bytes, &ab, &offset) != napi_ok,
              "submitBatch: bytes must be a Buffer") ||
      throwIf(env,
              napi_get_typedarray_info(env, argv[2], &type, &olen, &offs, &ab, &offset) != napi_ok ||
                  type != napi_uint32_array,
              "submitBatch: offsets must be a Uint32Array") ||
      throwIf(env,
              napi_get_typedarray_info(env, argv[6], &type, &rlen, &res, &ab, &offset) != napi_ok ||
                  type != napi_float64_array,
              "submitBatch: results must be a Float64Array"))
    return nullptr;
  int32_t count = intArg(env, argv[3]);
  const uint32_t* o = static_cast<const uint32_t*>(offs);
  if (throwIf(env,
              count < 1 || static_cast<size_t>(count) + 1 > olen || rlen < 1 + 4 * static_cast<size_t>(count) ||
                  o[count] > blen,
              "submitBatch: count does not fit the offsets, bytes or results"))
    return nullptr;
  double budgetUs = 0;
  napi_get_value_double(env, argv[7], &budgetUs);
  int32_t group = intArg(env, argv[8]);
  if (throwIf(env, group < 1 || count % group != 0, "submitBatch: count must be whole groups of statements"))
    return nullptr;
  const uint8_t* b = static_cast<const uint8_t*>(bytes);
  c->bBytes.assign(b, b + o[count]);
  c->bOff.assign(o, o + count + 1);
  c->bCount = static_cast<size_t>(count);
  c->bGroup = static_cast<size_t>(group);
  c->bNext = 0;
  c->bKind = intArg(env, argv[4]);
  c->bFlags = intArg(env, argv[5]);
  c->bRes = static_cast<double*>(res);
  c->bRes[0] = 0;
  c->bStart = monoUs();
  c->bDeadline = c->bStart + budgetUs;
  c->inBatch = true;
  if (c->dead) {
    endBatchLost(c, c->lostErrno, c->bStart);
    return undefinedValue(env);
  }
  c->bAdvance = true;
  if (batchOnHelper(c) && handToHelper(c)) return undefinedValue(env);
  if (batchOnThread(c) && batchThreadReady(c)) {
    dropFromEpoll(c);
    c->threaded = true;
    {
      std::lock_guard<std::mutex> g(c->m);
      c->bGo = true;
    }
    // Woken after the unlock: notified under the lock, the batch's thread woke only to wait for the mutex
    // this thread still held (strace -c -f of a one-client TPC-B run: 3.8 futex calls a transaction).
    c->cv.notify_one();
    return undefinedValue(env);
  }
  batchNext(c);
  return undefinedValue(env);
}

// wait(timeoutMs, results: Float64Array): blocks until at least one completion (or the timeout, or work for
// libuv); writes [id, status, value, latencyUs] per completion; returns how many.
napi_value Wait(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int timeoutMs = intArg(env, argv[0]);
  void* data = nullptr;
  size_t len = 0;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset;
  if (throwIf(env, napi_get_typedarray_info(env, argv[1], &type, &len, &data, &ab, &offset) != napi_ok ||
                       type != napi_float64_array,
              "wait: results must be a Float64Array"))
    return nullptr;
  double* out = static_cast<double*>(data);
  size_t cap = len / 4;
  size_t n = 0;
  if (tcore->design == 1) {
    std::unique_lock<std::mutex> g(tcore->m);
    if (tcore->ready.empty() && tcore->queue.empty())
      tcore->cv.wait_for(g, std::chrono::milliseconds(timeoutMs), [] { return !tcore->queue.empty(); });
    while (!tcore->queue.empty() && tcore->ready.size() < cap) {
      tcore->ready.push_back(tcore->queue.front());
      tcore->queue.pop_front();
    }
  } else if (tcore->ready.empty()) {
    int r = waitB(timeoutMs);
    if (throwIfErrno(env, r < 0, -r)) return nullptr;
  }
  for (; n < tcore->ready.size() && n < cap; n++) {
    const Completion& d = tcore->ready[n];
    out[4 * n] = d.id;
    out[4 * n + 1] = d.status;
    out[4 * n + 2] = d.value;
    out[4 * n + 3] = d.latencyUs;
  }
  tcore->ready.erase(tcore->ready.begin(), tcore->ready.begin() + static_cast<long>(n));
  return number(env, static_cast<double>(n));
}

// take(id): the bytes of the last error / raw response of a connection, as a Buffer.
napi_value Take(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Conn* c = connArg(env, argv[0]);
  if (c == nullptr) return nullptr;
  napi_value buf;
  void* copy;
  napi_create_buffer_copy(env, c->out.size(), c->out.data(), &copy, &buf);
  c->out.clear();
  if (c->out.capacity() > (1u << 20)) c->out.shrink_to_fit();
  return buf;
}

void closeConn(Conn* c) {
  Core* core = c->core;
  if (core->helper.joinable()) {
    // Design 4: a batch the I/O thread has ends here; it drops the connection and says so.
    std::unique_lock<std::mutex> g(core->hm);
    if (c->onHelper) {
      core->hDrop.push_back(c);
      poke(core->hEv);
      core->hcv.wait(g, [c] { return !c->onHelper; });
    }
  }
  if (core->design == 1 || c->thread.joinable()) {
    {
      std::lock_guard<std::mutex> g(c->m);
      c->quit = true;
      c->cv.notify_one();
    }
    if (core->design == 1 || c->threaded) shutdown(c->fd, SHUT_RDWR);  // a thread blocked in recv() returns
    if (c->thread.joinable()) c->thread.join();
  }
  if (core->design != 1) dropFromEpoll(c);
  if (core->evFd >= 0) {
    std::lock_guard<std::mutex> g(core->m);
    for (auto it = core->queue.begin(); it != core->queue.end();)
      it = it->id == c->id ? core->queue.erase(it) : it + 1;
  }
  close(c->fd);
  // Completions of this connection not yet handed over are dropped with it.
  for (size_t i = 0; i < core->ready.size();) {
    if (core->ready[i].id == c->id)
      core->ready.erase(core->ready.begin() + static_cast<long>(i));
    else
      i++;
  }
  if (c->toHelper) core->helperConns--;
  core->conns[c->id] = nullptr;
  core->freeIds.push_back(c->id);
  core->live--;
  core->only = nullptr;
  if (core->live == 1)
    for (Conn* o : core->conns)
      if (o != nullptr) core->only = o;
  delete c;
}

// close(id): closes the descriptor (the last one: the kernel closes the connection).
napi_value Close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Conn* c = connArg(env, argv[0]);
  if (c == nullptr) return nullptr;
  closeConn(c);
  return undefinedValue(env);
}

// ---- the bundles' source, for the code cache (src/code-cache.ts) -------------------------------------------

// readSource(path, head, tail): head + the file + tail as one external Latin-1 string, or undefined (the
// caller then reads the file itself). Why: src/code-cache.ts compiles each bundle (1.2 MB for the CLI, 0.4 MB
// for a load worker) wrapped in CommonJS's function head, at every start. readFileSync(file, 'utf8') decodes
// it into a string on V8's heap, and the concatenation with the head is flattened into another: 12-16 ms of
// CPU for the CLI's bundle, against 5-7 ms here, where the file is read once into pages of our own that V8
// takes as the string's content (unmapped when V8 drops the string). Mapping the file itself cost 1.3 ms,
// but its pages would stay the file's: a file rewritten in place under a running process (a copy over it)
// would change the source V8 compiles lazily, or end it with SIGBUS where the file got shorter. The bundles
// are pure ASCII (scripts/bundle.js), which Latin-1 reads alike; a file that is not is refused.
// node_api_create_external_string_latin1 (Node.js 20.4 and later, experimental there) is looked up at run
// time, so that the module is not built as experimental and loads where it is missing.
typedef napi_status (*ExternalLatin1)(napi_env, char*, size_t, napi_finalize, void*, napi_value*, bool*);

struct Mapping {
  void* base;
  size_t length;
};

void unmapSource(napi_env, void*, void* hint) {
  Mapping* m = static_cast<Mapping*>(hint);
  munmap(m->base, m->length);
  delete m;
}

bool stringArg(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  if (napi_get_value_string_latin1(env, v, nullptr, 0, &len) != napi_ok) return false;
  out->resize(len + 1);
  if (napi_get_value_string_latin1(env, v, &(*out)[0], len + 1, &len) != napi_ok) return false;
  out->resize(len);
  return true;
}

napi_value ReadSource(napi_env env, napi_callback_info info) {
  static ExternalLatin1 external =
      reinterpret_cast<ExternalLatin1>(dlsym(RTLD_DEFAULT, "node_api_create_external_string_latin1"));
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  std::string file, head, tail;
  if (external == nullptr || argc < 3 || !stringArg(env, argv[0], &file) || !stringArg(env, argv[1], &head) ||
      !stringArg(env, argv[2], &tail))
    return undefinedValue(env);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return undefinedValue(env);
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return undefinedValue(env);
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t before = (head.size() + page - 1) / page * page;
  const size_t length = before + (size + tail.size() + page - 1) / page * page;
  char* base =
      static_cast<char*>(mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  bool ok = base != MAP_FAILED;
  size_t got = 0;
  while (ok && got < size) {
    ssize_t r = ::read(fd, base + before + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) ok = false;
    else got += static_cast<size_t>(r);
  }
  ::close(fd);
  const unsigned char* body = reinterpret_cast<unsigned char*>(base + before);
  for (size_t i = 0; ok && i < size; i++)
    if (body[i] >= 0x80) ok = false;
  if (!ok) {
    if (base != MAP_FAILED) munmap(base, length);
    return undefinedValue(env);
  }
  char* start = base + before - head.size();
  memcpy(start, head.data(), head.size());
  memcpy(base + before + size, tail.data(), tail.size());
  Mapping* m = new Mapping{base, length};
  napi_value result;
  bool copied = false;
  // When V8 copied the bytes, the finalizer has unmapped them already. A failure (only for strings beyond
  // V8's length limit, far above any bundle) leaves the mapping in place: never unmapped twice.
  if (external(env, start, head.size() + size + tail.size(), unmapSource, m, &result, &copied) != napi_ok) {
    return undefinedValue(env);
  }
  return result;
}

// failSharedThread(): (tests) the core's shared I/O thread leaves its loop as it would on a failure
// (helperFail). Returns whether there was such a thread running.
napi_value FailSharedThread(napi_env env, napi_callback_info) {
  bool running = tcore != nullptr && tcore->helper.joinable();
  if (running) {
    {
      std::lock_guard<std::mutex> g(tcore->hm);
      running = !tcore->hDead;
      tcore->hFail = true;
    }
    poke(tcore->hEv);
  }
  napi_value r;
  napi_get_boolean(env, running, &r);
  return r;
}

// checksum(bytes): the code cache's checksum of a file's content (src/code-cache.ts `checksum`, which computes
// the same where this addon is missing): FNV-1a over the native-endian 32-bit words, folded with their
// running sum, then the bytes past the last whole word. 0.1 ms for the CLI's 0.6 MB cache against 5-7 ms of
// cold JavaScript at every start; undefined for anything but a typed array.
napi_value Checksum(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  napi_typedarray_type type;
  size_t len = 0, offset = 0;
  void* data = nullptr;
  napi_value ab;
  bool is = false;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, argv[0], &type, &len, &data, &ab, &offset) != napi_ok ||
      type != napi_uint8_array)
    return undefinedValue(env);
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t words = len / 4;
  uint32_t h = 0x811c9dc5u, sum = 0;
  for (size_t i = 0; i < words; i++) {
    uint32_t w;
    memcpy(&w, p + i * 4, 4);
    h = (h ^ w) * 0x01000193u;
    sum += h;
  }
  for (size_t i = words * 4; i < len; i++) h = (h ^ p[i]) * 0x01000193u;
  napi_value r;
  napi_create_uint32(env, h ^ sum, &r);
  return r;
}

// The interface JavaScript was written against (native-core.ts ADDON_INTERFACE): raised whenever a
// function's arguments or results change, so that an addon left from another build is refused with a note
// (and the JavaScript path runs) instead of reading responses by the wrong rules. 2: open()'s options.
// 3: wait() gives way to the thread's libuv timers (a load in the main thread relies on it). 4: submitBatch's
// `group` (events of several statements are not cut by the budget). 5: failSharedThread() (tests).
constexpr int32_t INTERFACE = 5;

// The library stays mapped until the process ends, however many threads loaded it (RTLD_NODELETE on our own
// handle). Why: a load worker that loaded it unloads it when its environment ends, before V8 deletes the
// worker's isolate, and V8 then calls unmapSource for the bundle's source string (readSource) at an address
// no longer mapped: a segmentation fault at every run where the main thread had not loaded the addon itself
// (`--debug`, whose CLI bundle is loaded without readSource). Found 2026-12-06 (gdb: ~ExternalOneByteString-
// Resource in Heap::ExternalStringTable::TearDown from Isolate::Delete in node::worker::Worker::Run).
void pinLibrary() {
  static const bool pinned = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&unmapSource), &info) == 0 || info.dli_fname == nullptr) return false;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

napi_value ModuleInit(napi_env env, napi_value exports) {
  pinLibrary();
  napi_property_descriptor props[] = {
      {"init", nullptr, Init, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"open", nullptr, Open, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"submit", nullptr, Submit, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"submitBatch", nullptr, SubmitBatch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"wait", nullptr, Wait, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"take", nullptr, Take, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"close", nullptr, Close, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"readSource", nullptr, ReadSource, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"checksum", nullptr, Checksum, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"failSharedThread", nullptr, FailSharedThread, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_value version;
  napi_create_int32(env, INTERFACE, &version);
  napi_set_named_property(env, exports, "interface", version);
  return exports;
}

}  // namespace

NAPI_MODULE_INIT() { return ModuleInit(env, exports); }

/**
 * The native I/O core (`native/dbsmack_io.cc`, built by node-gyp into `build/Release/dbsmack_io.node`) as
 * JavaScript sees it: loading it (or saying why it cannot be loaded), and the pump that hands its
 * completions back to the connections that wait for them.
 *
 * The pump: a request is submitted (sent at once, from this thread); when the thread has nothing else to do
 * (a `setImmediate`, so every promise reaction of the last batch has run and every client has sent its next
 * statement), `wait()` blocks in epoll over all the thread's native connections until at least one
 * response is complete, and returns every completion of that round at once. The wait is bounded by the
 * earliest wake-up the clients asked for (`noteWake`: sleeps and rate-mode arrivals go through it), by the
 * thread's earliest timer (the core reads libuv's timer heap: the engine's timers, where the load runs in
 * the main thread) and by 50 ms (stop requests); any event of the thread's loop (a message, a signal, a
 * probe's socket) wakes it at once, because libuv's own epoll descriptor is part of the set.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The addon's functions (see native/dbsmack_io.cc). */
interface Addon {
  /** What it was built as (ADDON_INTERFACE); undefined in addons from before it was there. */
  interface?: number;
  init(design: number): void;
  open(fd: number, protocol: number, options: number): number;
  submit(id: number, bytes: Uint8Array, kind: number, flags: number): void;
  submitBatch(
    id: number,
    bytes: Uint8Array,
    offsets: Uint32Array,
    count: number,
    kind: number,
    flags: number,
    results: Float64Array,
    budgetUs: number,
    group: number,
  ): void;
  wait(timeoutMs: number, results: Float64Array): number;
  take(id: number): Buffer;
  close(id: number): void;
  /** The bundles' source for the code cache (src/code-cache.ts loads the addon itself and calls it). */
  readSource(file: string, head: string, tail: string): string | undefined;
  /** Tests: the shared I/O thread leaves its loop as on a failure; whether one was running. */
  failSharedThread(): boolean;
}

export const P_MYSQL = 0;
export const P_PG = 1;

// open()'s MySQL session options (as in the addon): CLIENT_DEPRECATE_EOF, MARIADB_CLIENT_CACHE_METADATA.
export const O_DEPRECATE_EOF = 1;
export const O_CACHE_METADATA = 2;

// Request kinds and flags (as in the addon).
export const K_MY_RESULT = 0;
export const K_MY_PREPARE = 1;
export const K_NO_REPLY = 2;
export const K_PG = 3;
export const F_RAW = 1;
export const F_PG_EXT = 2;

// Completion status.
export const ST_OK = 0;
export const ST_ERR = 1;
export const ST_RAW = 2;
export const ST_LOST = 3;
/** A batch ended (`submitBatchNative`): its statements' results are in the batch's own array. */
export const ST_BATCH = 4;

/** What a native connection does with a completion of its request. */
export interface CompletionSink {
  onCompletion(status: number, value: number, latencyUs: number): void;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Where node-gyp puts the addon (the same from src/ and from dist/); `DBSMACK_NATIVE_ADDON` names another
 * file (the tests point it at a missing one to check the fallback).
 */
export const ADDON_PATH =
  process.env.DBSMACK_NATIVE_ADDON ?? path.join(root, 'build', 'Release', 'dbsmack_io.node');

/**
 * The addon's interface this JavaScript is written against (INTERFACE in native/dbsmack_io.cc): an addon of
 * another build (left in build/ by an update whose compile failed, or named by DBSMACK_NATIVE_ADDON) is not
 * used, and the JavaScript I/O path runs with a note.
 */
export const ADDON_INTERFACE = 5;

let addon: Addon | undefined;
let loadError: string | undefined;

/** The addon, or undefined (then `nativeUnavailable()` says why). Loaded once per thread. */
export function nativeAddon(): Addon | undefined {
  if (addon !== undefined || loadError !== undefined) return addon;
  if (process.platform !== 'linux') {
    loadError = `the native I/O core is built for Linux only (this is ${process.platform})`;
    return undefined;
  }
  try {
    const loaded = createRequire(import.meta.url)(ADDON_PATH) as Addon;
    if (loaded.interface === ADDON_INTERFACE) addon = loaded;
    else
      loadError =
        `the native I/O core in ${path.relative(process.cwd(), ADDON_PATH) || ADDON_PATH} is of another ` +
        `dbsmack build (interface ${loaded.interface ?? 1}, this one needs ${ADDON_INTERFACE}): ` +
        '`npm install` (or `node scripts/build-native.js`) builds it again';
  } catch (e) {
    const code = (e as { code?: string }).code;
    loadError =
      code === 'MODULE_NOT_FOUND'
        ? `the native I/O core was not built (${path.relative(process.cwd(), ADDON_PATH) || ADDON_PATH} is missing: ` +
          'npm install builds it when a C++ compiler is there)'
        : `the native I/O core did not load: ${(e as Error).message}`;
  }
  return addon;
}

/** Why the addon is not available (undefined when it is). */
export function nativeUnavailable(): string | undefined {
  nativeAddon();
  return loadError;
}

// ---- the pump -----------------------------------------------------------------------------------------------

const MAX_BLOCK_MS = 50;
const results = new Float64Array(4 * 1024);
const sinks: (CompletionSink | undefined)[] = [];
let started = false;
let scheduled = false;
let inFlight = 0;

function core(): Addon {
  const a = nativeAddon();
  if (a === undefined) throw new Error(loadError);
  if (!started) {
    a.init(nativeDesign());
    started = true;
  }
  return a;
}

/** Hand a socket's descriptor to the core; its completions go to `sink`. Returns the connection's id. */
export function openNative(fd: number, protocol: number, options: number, sink: CompletionSink): number {
  const id = core().open(fd, protocol, options);
  sinks[id] = sink;
  return id;
}

/** Send one request; its completion comes to the connection's sink from the pump. */
export function submitNative(id: number, bytes: Uint8Array, kind: number, flags: number): void {
  (addon as Addon).submit(id, bytes, kind, flags);
  inFlight++;
  schedulePump();
}

/**
 * Run `count` statements one after another on the connection (statement i is `bytes[offsets[i],
 * offsets[i + 1])`), in events of `group` statements (`count` is whole events), no event started once
 * `budgetUs` have passed (the statements of one started all run); each one's [status, value, latencyUs, endUs
 * from now] goes into `results` (after the count of results so far in `results[0]`) as it completes, and
 * the sink gets one ST_BATCH completion at the end. The batch ends early at its first error.
 */
export function submitBatchNative(
  id: number,
  bytes: Uint8Array,
  offsets: Uint32Array,
  count: number,
  kind: number,
  flags: number,
  results: Float64Array,
  budgetUs: number,
  group: number,
): void {
  (addon as Addon).submitBatch(id, bytes, offsets, count, kind, flags, results, budgetUs, group);
  inFlight++;
  schedulePump();
}

/**
 * The pump runs once the thread has nothing else to do. One function for every caller: V8 keeps type
 * feedback per function, so the `setImmediate` here has been seen by the time the engine's statement loop is
 * optimized, and the branch taken for the first time later does not throw that (large) compiled loop away.
 */
function schedulePump(): void {
  if (!scheduled) {
    scheduled = true;
    setImmediate(pump);
  }
}

let design: number | undefined;

/**
 * The core's design (native/dbsmack_io.cc, top comment): 3 reads a thread's only connection with blocking
 * calls on the thread, and otherwise runs each statement batch either from the thread's epoll loop (B) or
 * on its connection's own thread with blocking calls (D), chosen per batch by protocol and by how many
 * connections the thread has; 4 is 3's B with every second connection's batches on one native I/O thread
 * of the core's (one V8 isolate, the system calls on two threads). Which of the two a load thread's
 * connections get is `loadDesign`'s choice, made by the load thread before it connects (`chooseLoadDesign`).
 * `DBSMACK_NATIVE_DESIGN` = 0 (B only), 2 (D only), 1 (A, no batches: kept for bench/native-floor), 3 or 4
 * makes one design run everywhere, to measure it.
 */
function nativeDesign(): number {
  design ??= askedDesign() ?? 3;
  return design;
}

/**
 * The design `DBSMACK_NATIVE_DESIGN` asks for (undefined: none, or not one of 0-4: the choice is dbsmack's, and
 * the run says so once: connectors.ts `loadEnvironmentNotes`).
 */
export function askedDesign(v: string | undefined = process.env.DBSMACK_NATIVE_DESIGN): number | undefined {
  const d = Number(v);
  return v !== undefined && v !== '' && Number.isInteger(d) && d >= 0 && d <= 4 ? d : undefined;
}

/**
 * Fewest PostgreSQL clients of a run for which one load thread with the core's shared I/O thread (design 4)
 * is the default (capacity.ts `defaultWorkers`, and `loadDesign`; for `dbsmack pgbench -j 2` too: pgbench.ts
 * `pgbenchWorkers`). Measured on a 2-core machine against the two load threads of design 3
 * (docs/performance.md, 2026-12-05): at 16, 32, 64, 96 and 128 clients and in rate mode at 64, less CPU a
 * query and less start-up at about the same throughput; at 4 and 8 mixed in three runs on two machines (ahead
 * in one run, in another the point select costlier). At 8 again on a third (2026-12-06, bench/peers --time 8
 * --clients 8 --only postgres,pgbench --variant "" --variant "DBSMACK_NATIVE_DESIGN=4 --workers 1", two sets,
 * 4 and 6 rounds): its q/s 0.96-1.08 of the two threads' (median of each row's rounds: point select 1.00 and
 * 1.08, the module 0.96 and 1.01, `dbsmack pgbench -S` 1.03 and 1.02), the whole process's CPU a query lower
 * in all six rows (against the peer's: 1.02/1.11, 1.08/1.09, 1.00/1.11; 0.89/1.00, 1.16/1.18, 1.14/1.20), the
 * start-up 0.22-0.42 s against 0.31-0.52 (one V8 isolate fewer), the CPU after start-up lower in five of six.
 * So from 8. Below, the same variants (2026-12-06, four rounds): at 2 clients 0.81-0.87 of the two threads'
 * q/s (each reads its one connection with blocking calls), at 4 0.89-1.04: two load threads stay. MySQL keeps
 * two load threads: MariaDB's figures were worse with one.
 */
export const SHARED_IO_MIN_CLIENTS = 8;

/**
 * Most PostgreSQL clients of a run for which each gets a load thread of its own by default (capacity.ts
 * `defaultWorkers`; design 3's `solo()`: the thread reads its one connection with blocking calls, as
 * sysbench's and pgbench's threads do, and nothing hands a batch from one thread to another). Why: a
 * connection thread that hands its batches to a load thread and back (D) or a load thread's epoll loop over
 * several connections (B, and design 4 with its shared I/O thread) is woken by another thread of dbsmack's;
 * the scheduler then moves it, or its backend, to the waker's CPU, and the pair answer each other across
 * CPUs until it settles again. Measured 2026-12-06 on a 2-core Xeon guest (sysbench 105-125k PostgreSQL
 * point selects a second at 4 and 8 clients), bench/peers --time 8 --repeat 3-4 --only postgres,pgbench
 * --variant "" --variant="--workers N", against the layout of before: at 4 clients (two load threads, D's
 * connection threads) in two sets the point select 1.06 and 1.01 of sysbench's q/s against 1.03 and 0.75,
 * the module (`run ./bench/pgbench-select.ts`) 1.04 and 0.97 of pgbench -S -M prepared against 0.63 and 0.50
 * (the old layout's rounds 0.43-0.96, 0.26-0.42 cross-CPU wake-ups a query against 0.00-0.01), its CPU a
 * query after start-up 0.94-1.17 of the peer's against 0.94-2.44; oltp_read_write by hand (15 s, two pairs)
 * 1.07-1.17 of the old layout's q/s at 0.85-1.10 of its CPU a query. Start-up 0.20-0.29 s against
 * 0.13-0.20. At 8 clients a thread each did better on single statements (point select 1.02-1.17 of sysbench
 * in four sets, the old layout, one load thread with the shared I/O thread, 0.83-1.13; the module 1.00-1.09
 * against 0.80-0.97) but not on transactions, whose statements each wake their thread where the one loop
 * collects several replies a wake-up: oltp_read_write 0.96 of sysbench's q/s at 1.24 of its CPU a query
 * after start-up (`worse`) against 1.01 at 0.94 (`better`), oltp_read_only 0.97 at 1.19 against 0.91 at 1.09;
 * by hand 20 s runs, 13.4-13.8 µs a query against 9.0-9.8; start-up 0.35-0.48 s, 160 MB resident against
 * 68. So 4. (D under one load thread, every connection on its own thread, was 0.82 and 0.92 of sysbench at
 * 8: its batches' hand-offs; with eight times BATCH_MAX 1.00. At 16 a thread each made 1.10 of sysbench's
 * q/s at 1.09 of its CPU, 1.37 on the module.) MySQL keeps its two load threads (MariaDB's point select at 8
 * clients was 1.64 of sysbench's on the same machine).
 */
export const SOLO_IO_MAX_CLIENTS = 4;

/**
 * Most PostgreSQL clients of a run that get a load thread each when every statement of the workload only
 * reads (its `readOnly`: run/plan.ts `readsOnly`). What made transactions costlier a thread each at 8 was
 * the waits in the server, not the statements an event holds: measured 2026-12-06 on a 2-core Xeon guest,
 * bench/peers --time 8 --clients 8 --repeat 3 --only postgres,pgbench,postgres-ro,postgres-rw --variant ""
 * --variant="--workers 8", a thread each against one load thread with the shared I/O thread: point select
 * 1.10 of sysbench's q/s against 0.91 (`better`), CPU a query after start-up 1.00 of its against 0.99;
 * oltp_read_only 1.02 against 0.85 at 1.08 against 1.13; the module 1.11 against 0.83 at 1.00 against 1.24;
 * `dbsmack pgbench -S -j 8` 1.20 against `-j 2`'s 1.00; but oltp_read_write 0.94 against 0.91 at 1.25
 * (`worse`) against 1.06, and oltp_update_index, one UPDATE an event, by hand (10 s, two pairs) 0.91 of the
 * shared loop's q/s at 1.70 of its CPU a query. Per thread (/proc/PID/task, 8 clients, 10 s): read_write, the
 * eight load threads 1.06 s of user CPU against the one loop's 0.58, V8's helper threads (its compilers)
 * 0.37 s against 0.10; read_only, seconds 2.5 to 9.5, 2.5 µs of user CPU a query against 1.6 but 3.9 of
 * system CPU against 6.1 (the shared loop's threads wake each other across CPUs), in all 6.4 against 7.7
 * (sysbench 6.1-6.6). Eight isolates each run and compile what one did (perf: no deoptimisation loop, the
 * compilers 0.1% of the samples after 3 s; `--maglev`, a lower interrupt budget or `--always-sparkplug` did
 * not lower it); where the statements wait in the server, a thread each saves no system CPU either
 * (oltp_update_index 1.73-1.75 s against 1.32-1.36, read_write 2.35-3.04 against 2.47-2.58). Start-up
 * 0.31-0.41 s against 0.08-0.14 (seven more isolates): in an 8 s run the whole process's CPU a query
 * 1.06-1.11 of the peer's against 1.00-1.27. Beyond 8 (16 clients, 2026-12-06) a thread each made 1.10 of
 * sysbench's q/s at 1.09 of its CPU, 1.37 on the module: the shared loop stays.
 * On a 2-core AMD EPYC guest (2026-12-06, twenty-eighth session; sysbench 31-36k point selects a second at 8,
 * a bare Node.js worker 70 ms of CPU to start against the Xeon's 21), the same variants with --workers 1,
 * four rounds: point select 1.06 of sysbench's q/s against 1.01, the module 1.00 against 0.97, the server's
 * CPU a query 0.92-0.93 of the shared loop's, but the client's after start-up 1.03 against 0.87 and 1.14
 * against 1.02 of the peer's, and start-up 1.00-1.27 s against 0.28-0.40. Kept for the throughput and the
 * server's cost, which both machines favour; the client's price differs by machine (docs/performance.md).
 * Again on such a guest (2026-12-07, thirtieth session; 20 s runs, seconds 5 to 18, the module at 8 clients):
 * a thread each 39.5-40.6k q/s at 15.1-15.6 µs of client CPU a query, `--workers 1` 39.9-44.5k at 11.8-13.5,
 * and pgbench itself pays the same for the layout (`-j 8` 18.0-19.4 µs against `-j 2`'s 13.9-16.4); in
 * bench/peers' 30 s runs the module's steady state is 1.09 of pgbench -j 2's. Still kept: what would choose
 * per machine is a signal a run can read (the Xeon's shared loop lost to cross-CPU wake-ups, 0.26-0.42 a
 * query there, 0.04-0.10 here), measured on both kinds of machine.
 * The AMD guests are PVM guests (software virtualisation; bench/machine.ts, the first line bench/peers
 * prints: a bare worker 62 ms of CPU to start, a fresh page 10 us to touch). There (2026-12-07, thirty-first
 * session, three rounds) `--workers 1` made 0.95-0.98 of a thread each's q/s on the point select,
 * oltp_read_only and the module at 0.78-0.80 of its whole-process CPU, most of it the seven isolates'
 * start-up. If the Xeon guests print a cheap worker and no PVM, "a thread each where a worker is cheap" is
 * the rule to measure there.
 * On an AMD EPYC guest under KVM (2026-12-07, thirty-second session: a bare worker 25-35 ms, a page fault
 * 2-3 us), the same three variants, three rounds: `--workers 1` made 0.90, 1.09 and 1.11 of a thread each's
 * q/s on the point select, oltp_read_only and the module at 0.76-0.93 of its whole-process CPU (a thread each
 * 1.03-1.16 of the peers', start-up 0.45-0.52 s against 0.13-0.17), the server's CPU a point select 19.6 us
 * under a thread each against 23.1. So a cheap worker is not the trait: kept for the Xeon's throughput, and
 * bench/machine.ts now prints where the scheduler puts two threads that wake each other, to read on a Xeon.
 * On a Xeon guest under KVM (2026-12-07, thirty-third session) the shared loop made 0.73-0.83 of a thread
 * each's q/s at more CPU a query; that placement, probed by the native core and kept per boot, was tried as
 * the rule's trait and dropped: on that one machine it read 0-100% of turns apart from moment to moment.
 * One load thread with every batch on its connection's own thread and batches of up to 2048 statements
 * (`DBSMACK_NATIVE_DESIGN=2 DBSMACK_BATCH_MAX=2048 --workers 1`) met both targets at 8 on a Xeon guest of
 * model 167 (thirty-fourth session) but not on one of model 207 (2026-12-07, thirty-fifth session, three
 * sets): 0.89-0.99 of a thread each's q/s on single statements, `dbsmack pgbench -S` 1.22-1.25 of pgbench's
 * CPU in two sets of three; only oltp_read_only gained in all three. Not the default either.
 */
export const SOLO_IO_READS_MAX_CLIENTS = 8;

/**
 * CPU vendors (/proc/cpuinfo `vendor_id`) on whose machines PostgreSQL readers get no more load threads of
 * their own than writers do (SOLO_IO_MAX_CLIENTS; from SHARED_IO_MIN_CLIENTS the shared I/O thread's one).
 * Every 2-core AMD EPYC guest measured so far (PVM 2026-12-06 and -07, KVM 2026-12-07 twice) made about as
 * many queries at 8 readers with one load thread as with a thread each (0.90-1.12 of them), at less CPU a
 * query, where every Xeon guest (four sessions, two models) lost a tenth to a quarter of its queries that way.
 * Measured 2026-12-07 (thirty-sixth session, a KVM guest of AMD EPYC, sysbench 23-27k point selects a second
 * at 8), bench/peers --time 8 --repeat 3-4 --only postgres,pgbench,postgres-ro, q/s @ whole-process CPU
 * against the peer: at 8 readers a thread each 0.94 @ 1.32, 1.00 @ 1.33 and 1.03 @ 1.36 (point select,
 * read_only, the module; start-up 0.82-1.00 s: a bare worker costs 63 ms of CPU there), one load thread with
 * the shared I/O thread 1.09 @ 0.81, 1.05 @ 0.89, 1.04 @ 0.96 (start-up 0.24-0.33 s); at 6 readers (point
 * select) a thread each 1.14 @ 1.02, two load threads 1.16 @ 0.85. With the rule (four rounds at 8) the
 * default made 1.03-1.09 @ 0.83-0.97 against `--workers 8`'s 0.99-1.03 @ 1.14-1.36. The vendor stands for
 * whatever in these hosts makes the difference (neither what a worker costs to start nor where the scheduler
 * puts two threads that wake each other told the machines apart): a rule of what was measured, which
 * `--workers` overrides; a machine of another vendor, or whose vendor cannot be read, keeps the thread each.
 */
export const SHARED_LOOP_CPU_VENDORS: readonly string[] = ['AuthenticAMD'];

/** Whether the core runs design 4's shared I/O thread here (its hand-over needs x86's store order). */
export const sharedIoSupported = process.arch === 'x64' || process.arch === 'ia32';

/**
 * The design for a load thread's native connections: 4 where the thread holds all of a run's clients
 * (`sole`), they are PostgreSQL's and there are at least SHARED_IO_MIN_CLIENTS of them; else 3.
 * `DBSMACK_NATIVE_DESIGN`, when given, wins.
 */
export function loadDesign(driver: string, clients: number, sole: boolean): number {
  const asked = askedDesign();
  if (asked !== undefined) return asked;
  return sharedIoSupported && driver === 'postgres' && sole && clients >= SHARED_IO_MIN_CLIENTS ? 4 : 3;
}

/**
 * A load thread is about to open its native connections: run them on `loadDesign`'s choice. The core
 * changes design only while none of this thread's connections is open; with some open (not reached: a run's
 * connections are closed before the next run's open), the design stays what it was. Any other failure of
 * the core (its shared thread's descriptors not made) is the load thread's failure to start. Returns the
 * design the connections will have (the RunResult says when it is 4: `target.shared_io_thread`).
 */
export function chooseLoadDesign(driver: string, clients: number, sole: boolean): number {
  const d = loadDesign(driver, clients, sole);
  if (d !== design) {
    try {
      useNativeDesign(d);
    } catch (e) {
      if (!/connections are open/.test((e as Error).message)) throw e;
    }
  }
  return nativeDesign();
}

/**
 * Tests: run this thread's later native connections on design `d` (undefined: the environment's again).
 * Only while the thread has none open (the core throws otherwise, and the design stays).
 */
export function useNativeDesign(d: number | undefined): void {
  const next = d ?? askedDesign() ?? 3;
  core().init(next);
  design = next;
}

/**
 * Tests: this thread's shared I/O thread (design 4) leaves its loop as it would if its epoll_wait failed: the
 * batches it holds end as lost, later ones run on this thread. Whether one was running.
 */
export function failSharedThread(): boolean {
  return core().failSharedThread();
}

/** Whether the core runs statement batches (every design but A). */
export function batchesSupported(): boolean {
  return nativeDesign() !== 1;
}

/** The error or raw response bytes of a connection's last completion. */
export function takeNative(id: number): Buffer {
  return (addon as Addon).take(id);
}

/** Close a native connection; `inFlight`: it had a request whose completion will now never come. */
export function closeNative(id: number, inFlightRequest: boolean): void {
  (addon as Addon).close(id);
  sinks[id] = undefined;
  if (inFlightRequest) inFlight--;
}

/**
 * Called around each batch of completions: `begin` before the first is handed over, `end` once every promise
 * reaction of the batch has run (the next `setImmediate`, queued before the pump's own). The engine defers
 * its interval flushes to `end` (engine/io.ts): inside a batch, one client's statement and the end of its
 * event are separated by other clients' reactions, and a flush between them would split the pair.
 */
let batchHooks: { begin(): void; end(): void } | undefined;

export function setBatchHooks(hooks: { begin(): void; end(): void } | undefined): void {
  batchHooks = hooks;
}

const endBatch = (): void => batchHooks?.end();

/** Wake-ups (epoch ms) clients asked for, unordered; the pump does not block past the earliest. */
const wakes: number[] = [];

/** A client will wake at `atMs` (epoch ms): the pump does not block past it. */
export function noteWake(atMs: number): void {
  if (started) wakes.push(atMs);
}

/** Milliseconds to the earliest wake-up still ahead (dropping those passed), at most `cap`. */
function untilWake(cap: number): number {
  if (wakes.length === 0) return cap;
  const now = Date.now();
  let min = Number.POSITIVE_INFINITY;
  for (let i = wakes.length - 1; i >= 0; i--) {
    const w = wakes[i] as number;
    if (w <= now) {
      wakes[i] = wakes[wakes.length - 1] as number;
      wakes.pop();
    } else if (w < min) min = w;
  }
  return min === Number.POSITIVE_INFINITY ? cap : Math.max(0, Math.min(cap, Math.floor(min - now)));
}

function pump(): void {
  scheduled = false;
  if (inFlight <= 0) return;
  const n = (addon as Addon).wait(untilWake(MAX_BLOCK_MS), results);
  if (n > 0 && batchHooks !== undefined) {
    batchHooks.begin();
    setImmediate(endBatch);
  }
  for (let i = 0; i < n; i++) {
    const o = 4 * i;
    const sink = sinks[results[o] as number];
    inFlight--;
    sink?.onCompletion(results[o + 1] as number, results[o + 2] as number, results[o + 3] as number);
  }
  if (inFlight > 0) schedulePump();
}

/**
 * `--profile-stacks` and `--count-calls`: where in the server's code its threads were when they were preempted
 * or blocked, how often named functions ran, and which callers waited for which locks, over a window of the
 * measured part (centred in it by default). One RunProbe that stores its findings under `profile` beside
 * what `--profile` found there (or alone).
 *
 * Before the measured part it cleans what a killed dbsmack left, finds the server's processes and binary,
 * places the uprobes and starts perf with its events disabled; at the window's edges it enables and disables
 * them (and turns the performance schema's wait history on and back); after the run, when the clients no
 * longer compete for the CPU, it decodes the recording, removes the probes and the temporary directory, and
 * compares the throughput inside the window with the rest of the run: what recording cost the server.
 * Anything missing (perf, the rights, a local server, a readable binary) becomes a note; the run goes on.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection, Target } from '../driver/types.ts';
import type { ProbeStartInfo, RunProbe } from '../engine/run-once.ts';
import type { ProfileData, ProfileNote } from '../metrics/profile-types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import type { CodeProfileFields, CodeWindow, StacksProfile, WindowCost } from '../metrics/stacks-types.ts';
import { round, round3 } from '../numbers.ts';
import { dataSymbolAt, ElfError, type ElfSymbols, readElfSymbols } from './elf-symbols.ts';
import { MysqlLockCallers, type PsChanges, putBack, serverIdentity } from './mysql-lock-callers.ts';
import { decodeRecording, type PerfSession, STACK_BYTES, startRecord } from './perf-record.ts';
import {
  cleanLeftovers,
  type LeftMarker,
  MARKER,
  onExitCleanup,
  perfBlocked,
  perfVersion,
  removeRunDir,
  serverBinary,
  tempPrefix,
} from './perf-tool.ts';
import { processInfo } from './proc-tasks.ts';
import { probeConnection } from './profile-probe.ts';
import { locateServer } from './server-process.ts';
import { SwitchStacks } from './switch-stacks.ts';
import { CallCounter } from './uprobes.ts';

/** Seconds of the window when `--stacks-window` is not given (about 100-250 MB of recording on 2 cores). */
export const DEFAULT_WINDOW_S = 2;
/** Tries of `perf record` that exited at once without a word (PerfSession.exitedSilently). */
const RECORD_TRIES = 3;
/** Rows of `lock_callers` kept. */
const TOP_LOCK_CALLERS = 50;
/** How often the performance schema's wait history is read during the window. */
const LOCK_POLL_MS = 100;
/** Lock waits without a SOURCE seen before the history is given up as useless on this server. */
const SOURCELESS_AFTER = 200;

export interface CodeProbeOptions {
  stacks: boolean;
  countCalls: readonly string[];
  windowS?: number;
  /** `--stacks-out FILE`. */
  outFile?: string;
  /** In a sweep, one file per run: FILE-<clients>c-<n>.ext. */
  perRunFiles?: boolean;
  serverPid?: number;
  connectTimeoutMs: number;
}

type WindowState = 'none' | 'waiting' | 'open' | 'closed';

const nowNs = (): bigint => process.hrtime.bigint();

/** Where a PIE binary is loaded in `pid`: its load bias, from /proc/PID/maps. */
function loadBias(pid: number, binary: string, elf: ElfSymbols): number | undefined {
  if (!elf.pie) return 0;
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-[0-9a-f]+\s+\S+\s+([0-9a-f]+)\s+\S+\s+\d+\s+(.*)$/.exec(line);
      if (m && m[3]?.trim() === binary && Number.parseInt(m[2] ?? '1', 16) === 0)
        return Number.parseInt(m[1] ?? '0', 16) - (elf.firstLoadVaddr - (elf.firstLoadVaddr % 4096));
    }
  } catch {
    // maps hidden: locks stay unnamed
  }
  return undefined;
}

/** `out.folded` → `out-8c-2.folded` (a sweep's runs), and the off-CPU file beside it. */
export function stacksFiles(
  file: string,
  run?: { clients: number; n: number },
): { counts: string; offCpu: string } {
  const ext = path.extname(file);
  const stem = ext ? file.slice(0, -ext.length) : file;
  const base = run ? `${stem}-${run.clients}c-${run.n}` : stem;
  return { counts: `${base}${ext}`, offCpu: `${base}.off-cpu${ext}` };
}

/**
 * Throughput of the timeline intervals wholly inside the window against those wholly outside it. Undefined
 * when either side has no interval.
 */
export function windowCost(
  r: RunResult,
  startS: number,
  lengthS: number,
  what: string[],
): WindowCost | undefined {
  const end = startS + lengthS;
  let inQ = 0;
  let inT = 0;
  let inN = 0;
  let outQ = 0;
  let outT = 0;
  let outN = 0;
  for (const p of r.intervals ?? []) {
    if (p.dur <= 0) continue;
    const a = p.t - p.dur;
    if (a >= startS - 1e-6 && p.t <= end + 1e-6) {
      inQ += p.queries;
      inT += p.dur;
      inN++;
    } else if (p.t <= startS + 1e-6 || a >= end - 1e-6) {
      outQ += p.queries;
      outT += p.dur;
      outN++;
    }
  }
  if (inN === 0 || outN === 0 || outT <= 0 || inT <= 0 || outQ === 0) return undefined;
  const inside = inQ / inT;
  const outside = outQ / outT;
  return {
    what,
    inside_qps: round(inside, 1),
    outside_qps: round(outside, 1),
    ratio: Math.round((inside / outside) * 1000) / 1000,
    inside_intervals: inN,
    outside_intervals: outN,
  };
}

export class CodeProbe implements RunProbe {
  readonly key = 'profile';
  private cleaned = false;
  private readonly elfCache = new Map<string, ElfSymbols>();
  private readonly runsAt = new Map<number, number>();
  private leftMarkers: LeftMarker[] = [];
  // per run
  private notes: ProfileNote[] = [];
  private conn: Connection | undefined;
  private target: Target | undefined;
  private clients = 0;
  private recorded = '';
  private dir: string | undefined;
  private record: { session: PerfSession; file: string } | undefined;
  private counter: CallCounter | undefined;
  private locks: MysqlLockCallers | undefined;
  private lockPoll: NodeJS.Timeout | undefined;
  private dataSymbol: ((a: bigint) => string | undefined) | undefined;
  private state: WindowState = 'none';
  private timer: NodeJS.Timeout | undefined;
  private measureNs = 0n;
  private openNs = 0n;
  private closeNs = 0n;
  private window: CodeWindow | undefined;
  private opening: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private lockResult: Awaited<ReturnType<MysqlLockCallers['end']>> | undefined;

  constructor(private readonly opts: CodeProbeOptions) {}

  private note(what: string, why: string, hint?: string): void {
    this.notes.push({ what, why, ...(hint ? { hint } : {}) });
  }

  private get what(): string {
    return this.opts.stacks ? 'stacks' : 'calls';
  }

  async start(info: ProbeStartInfo): Promise<void> {
    const t0 = Date.now();
    this.notes = [];
    this.record = undefined;
    this.counter = undefined;
    this.locks = undefined;
    this.lockResult = undefined;
    this.dataSymbol = undefined;
    this.state = 'none';
    this.window = undefined;
    this.target = info.target;
    this.clients = info.clients;
    this.recorded = '';
    if (!this.cleaned) {
      this.cleaned = true;
      const left = await cleanLeftovers().catch(() => ({ cleaned: [], markers: [] }));
      this.leftMarkers = left.markers;
      if (left.cleaned.length > 0)
        process.stderr.write(
          `dbsmack: cleaned up after an earlier dbsmack that was killed: ${left.cleaned.join('; ')}\n`,
        );
    }
    if (info.target.driver === 'sqlite') {
      this.note(this.what, 'SQLite runs inside dbsmack: there is no server process to record');
      return;
    }
    await this.prepare(info).catch((e: unknown) => this.note(this.what, `failed: ${(e as Error).message}`));
    this.plan(info, t0);
  }

  /** Find the server, check perf, place the probes and start perf (disabled). */
  private async prepare(info: ProbeStartInfo): Promise<void> {
    const target = info.target;
    try {
      this.conn = await probeConnection(target, this.opts.connectTimeoutMs);
    } catch (e) {
      this.note(this.what, `dbsmack's own connection failed: ${(e as Error).message}`);
    }
    this.dir = mkdtempSync(path.join(os.tmpdir(), tempPrefix()));
    onExitCleanup.dir(this.dir);
    if (this.conn && target.driver === 'mysql') {
      const conn = this.conn;
      const identity = await serverIdentity(conn).catch(() => undefined);
      if (identity !== undefined) await this.putBackLeftovers(conn, identity);
      if (this.opts.stacks && identity !== undefined) {
        const marker = path.join(this.dir, MARKER);
        // written while the history is on, so that a killed run's settings are put back by the next run
        this.locks = new MysqlLockCallers(conn, (changes) => {
          const on = changes.consumers.length > 0 || changes.instruments.length > 0;
          if (on)
            writeFileSync(marker, JSON.stringify({ server: identity, url: target.redactedUrl, changes }), {
              mode: 0o600,
            });
          else rmSync(marker, { force: true });
        });
      }
    }
    const located = await locateServer(target, this.conn, info.sessionIds, this.opts.serverPid);
    if ('note' in located) {
      this.note(this.what, located.note.why, located.note.hint);
      return;
    }
    const server = located.server;
    let pids = [server.pid];
    this.recorded = `process ${server.pid} (${server.command}, all threads)`;
    if (server.withChildren) {
      const backends: number[] = [];
      for (const p of info.sessionIds.filter((n) => n > 0)) {
        if ((await processInfo(p))?.ppid === server.pid) backends.push(p);
      }
      if (backends.length === 0) {
        this.note(this.what, `none of the run's backends is a child of postmaster ${server.pid}`);
        return;
      }
      pids = backends;
      this.recorded = `the run's ${backends.length} backends of postmaster ${server.pid}`;
    }
    const recordBlocked = this.opts.stacks ? await perfBlocked('stacks', false) : undefined;
    const countBlocked = this.opts.countCalls.length > 0 ? await perfBlocked('calls', true) : undefined;
    if (recordBlocked) this.notes.push(recordBlocked);
    if (countBlocked && countBlocked.why !== recordBlocked?.why) this.notes.push(countBlocked);
    const canRecord = this.opts.stacks && recordBlocked === undefined;
    const canCount = this.opts.countCalls.length > 0 && countBlocked === undefined;
    if (!canRecord && !canCount) return;
    const bin = await serverBinary(pids[0] as number);
    if ('note' in bin) {
      this.notes.push(bin.note);
      return;
    }
    let elf: ElfSymbols | undefined = this.elfCache.get(bin.path);
    if (elf === undefined) {
      try {
        elf = readElfSymbols(bin.path);
        this.elfCache.set(bin.path, elf);
      } catch (e) {
        this.note(
          this.what,
          e instanceof ElfError
            ? e.message
            : `cannot read the symbols of ${bin.path}: ${(e as Error).message}`,
        );
      }
    }
    if (elf !== undefined) {
      const bias = loadBias(pids[0] as number, bin.path, elf);
      const objects = elf.objects;
      if (bias !== undefined) this.dataSymbol = (a) => dataSymbolAt(objects, Number(a) - bias);
    }
    // perf ends by itself after the window even if this process is killed
    const lifeS =
      Math.max(0, (info.measureAtMs - Date.now()) / 1000) +
      (info.measureS ?? 0) +
      (this.opts.windowS ?? DEFAULT_WINDOW_S) +
      60;
    if (canRecord) this.record = startRecord({ dir: this.dir, pids, lifeS, futex: true });
    if (canCount && elf !== undefined) {
      const counter = new CallCounter(bin.path, elf);
      await counter.place(this.opts.countCalls);
      const err = await counter.start(pids, lifeS, this.dir);
      if (err) {
        this.note('calls', `cannot count calls: ${err}`);
        await counter.remove();
        this.notes.push(...counter.notes);
      } else this.counter = counter;
    }
    if (this.record) {
      let err = await this.record.session.ready();
      // a thread that ended while perf attached (exitedSilently): the next try lists the threads again
      for (let i = 0; err !== undefined && i < RECORD_TRIES - 1 && this.record.session.exitedSilently; i++) {
        await new Promise((r) => setTimeout(r, 200));
        this.record = startRecord({ dir: this.dir, pids, lifeS, futex: true });
        err = await this.record.session.ready();
      }
      if (err) {
        const silent = this.record.session.exitedSilently
          ? ` (${RECORD_TRIES} tries; perf gave no reason, as when a thread of the server ends while it attaches)`
          : '';
        this.note('stacks', `perf record could not start: ${err}${silent}`);
        this.record = undefined;
      }
    }
  }

  /** Put back the performance schema settings a killed dbsmack left changed on this server. */
  private async putBackLeftovers(conn: Connection, identity: string): Promise<void> {
    const rest: LeftMarker[] = [];
    for (const m of this.leftMarkers) {
      const marker = m.marker as { server?: string; url?: string; changes?: PsChanges };
      if (marker.server !== identity || marker.changes === undefined) {
        rest.push(m);
        continue;
      }
      if (await putBack(conn, marker.changes)) {
        rmSync(m.dir, { recursive: true, force: true });
        process.stderr.write(
          `dbsmack: put back the performance schema settings an earlier dbsmack that was killed left changed on ${marker.url ?? identity} (${marker.changes.consumers.length} consumers, ${marker.changes.instruments.length} instruments)\n`,
        );
      } else rest.push(m);
    }
    this.leftMarkers = rest;
  }

  /** Place the window in the measured part and arm its timer. */
  private plan(info: ProbeStartInfo, t0: number): void {
    if (!this.record && !this.counter && !this.locks) return;
    const requested = this.opts.windowS ?? DEFAULT_WINDOW_S;
    const measureS = info.measureS;
    const length = measureS !== undefined ? Math.min(requested, measureS) : requested;
    const startS = measureS !== undefined ? (measureS - length) / 2 : 0;
    if (measureS !== undefined && this.opts.windowS !== undefined && requested > measureS)
      this.note(
        this.what,
        `--stacks-window ${requested} s is longer than the measured ${measureS} s: the window is the whole measured part`,
      );
    if (measureS === undefined)
      this.note(
        this.what,
        'the run is limited by events or rounds, not time: the window starts with the measured part',
        'give --time to centre the window',
      );
    // The engine starts right after the last probe: the measured part begins as far from now as it was
    // from the start of this probe's start().
    this.measureNs = nowNs() + BigInt(Math.round((info.measureAtMs - t0) * 1e6));
    this.window = {
      requested_s: requested,
      start_s: round3(startS),
      length_s: 0,
      placement: measureS !== undefined ? 'centred' : 'start',
    };
    this.state = 'waiting';
    const delayMs = Math.max(0, Number(this.measureNs - nowNs()) / 1e6 + startS * 1000);
    this.timer = setTimeout(() => {
      this.opening = this.openWindow(length);
    }, delayMs);
  }

  private async openWindow(lengthS: number): Promise<void> {
    if (this.state !== 'waiting') return;
    this.state = 'open';
    this.openNs = nowNs();
    const jobs: Array<Promise<unknown>> = [];
    if (this.record) jobs.push(this.record.session.enable());
    if (this.counter) jobs.push(this.counter.enable());
    if (this.locks) {
      jobs.push(
        this.locks
          .begin()
          .then((n) => {
            if (n) {
              this.notes.push(n);
              this.locks = undefined;
            } else this.lockPoll = setInterval(() => void this.pollLocks(), LOCK_POLL_MS);
          })
          .catch((e: unknown) => {
            this.note('lock callers', `failed: ${(e as Error).message}`);
            this.locks = undefined;
          }),
      );
    }
    await Promise.all(jobs);
    if (this.state !== 'open') return;
    const left = lengthS * 1000 - Number(nowNs() - this.openNs) / 1e6;
    this.timer = setTimeout(
      () => {
        this.closing = this.closeWindow();
      },
      Math.max(0, left),
    );
  }

  /**
   * Read the wait history; a server that records no SOURCE (MariaDB 10.11) gets its instruments back at once,
   * since the history then costs it throughput for nothing the stacks do not show.
   */
  private async pollLocks(): Promise<void> {
    const locks = this.locks;
    if (locks === undefined) return;
    await locks.poll().catch(() => {});
    const r = locks.result();
    if (r.sourceless && r.seen >= SOURCELESS_AFTER && this.locks === locks) {
      this.locks = undefined;
      if (this.lockPoll) clearInterval(this.lockPoll);
      this.lockPoll = undefined;
      this.lockResult = await locks.end().catch(() => r);
    }
  }

  private async closeWindow(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closed';
    this.closeNs = nowNs();
    if (this.lockPoll) clearInterval(this.lockPoll);
    this.lockPoll = undefined;
    await Promise.all([
      this.record?.session.disable(),
      this.counter?.disable(),
      this.locks
        ?.end()
        .then((r) => {
          this.lockResult = r;
        })
        .catch((e: unknown) => this.note('lock callers', `failed: ${(e as Error).message}`)),
    ]);
    if (this.window) {
      this.window.start_s = round3(Number(this.openNs - this.measureNs) / 1e9);
      this.window.length_s = round3(Number(this.closeNs - this.openNs) / 1e9);
    }
  }

  /** The measured part is over: a window not yet open never opens, an open one closes now. */
  async measured(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state === 'waiting') {
      this.state = 'none';
      this.note(this.what, 'the measured part ended before the window began: nothing was recorded');
    }
    await this.opening;
    if (this.state === 'open') {
      this.note(
        this.what,
        'the measured part ended before the window did: the window is shorter than planned',
      );
      this.closing = this.closeWindow();
    }
    await this.closing;
  }

  async stop(result: RunResult | undefined): Promise<unknown> {
    const fields: CodeProfileFields = {};
    try {
      await this.measured();
      const ran = this.window !== undefined && this.window.length_s > 0;
      if (this.record) await this.finishStacks(fields, ran);
      if (this.counter) {
        const calls = await this.counter.stop();
        if (calls && ran) fields.calls = calls;
        if (this.window) this.window.calls_probes = this.counter.probes;
        if (this.window) this.window.calls_binary = this.counter.binary;
      }
      this.lockCallers(fields);
    } catch (e) {
      this.note(this.what, `failed: ${(e as Error).message}`);
    } finally {
      await this.cleanup();
    }
    if (this.window && this.window.length_s > 0) {
      const what = [
        ...(fields.stacks ? ['stack recording'] : []),
        ...(fields.calls
          ? [
              `uprobes on ${Object.keys(fields.calls).length} function${Object.keys(fields.calls).length === 1 ? '' : 's'}`,
            ]
          : []),
        ...(this.window.lock_callers_from === 'performance_schema' ? ['wait history'] : []),
      ];
      const cost = result ? windowCost(result, this.window.start_s, this.window.length_s, what) : undefined;
      if (cost) this.window.cost = cost;
      fields.code_window = this.window;
    }
    const base = (result as { profile?: ProfileData } | undefined)?.profile;
    const profile: ProfileData & CodeProfileFields = base
      ? { ...base, ...fields, notes: [...base.notes, ...this.notes] }
      : { elapsed_s: this.window?.length_s ?? 0, ...fields, notes: this.notes };
    return profile;
  }

  private async finishStacks(fields: CodeProfileFields, ran: boolean): Promise<void> {
    const rec = this.record;
    if (rec === undefined) return;
    await rec.session.stop();
    if (!ran) return;
    const stacks = new SwitchStacks(this.dataSymbol ? { dataSymbol: this.dataSymbol } : {});
    const d = await decodeRecording(rec.file, stacks);
    if (d.error) this.note('stacks', d.error);
    const r = stacks.result();
    const profile: StacksProfile = {
      tool: (await perfVersion()) ?? 'perf',
      recorded: this.recorded,
      ...r,
      stack_bytes: STACK_BYTES,
      data_bytes: d.bytes,
      lost: d.lost,
      decode_cpu_s: d.cpuS,
    };
    if (r.involuntary + r.voluntary === 0) {
      this.note(
        'stacks',
        'no context switch was recorded in the window',
        'is the server busy? lengthen --stacks-window',
      );
    } else {
      for (const [kind, n, ok] of [
        ['involuntary', r.involuntary, r.ranked.preempted],
        ['voluntary', r.voluntary, r.ranked.blocked],
      ] as const) {
        if (!ok)
          this.note(
            'stacks',
            `only ${n} ${kind} switches in the ${r.window_s} s window: too few to rank functions (${r.min_switches} or more are needed)`,
            'lengthen --stacks-window or raise the load',
          );
      }
      const cut = r.truncated / (r.involuntary + r.voluntary);
      if (cut > 0.05)
        this.note(
          'stacks',
          `${(cut * 100).toFixed(1)}% of the stacks are deeper than the ${STACK_BYTES / 1024} KiB perf copied: functions near the threads' start are undercounted in them`,
        );
    }
    if (d.lost > 0)
      this.note(
        'stacks',
        `perf lost ${d.lost} chunks of records (the kernel buffer was full): the counts are low by that much`,
      );
    if (/max.size|reached/i.test(rec.session.messages))
      this.note('stacks', 'the recording reached its size limit: the window covers less than asked');
    if (this.opts.outFile) {
      const n = (this.runsAt.get(this.clients) ?? 0) + 1;
      this.runsAt.set(this.clients, n);
      const files = stacksFiles(
        this.opts.outFile,
        this.opts.perRunFiles ? { clients: this.clients, n } : undefined,
      );
      try {
        writeFileSync(files.counts, stacks.foldedCounts(), { mode: 0o644 });
        profile.folded_file = files.counts;
        const off = stacks.foldedOffCpu();
        if (off !== '') {
          writeFileSync(files.offCpu, off, { mode: 0o644 });
          profile.off_cpu_file = files.offCpu;
        }
      } catch (e) {
        this.note('stacks', `cannot write --stacks-out ${files.counts}: ${(e as Error).message}`);
      }
    }
    fields.stacks = profile;
    this.stackLocks = stacks;
  }

  private stackLocks: SwitchStacks | undefined;

  /** The performance schema's callers when it records them, else the stacks'. */
  private lockCallers(fields: CodeProfileFields): void {
    const ps = this.lockResult;
    const fromStacks = this.stackLocks?.lockCallers();
    this.stackLocks = undefined;
    if (ps && ps.rows.length > 0 && !ps.sourceless) {
      fields.lock_callers = ps.rows.slice(0, TOP_LOCK_CALLERS);
      if (this.window) {
        this.window.lock_callers_from = 'performance_schema';
        this.window.lock_waits_seen = ps.seen;
        this.window.lock_waits_total = ps.total;
      }
      return;
    }
    if (ps?.sourceless)
      this.note(
        'lock callers',
        `the performance schema left SOURCE empty for all ${ps.seen} lock waits it showed (this server build records no file:line for waits), so its wait history was turned off again${fromStacks ? '; the callers come from the recorded stacks' : ''}`,
      );
    else if (ps && ps.seen === 0 && fromStacks && fromStacks.length > 0)
      this.note(
        'lock callers',
        "the performance schema's wait history showed no lock waits in the window (it keeps the last few waits of each thread, read every poll), so the callers come from the recorded stacks",
      );
    if (fromStacks && fields.stacks) {
      fields.lock_callers = fromStacks.slice(0, TOP_LOCK_CALLERS);
      if (this.window) this.window.lock_callers_from = 'stacks';
      if (fromStacks.length === 0)
        this.note('lock callers', 'no thread slept waiting for a lock in the window (from the stacks)');
    }
  }

  private async cleanup(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (this.lockPoll) clearInterval(this.lockPoll);
    this.timer = undefined;
    this.lockPoll = undefined;
    await this.record?.session.stop().catch(() => {});
    this.record = undefined;
    if (this.counter) {
      await this.counter.stop().catch(() => undefined);
      await this.counter.remove();
      this.notes.push(...this.counter.notes);
      this.counter = undefined;
    }
    if (this.locks && this.lockResult === undefined) await this.locks.restore().catch(() => {});
    this.locks = undefined;
    if (this.dir) {
      // a marker of settings not put back stays for the next run
      removeRunDir(this.dir);
      onExitCleanup.releaseDir(this.dir);
      this.dir = undefined;
    }
    await this.conn?.close().catch(() => {});
    this.conn = undefined;
  }
}

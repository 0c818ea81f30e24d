/**
 * Live progress of long work (a run, a sweep) on stderr, never stdout. On a terminal a small status block
 * is redrawn in place (log-update): which client count and repeat, elapsed and remaining time, the last
 * interval's throughput and p95, errors. Elsewhere (a log file, CI) it is one plain line per interval,
 * which greps and tails well.
 *
 * On a terminal every line stays within its width (`columns`): the terminal would otherwise wrap it in the
 * middle of a word, and the redrawn block would no longer erase what it drew. Interval and status lines
 * lose whole fields, the least telling first (`fitFields`); messages wrap between words.
 */

import { loadModule } from '../load-module.ts';
import type { IntervalPoint } from '../metrics/run-result.ts';
import { fmtMs, fmtRate } from './format.ts';
import { renderIntervalLine } from './text.ts';

export type ProgressMode = 'auto' | 'status' | 'lines' | 'off';

/** The stream progress goes to: process.stderr, or a test's stand-in. */
export interface ProgressStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

export interface ProgressOptions {
  /** Runs in the whole job: 1 for `run`, client counts × repeats for a sweep. */
  totalRuns: number;
  /** Repeats per client count, shown as "repeat 2/3". */
  repeats?: number;
  /** Expected seconds of one run (time limit plus warm-up), for the remaining-time estimate. */
  runSeconds?: number;
  /** `auto`: a redrawn status on a terminal, plain lines elsewhere. */
  mode?: ProgressMode;
  stream?: ProgressStream;
  /**
   * With the status block, also keep one sysbench-like line per interval scrolling above it (`run`
   * does; a sweep's many runs would flood the screen).
   */
  keepLines?: boolean;
  /** First line of the status block, e.g. "select1 on mysql://root@host/db". */
  title?: string;
  /** Clock in ms, for tests. */
  now?: () => number;
}

export interface RunSummary {
  qps: number;
  p95_ms: number;
  errors: number;
}

export interface Progress {
  /** A run begins (repeat counts from 1; 0 or absent for a single run). */
  runStarted(clients: number, repeat?: number): void;
  /**
   * One timeline interval of the current run. `line` replaces the interval line that is printed (or kept
   * above the status): `--format sysbench` has its own layout, and `null` prints none (its partial
   * intervals); without it the dbsmack interval line is printed.
   */
  interval(p: IntervalPoint, line?: string | null): void;
  /** The current run is over; a sweep's status lists it above the block. */
  runFinished(summary?: RunSummary): void;
  /** A message that must stay on screen (a warning) without breaking the status block; shown in every mode. */
  log(line: string): void;
  /** Stop redrawing; leave the last status on screen. */
  done(): void;
}

/** `m:ss` (or `h:mm:ss`) for elapsed and remaining times. */
export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

interface State {
  runIndex: number;
  clients: number;
  repeat: number;
  jobStart: number;
  runStart: number;
  finishedRunsMs: number[];
  last: IntervalPoint | undefined;
  runErrors: number;
  totalErrors: number;
  /** Set when the last run is over: its overall figures replace the last interval's. */
  summary: RunSummary | undefined;
}

function remainingSeconds(o: ProgressOptions, st: State, now: number): number | undefined {
  const runElapsed = (now - st.runStart) / 1000;
  const done = st.finishedRunsMs;
  // Past runs are the best guess for the next ones (they include connecting and preparing).
  const perRun =
    done.length > 0
      ? done.reduce((a, b) => a + b, 0) / done.length / 1000
      : o.runSeconds !== undefined
        ? o.runSeconds
        : undefined;
  if (perRun === undefined) return undefined;
  const left = Math.max(0, o.totalRuns - st.runIndex);
  return left * perRun + Math.max(0, perRun - runElapsed);
}

/** A field of a line and how readily it goes when the line is too wide: higher goes first, 0 never. */
export type Field = [text: string, drop: number];

/**
 * Join FIELDS with SEP, leaving out whole fields, those with the highest `drop` first (the later one of
 * equals), until the line fits WIDTH; a line whose kept fields still do not fit is cut with '…'.
 */
export function fitFields(fields: readonly Field[], width: number, sep = ' '): string {
  const kept = fields.map((f) => f);
  const join = (): string => kept.map((f) => f[0]).join(sep);
  let line = join();
  while ([...line].length > width) {
    let worst = -1;
    for (let i = 0; i < kept.length; i++) {
      const d = (kept[i] as Field)[1];
      if (d > 0 && (worst < 0 || d >= (kept[worst] as Field)[1])) worst = i;
    }
    if (worst < 0) return cut(line, width);
    kept.splice(worst, 1);
    line = join();
  }
  return line;
}

function cut(line: string, width: number): string {
  const chars = [...line];
  return chars.length <= width ? line : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** How readily each field of an interval line goes: r/w/o first, errors last, time and q/s never. */
const INTERVAL_DROP: [RegExp, number][] = [
  [/^\(r\/w\/o:/, 6],
  [/^reconn\/s:/, 5],
  [/^(eps|tps):/, 4],
  [/^(clients|thds):/, 3],
  [/^lat /, 2],
  [/^err\/s:/, 1],
];

/**
 * An interval line (dbsmack's or sysbench's layout) cut to WIDTH by whole fields. A line of another shape
 * (sysbench's queue line) is cut between words.
 */
export function fitIntervalLine(line: string, width: number): string {
  if ([...line].length <= width) return line;
  const fields = line.match(/\[[^\]]*\]|\([^)]*\)|lat \([^)]*\): \S+|[^\s:]+: \S+/g) ?? [];
  if (fields.join(' ') !== line) return wrapWords(line, width).split('\n')[0] ?? '';
  return fitFields(
    fields.map((f): Field => [f, INTERVAL_DROP.find(([re]) => re.test(f))?.[1] ?? 0]),
    width,
  );
}

/** Wrap TEXT between words so that no line is wider than WIDTH (a longer word is cut). */
export function wrapWords(text: string, width: number): string {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(' ')) {
      const next = line === '' ? word : `${line} ${word}`;
      if ([...next].length <= width) line = next;
      else {
        if (line !== '') out.push(line);
        line = [...word].length <= width ? word : cut(word, width);
      }
    }
    out.push(line);
  }
  return out.join('\n');
}

/** The status block shown on a terminal, each line within WIDTH. Exported for tests. */
export function renderStatus(o: ProgressOptions, st: State, now: number, width = 80): string {
  const lines: string[] = [];
  if (o.title) lines.push(cut(o.title, width));
  const parts: Field[] = [];
  if (o.totalRuns > 1) parts.push([`run ${st.runIndex}/${o.totalRuns}`, 2]);
  parts.push([`clients ${st.clients}`, 0]);
  if (st.repeat > 0) parts.push([`repeat ${st.repeat}${o.repeats ? `/${o.repeats}` : ''}`, 3]);
  parts.push([`elapsed ${fmtDuration((now - st.jobStart) / 1000)}`, 1]);
  const rem = remainingSeconds(o, st, now);
  parts.push([`remaining ${rem === undefined ? '?' : `~${fmtDuration(rem)}`}`, 0]);
  lines.push(fitFields(parts, width, '  '));
  const p = st.last;
  const f = st.summary;
  const figures: Field[] = f
    ? [
        [`finished: ${fmtRate(f.qps)} q/s`, 0],
        [`p95 ${fmtMs(f.p95_ms)} ms`, 1],
        [`errors ${f.errors}`, 0],
      ]
    : p
      ? [
          [`now ${fmtRate(p.qps)} q/s`, 0],
          [`${fmtRate(p.eps)} events/s`, 3],
          [`p95 ${fmtMs(p.p95_ms)} ms`, 1],
          [`errors ${st.runErrors}${o.totalRuns > 1 ? ` (all runs ${st.totalErrors})` : ''}`, 0],
        ]
      : [
          ['connecting…', 0],
          [`errors ${st.totalErrors}`, 0],
        ];
  lines.push(fitFields(figures, width, '  '));
  return lines.join('\n');
}

/** Start showing progress. With `mode: 'off'`, only `log` writes anything. */
export async function createProgress(o: ProgressOptions): Promise<Progress> {
  const stream = o.stream ?? process.stderr;
  const now = o.now ?? Date.now;
  const mode = o.mode === undefined || o.mode === 'auto' ? (stream.isTTY ? 'status' : 'lines') : o.mode;
  const st: State = {
    runIndex: 0,
    clients: 0,
    repeat: 0,
    jobStart: now(),
    runStart: now(),
    finishedRunsMs: [],
    last: undefined,
    runErrors: 0,
    totalErrors: 0,
    summary: undefined,
  };
  const prefix = (): string =>
    o.totalRuns > 1
      ? `[run ${st.runIndex}/${o.totalRuns}${st.repeat > 0 ? ` repeat ${st.repeat}` : ''}] `
      : '';

  if (mode === 'off') {
    return {
      runStarted() {},
      interval() {},
      runFinished() {},
      log(line) {
        stream.write(`${line}\n`);
      },
      done() {},
    };
  }
  if (mode === 'lines') {
    return {
      runStarted(clients, repeat) {
        st.runIndex++;
        st.clients = clients;
        st.repeat = repeat ?? 0;
      },
      interval(p, line) {
        if (line === null) return;
        stream.write(`${line ?? `${prefix()}${renderIntervalLine(p, st.clients)}`}\n`);
      },
      runFinished() {},
      log(line) {
        stream.write(`${line}\n`);
      },
      done() {},
    };
  }

  // log-update is only loaded when a terminal shows the status.
  const { createLogUpdate } = await loadModule<typeof import('log-update')>('log-update');
  // A pseudo-terminal that reports no size (script(1), `docker run -t`) says 0 rows, and log-update then
  // draws nothing at all: fall back to the classic 80×24 there.
  const sized = {
    isTTY: true,
    write: (chunk: string) => stream.write(chunk),
    get columns() {
      return stream.columns || 80;
    },
    get rows() {
      return stream.rows || 24;
    },
  };
  const draw = createLogUpdate(sized as unknown as NodeJS.WritableStream, { showCursor: true });
  const redraw = (): void => draw(renderStatus(o, st, now(), sized.columns));
  const persist = (text: string): void => draw.persist(text);
  // Keep the elapsed and remaining times moving between intervals (and while connecting).
  const timer = setInterval(redraw, 1000);
  timer.unref();
  let finished = false;
  return {
    runStarted(clients, repeat) {
      st.runIndex++;
      st.clients = clients;
      st.repeat = repeat ?? 0;
      st.runStart = now();
      st.last = undefined;
      st.summary = undefined;
      st.runErrors = 0;
      redraw();
    },
    interval(p, line) {
      // The engine's closing interval can be empty (zero length): its rates say nothing.
      if (p.dur > 0) st.last = p;
      st.runErrors += p.errors;
      st.totalErrors += p.errors;
      const kept = line === undefined ? (o.keepLines ? renderIntervalLine(p, st.clients) : null) : line;
      if (kept !== null) {
        persist(
          kept
            .split('\n')
            .map((l) => fitIntervalLine(l, sized.columns))
            .join('\n'),
        );
      }
      redraw();
    },
    runFinished(summary) {
      st.finishedRunsMs.push(now() - st.runStart);
      if (summary && st.runIndex >= o.totalRuns) st.summary = summary;
      if (summary && o.totalRuns > 1) {
        persist(
          wrapWords(
            `${prefix()}clients ${st.clients}: ${fmtRate(summary.qps)} q/s, p95 ${fmtMs(summary.p95_ms)} ms, ${summary.errors} errors`,
            sized.columns,
          ),
        );
      }
      redraw();
    },
    log(line) {
      persist(wrapWords(line, sized.columns));
      redraw();
    },
    done() {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      redraw();
      draw.done();
    },
  };
}

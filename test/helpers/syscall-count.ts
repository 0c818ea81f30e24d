/**
 * A system call counted by the kernel over a whole one-second `dbsmack run` on the native core (`perf stat`
 * of a syscalls tracepoint): how the native core's tests see what its threads do without a build of their
 * own. The environment's knob is set as asked, or removed, with DBSMACK_NATIVE_DESIGN, so that the run is
 * the default's.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { RunResult } from '../../src/metrics/run-result.ts';
import { BIN } from './cli.ts';

/** What `needCommand` says perf stat of a tracepoint needs. */
export const PERF_TRACEPOINTS = 'Debian linux-perf, and tracefs mounted on /sys/kernel/tracing';

/**
 * Calls of `event` (`syscalls:sys_enter_…`) during a one-second `run WORKLOAD` with 8 clients on `workers`
 * load threads, with `knob` set to `asked` (undefined: unset), and the queries the run made.
 */
export function syscallsOfRun(opts: {
  event: string;
  url: string;
  workload: string;
  workers: number;
  knob: string;
  asked: string | undefined;
}): { calls: number; queries: number } {
  const env = { ...process.env };
  delete env[opts.knob];
  delete env.DBSMACK_NATIVE_DESIGN;
  if (opts.asked !== undefined) env[opts.knob] = opts.asked;
  const url = `${opts.url}${opts.url.includes('?') ? '&' : '?'}io=native`;
  const r = spawnSync(
    'perf',
    [
      'stat',
      '-x,',
      '-e',
      opts.event,
      '--',
      process.execPath,
      BIN,
      'run',
      opts.workload,
      '--db',
      url,
      '--clients',
      '8',
      '--workers',
      String(opts.workers),
      '--time',
      '1',
      '--format',
      'json',
      '--no-history',
    ],
    { encoding: 'utf8', env, timeout: 60_000 },
  );
  assert.equal(r.status, 0, `perf stat … dbsmack run: ${r.stderr}`);
  const line = r.stderr.split('\n').find((l) => l.includes(opts.event));
  const calls = Number(line?.split(',')[0]);
  assert.ok(Number.isFinite(calls), `a count of ${opts.event} in: ${r.stderr}`);
  return { calls, queries: (JSON.parse(r.stdout) as RunResult).totals.queries };
}

/**
 * Scheduling experiments through the CLI, on a process of the test's own (`--server-pid`), so that the
 * shared database servers are not disturbed: what was applied is recorded and /proc shows it put back.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli, tmpDir } from './helpers/cli.ts';
import { commandWorks, need, needRoot } from './helpers/preconditions.ts';
import { waitAsleep } from './helpers/wait.ts';

function schedOf(pid: number): { nice: number; policy: number; cpus: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpus = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
  return { nice: Number(f[16]), policy: Number(f[38]), cpus };
}

/** A process of the test's own to change the scheduling of, asleep (`as` runs it as another user). */
async function withSleeper<T>(fn: (pid: number) => Promise<T>, as: string[] = []): Promise<T> {
  const child = spawn(as.length ? 'setpriv' : 'sleep', [...as, ...(as.length ? ['sleep'] : []), '60'], {
    stdio: 'ignore',
    cwd: '/',
  });
  try {
    await waitAsleep(child.pid as number, 'sleep');
    return await fn(child.pid as number);
  } finally {
    child.kill();
  }
}

const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];
/** Runs the CLI as root without CAP_SYS_NICE, so that another user's process is out of its reach. */
const NO_SYS_NICE = ['setpriv', '--bounding-set', '-sys_nice', '--inh-caps', '-sys_nice'];

/** Why the no-CAP_SYS_NICE case cannot run here, or undefined. */
function noSysNiceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0)
    return 'needs root: runs a process as nobody and drops CAP_SYS_NICE with setpriv';
  if (commandWorks(NO_SYS_NICE[0] as string, [...NO_SYS_NICE.slice(1), ...NOBODY, 'true']) === undefined)
    return 'setpriv (util-linux) cannot drop CAP_SYS_NICE or switch to nobody here';
  return undefined;
}

test('--server-nice/--server-policy/--server-cpus are applied for the run, recorded, and restored', async (t) => {
  if (!needRoot(t, 'changing the scheduling policy of a process needs CAP_SYS_NICE in containers')) return;
  await withSleeper(async (pid) => {
    const before = schedOf(pid);
    const dir = tmpDir();
    const r = await runCli([
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 's.sqlite')}`,
      '--time',
      '0.5',
      '--profile',
      '--server-pid',
      String(pid),
      '--server-nice',
      '5',
      '--server-policy',
      'batch',
      '--server-cpus',
      '0',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.deepEqual(res.server_sched.requested, { nice: 5, policy: 'batch', cpus: '0' });
    assert.equal(res.server_sched.applied, true, JSON.stringify(res.server_sched.notes));
    assert.equal(res.server_sched.restored, true);
    assert.equal(res.server_sched.pid, pid);
    assert.match(res.server_sched.before, /^nice 0, other 0, cpus /);
    // The profile read the thread while the setting was in force.
    const row = res.profile.threads.threads.find((x: { tid: number }) => x.tid === pid);
    assert.equal(row.nice, 5);
    assert.equal(row.policy, 'batch');
    // And /proc shows it put back.
    assert.deepEqual(schedOf(pid), before);
  });
});

test('the text report shows what was applied', async (t) => {
  if (!needRoot(t, 'changing the scheduling of a process needs CAP_SYS_NICE in containers')) return;
  await withSleeper(async (pid) => {
    const dir = tmpDir();
    const r = await runCli([
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 's.sqlite')}`,
      '--time',
      '0.3',
      '--server-pid',
      String(pid),
      '--server-nice',
      '7',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /scheduling: nice 7 applied to 1 threads of pid \d+ .*restored after the run/);
    assert.equal(schedOf(pid).nice, 0);
  });
});

test('a scheduling change without the rights is a note, and the run still runs', async (t) => {
  // Another user's process and no CAP_SYS_NICE: dbsmack runs as root (it reads the checkout wherever that
  // is), with the capability dropped, against a sleeper that belongs to nobody.
  if (!need(t, noSysNiceUnavailable())) return;
  await withSleeper(async (pid) => {
    const dir = tmpDir();
    const r = await runCli(
      [
        'run',
        'select1',
        '--db',
        `sqlite:${path.join(dir, 's.sqlite')}`,
        '--time',
        '0.3',
        '--server-pid',
        String(pid),
        '--server-nice',
        '3',
        '--format',
        'json',
      ],
      { cwd: dir, prefix: NO_SYS_NICE },
    );
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.status, 'complete');
    assert.equal(res.server_sched.applied, false);
    assert.match(res.server_sched.notes[0].why, /EPERM|not permitted/);
    assert.match(res.server_sched.notes[0].hint, /CAP_SYS_NICE/);
    assert.equal(schedOf(pid).nice, 0);
  }, NOBODY);
});

test('a --server-pid that does not exist is a note, not a failure', async () => {
  const dir = tmpDir();
  const r = await runCli([
    'run',
    'select1',
    '--db',
    `sqlite:${path.join(dir, 's.sqlite')}`,
    '--time',
    '0.2',
    '--profile',
    '--server-pid',
    '2147483000',
    '--server-nice',
    '1',
    '--format',
    'json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout);
  assert.equal(res.server_sched.applied, false);
  assert.match(res.server_sched.notes[0].why, /no such process/);
  assert.equal(res.profile.threads, undefined);
  assert.match(res.profile.notes[0].why, /no such process/);
  assert.equal(res.profile.waits.kind, 'sqlite');
});

test('bad scheduling options are usage errors', async () => {
  for (const [args, msg] of [
    [['--server-nice', '40'], /--server-nice expects a nice value from -20 to 19/],
    [['--server-policy', 'fast'], /Allowed choices are fifo, rr, other, batch, idle/],
    [
      ['--server-policy', 'batch', '--server-priority', '5'],
      /--server-priority goes with --server-policy fifo or rr/,
    ],
    [['--server-cpus', '3-1'], /--server-cpus: bad CPU range/],
    [['--profile-rate', '0'], /--profile-rate expects samples per second/],
  ] as const) {
    const r = await runCli(['run', 'select1', '--time', '0.1', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
  }
});

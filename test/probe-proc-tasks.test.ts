import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  listTasks,
  parseSchedstat,
  parseStat,
  parseStatus,
  readTask,
  readTasks,
} from '../src/probe/proc-tasks.ts';
import { waitAsleep } from './helpers/wait.ts';

test('parseStat copes with spaces and parentheses in the command name', () => {
  const line =
    '4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 120 0 0 0 37 12 0 0 20 5 3 0 9999 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 3 0 0 0';
  const { comm, fields } = parseStat(line);
  assert.equal(comm, 'my (odd) name');
  assert.equal(fields[0], 'S');
  // proc(5): utime is field 14, stime 15, nice 19, rt_priority 40, policy 41 (fields[0] is field 3).
  assert.equal(fields[14 - 3], '37');
  assert.equal(fields[15 - 3], '12');
  assert.equal(fields[19 - 3], '5');
  assert.equal(fields[41 - 3], '3');
});

test('parseStatus and parseSchedstat read the counters', () => {
  const status =
    'Name:\tx\nCpus_allowed_list:\t0-3\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n';
  assert.deepEqual(parseStatus(status), { voluntary: 1234, involuntary: 56, cpusAllowed: '0-3' });
  assert.deepEqual(parseSchedstat('987654321 12345 77\n'), {
    runNs: 987654321,
    waitNs: 12345,
    timeslices: 77,
  });
});

test('readTask matches an independent reading of /proc for a sleeping process', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const pid = child.pid as number;
    // Once it has exec'd sleep and sleeps, its counters stay put while we read them twice.
    await waitAsleep(pid, 'sleep');
    assert.deepEqual(await listTasks(pid), [pid]);
    const mine = await readTask(pid, pid);
    assert.ok(mine);
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const vol = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1]);
    const invol = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1]);
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    assert.equal(mine.voluntary, vol);
    assert.equal(mine.involuntary, invol);
    assert.equal(mine.utimeTicks, Number(after[11]));
    assert.equal(mine.stimeTicks, Number(after[12]));
    assert.equal(mine.nice, Number(after[16]));
    assert.equal(mine.comm, 'sleep');
    assert.equal(mine.state, 'S');
    const [run] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
    assert.equal(mine.runNs, Number(run));
  } finally {
    child.kill();
  }
});

test('readTasks returns nothing for a process that is gone', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  const pid = child.pid as number;
  // 'exit' comes after the child was reaped: its /proc entry is gone.
  await new Promise((r) => child.on('exit', r));
  assert.deepEqual(await readTasks([pid]), []);
  assert.equal(await readTask(pid, pid), undefined);
});

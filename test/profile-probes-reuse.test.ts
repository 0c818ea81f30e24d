/**
 * A sweep runs many times with the same probes (`profileProbesFrom` once, `runOnce` per step): each run
 * must get its own, complete profile and scheduling record.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { resolveWorkload } from '../src/cli/run.ts';
import { parseTarget } from '../src/driver/url.ts';
import { RunController, runOnce } from '../src/engine/run-once.ts';
import { planFrom } from '../src/run/plan.ts';
import { profileProbesFrom } from '../src/run/probes.ts';
import { tmpDir } from './helpers/cli.ts';
import { needRoot } from './helpers/preconditions.ts';
import { waitAsleep } from './helpers/wait.ts';

test('the same profile probes serve several runs in a row', async (t) => {
  if (!needRoot(t, 'changing a scheduling policy needs CAP_SYS_NICE in containers')) return;
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const pid = child.pid as number;
    await waitAsleep(pid, 'sleep');
    const probes = profileProbesFrom({ profile: true, serverPid: pid, serverPolicy: 'batch' });
    assert.deepEqual(
      probes.map((p) => p.key),
      ['server_sched', 'profile'],
    );
    const target = parseTarget(`sqlite:${path.join(tmpDir(), 'reuse.sqlite')}`);
    const resolved = await resolveWorkload('select1', []);
    const opts = {
      db: '',
      connectTimeout: 5,
      warmup: 0,
      reportInterval: 1,
      maxTries: 1,
      reconnectTimeout: 1,
    };
    for (const clients of [1, 2]) {
      const plan = planFrom({ ...opts, clients, events: 200 }, target, resolved);
      const r = await runOnce({
        plan,
        workload: resolved.workload,
        options: resolved.options,
        workers: clients,
        probes,
        log: () => {},
        controller: new RunController(),
      });
      assert.equal(r.clients, clients);
      assert.equal(r.server_sched?.applied, true);
      assert.equal(r.server_sched?.restored, true);
      assert.deepEqual(r.server_sched?.notes, []);
      assert.equal(r.profile?.threads?.pid, pid);
      assert.equal(r.profile?.threads?.threads[0]?.policy, 'batch');
      assert.equal(r.profile?.waits?.kind, 'sqlite');
      // Notes do not pile up from one run to the next.
      assert.deepEqual(r.profile?.notes, []);
    }
  } finally {
    child.kill();
  }
});

/**
 * bench/tools.ts, the machine's CPU from /proc/stat and bench/peers' wait for a quiet machine: the line's
 * fields as the kernel prints them, and the busy share of a real window while one CPU spins.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { test } from 'node:test';
import { machineTicksFrom, quiet } from '../bench/tools.ts';
import { need } from './helpers/preconditions.ts';

test("/proc/stat's cpu line: busy is user, nice, system, irq and softirq; steal apart; total all", () => {
  const stat = 'cpu  100 5 40 900 7 2 30 11 0 0\ncpu0 50 2 20 450 3 1 15 5 0 0\nintr 123\nctxt 456\n';
  assert.deepEqual(machineTicksFrom(stat), { busy: 100 + 5 + 40 + 2 + 30, steal: 11, total: 1095 });
  // an older kernel's shorter line: the missing fields count as none
  assert.deepEqual(machineTicksFrom('cpu  1 2 3 4\n'), { busy: 6, steal: 0, total: 10 });
  assert.equal(machineTicksFrom('cpu0 1 2 3 4\n'), undefined);
});

test('quiet: a window with one CPU spinning is busy, and maxS bounds the wait', (t) => {
  if (!need(t, existsSync('/proc/stat') ? undefined : '/proc/stat (Linux) is not readable here')) return;
  const spin = spawn(process.execPath, ['-e', 'const end = Date.now() + 3000; while (Date.now() < end);']);
  try {
    // let the child start spinning
    const until = Date.now() + 300;
    while (Date.now() < until);
    const q = quiet(0);
    assert.ok(q.waitedS >= 0.4 && q.waitedS < 2, `one window of 0.5 s, waited ${q.waitedS} s`);
    assert.ok(q.share >= 0.5 / os.cpus().length, `one CPU of ${os.cpus().length} busy: share ${q.share}`);
  } finally {
    spin.kill();
  }
});

/**
 * bench/machine.ts, the machine line at the top of bench/peers: the hypervisor read from what the system
 * says of it, and the line's wording; the measured traits themselves are times (not asserted: they only
 * have to come out as numbers, which the line's formatting would show as NaN otherwise).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apartShare, coresFrom, hypervisorFrom, machineLine } from '../bench/machine.ts';

test('the hypervisor: /sys/hypervisor/type first, then the kernel log, else unknown', () => {
  assert.equal(hypervisorFrom('xen\n', '[    0.000000] Hypervisor detected: KVM'), 'xen');
  assert.equal(
    hypervisorFrom(undefined, '[    0.000000] Linux version 6.18\n[    0.000000] Hypervisor detected: PVM\n'),
    'PVM',
  );
  assert.equal(hypervisorFrom('', '[    0.000000] Hypervisor detected: KVM'), 'KVM');
  assert.equal(hypervisorFrom(undefined, '[    0.000000] Linux version 6.18'), undefined);
  assert.equal(hypervisorFrom(undefined, undefined), undefined);
});

test('the cores under the CPUs: distinct package and core pairs', () => {
  assert.equal(
    coresFrom([
      { packageId: '0\n', coreId: '0\n' },
      { packageId: '0\n', coreId: '1\n' },
    ]),
    2,
  );
  // SMT siblings share their core
  assert.equal(
    coresFrom([
      { packageId: '0', coreId: '0' },
      { packageId: '0', coreId: '0' },
    ]),
    1,
  );
  assert.equal(
    coresFrom([
      { packageId: '0', coreId: '0' },
      { packageId: '1', coreId: '0' },
    ]),
    2,
  );
  assert.equal(coresFrom([]), undefined);
});

test("the round trip's placement: the share of sampled turns whose stat lines name different CPUs", () => {
  const stat = (name: string, cpu: number): string =>
    `1234 (${name}) S 1 2 3 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 3 0 77 1000 200 18446744073709551615 1 1 0 ` +
    `0 0 0 0 0 0 0 0 0 -1 ${cpu} 0 0 0 0 0`;
  // field 39 is read after the last ')', whatever the thread's name holds
  assert.equal(
    apartShare(
      [stat('node', 0), stat('a (b) c', 1), stat('node', 1), stat('node', 0)],
      [stat('node', 1), stat('x) 7 (y', 1), stat('node', 0), stat('node', 0)],
    ),
    0.5,
  );
  assert.equal(apartShare([], []), 0);
});

const traits = {
  cpus: 2,
  cores: 2,
  model: 'AMD EPYC',
  hypervisor: 'PVM',
  workerStartMs: 62.4,
  pingPongUs: 25.31,
  pingPongApart: 0.874,
  pageFaultUs: 9.951,
};

test('the machine line names each trait with its unit', () => {
  assert.equal(
    machineLine(traits),
    '# machine: 2 CPUs on 2 cores (AMD EPYC), a PVM guest; a bare Node.js worker thread 62 ms of CPU to ' +
      'start; a round trip between two sleeping threads 25.3 µs, on different CPUs at 87% of turns; a fresh ' +
      'page 9.95 µs to touch',
  );
  assert.match(machineLine({ ...traits, cores: 1 }), /2 CPUs on 1 core \(SMT\) \(AMD EPYC\)/);
  assert.match(machineLine({ ...traits, cores: undefined }), /2 CPUs \(AMD EPYC\)/);
  assert.match(machineLine({ ...traits, hypervisor: 'none' }), /no hypervisor/);
  assert.match(machineLine({ ...traits, hypervisor: undefined }), /unnamed hypervisor/);
});

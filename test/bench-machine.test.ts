/**
 * bench/machine.ts, the machine line at the top of bench/peers: the hypervisor read from what the system
 * says of it, and the line's wording; the measured traits themselves are times (not asserted: they only
 * have to come out as numbers, which the line's formatting would show as NaN otherwise).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hypervisorFrom, machineLine } from '../bench/machine.ts';

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

test('the machine line names each trait with its unit', () => {
  const line = machineLine({
    cpus: 2,
    model: 'AMD EPYC',
    hypervisor: 'PVM',
    workerStartMs: 62.4,
    pingPongUs: 25.31,
    pageFaultUs: 9.951,
  });
  assert.equal(
    line,
    '# machine: 2 CPUs (AMD EPYC), a PVM guest; a bare Node.js worker thread 62 ms of CPU to start; a round ' +
      'trip between two sleeping threads 25.3 µs; a fresh page 9.95 µs to touch',
  );
  assert.match(
    machineLine({ cpus: 4, model: 'x', hypervisor: 'none', workerStartMs: 1, pingPongUs: 1, pageFaultUs: 1 }),
    /no hypervisor/,
  );
  assert.match(
    machineLine({
      cpus: 4,
      model: 'x',
      hypervisor: undefined,
      workerStartMs: 1,
      pingPongUs: 1,
      pageFaultUs: 1,
    }),
    /unnamed hypervisor/,
  );
});

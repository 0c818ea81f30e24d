/**
 * The experiment plan's checks: every malformed plan names FILE:LINE:COLUMN of what is wrong; the
 * interleaved order; what a resume refuses.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { ExperimentDocument } from '../src/analysis/experiment.ts';
import { identicalSettingsWarnings, resumeProblem, runOptionSpecs } from '../src/cli/experiment.ts';
import {
  armFingerprint,
  experimentSchedule,
  parsePlanText,
  readPlan,
  settingWords,
} from '../src/cli/experiment-plan.ts';
import { redactCommand } from '../src/cli/experiment-server.ts';
import { buildProgram } from '../src/cli/main.ts';

const SPECS = runOptionSpecs(await buildProgram());
const parse = (text: string) => parsePlanText('plan.yaml', text, SPECS);

const GOOD = `name: t
workload: select1
clients: [1, 4]
repeat: 3
time: 2
profile: true
options: { prepared: off }
arms:
  - label: base
  - label: nice
    options: { server-nice: 5 }
  - label: pool
    baseline: true
    server: { stop: "x stop", start: "x start", wait: 5 }
    check: { thread_handling: pool-of-threads }
`;

test('a good plan: settings of the top and the arm merged, the baseline, server commands, checks', () => {
  const p = parse(GOOD);
  assert.equal(p.name, 't');
  assert.deepEqual(p.clients, [1, 4]);
  assert.equal(p.repeat, 3);
  assert.deepEqual(
    p.arms.map((a) => [a.label, a.baseline]),
    [
      ['base', false],
      ['nice', false],
      ['pool', true],
    ],
  );
  const nice = p.arms[1]!;
  assert.deepEqual(nice.settings.flatMap(settingWords).sort(), [
    '--prepared=off',
    '--profile',
    '--server-nice=5',
    '--time=2',
  ]);
  assert.equal(nice.settings.find((s) => s.key === 'prepared')?.run, false);
  assert.equal(nice.settings.find((s) => s.key === 'server-nice')?.at, 'plan.yaml:11:16');
  assert.deepEqual(p.arms[2]!.server, { at: 'plan.yaml:14:5', stop: 'x stop', start: 'x start', wait: 5 });
  assert.deepEqual(p.arms[2]!.check, { thread_handling: 'pool-of-threads' });
  // without baseline: the first arm
  assert.equal(parse(GOOD.replace('    baseline: true\n', '')).arms[0]!.baseline, true);
});

test('malformed plans name FILE:LINE:COLUMN', () => {
  const cases: [string, RegExp][] = [
    [GOOD.replace('repeat: 3', 'repeat: 3\nrepaet: 4'), /^plan\.yaml:5:1: unknown key 'repaet' in the plan$/],
    [GOOD.replace('  - label: base', '  - lable: base'), /^plan\.yaml:9:5: unknown key 'lable' in an arm$/],
    [GOOD.replace('  - label: base', '  - baseline: false'), /^plan\.yaml:9:5: an arm without a label$/],
    [
      GOOD.replace('repeat: 3', 'repeat: three'),
      /^plan\.yaml:4:9: repeat must be a whole number of at least 1, got string "three"$/,
    ],
    [GOOD.replace('clients: [1, 4]', 'clients: [1, x]'), /^plan\.yaml:3:14: clients must be a list/],
    [GOOD.replace('time: 2', 'time: [2]'), /^plan\.yaml:5:7: time must be a single value/],
    [
      GOOD.replace('profile: true', 'profile: 3'),
      /^plan\.yaml:6:10: profile is a switch: true or false, got number 3$/,
    ],
    [
      GOOD.replace('time: 2', 'time: yes please\ntime: 3'),
      /^plan\.yaml:6:1: not valid YAML: Map keys must be unique/,
    ],
    [GOOD.replace('clients: [1, 4]', 'clients: [1, 4'), /^plan\.yaml:\d+:\d+: not valid YAML/],
    [GOOD.replace('wait: 5', 'wiat: 5'), /^plan\.yaml:14:49: unknown key 'wiat' in server:$/],
    [
      GOOD.replace('  - label: nice', '  - label: base'),
      /^plan\.yaml:10:5: a second arm labelled 'base' \(the first is at plan\.yaml:9:5\)$/,
    ],
    [
      GOOD.replace('  - label: base', '  - label: base\n    baseline: true'),
      /^plan\.yaml:13:5: a second baseline arm/,
    ],
    [GOOD.replace('name: t\n', ''), /^plan\.yaml:1:1: the plan has no 'name'$/],
    [
      GOOD.replace('options: { prepared: off }', 'options: { clients: 3 }'),
      /^plan\.yaml:7:12: clients cannot be set in a plan$/,
    ],
    [
      GOOD.replace('options: { prepared: off }', "options: { threshold: 'p99<5ms' }"),
      /^plan\.yaml:7:12: threshold cannot be set in a plan: thresholds are judged by run/,
    ],
    [GOOD.replace('time: 2\n', 'stages: 1s:2\n'), /^plan\.yaml:5:1: stages cannot be set in a plan: /],
    [
      GOOD.replace('    options: { server-nice: 5 }', "    options: { metrics-listen: ':9400' }"),
      /^plan\.yaml:11:16: metrics-listen cannot be set in a plan: live metrics/,
    ],
    [
      GOOD.replace('    options: { server-nice: 5 }', '    options: 5'),
      /^plan\.yaml:11:14: options of arm 'nice' must be a mapping/,
    ],
    ['- a\n- b\n', /^plan\.yaml:1:1: a plan is a mapping/],
  ];
  for (const [text, re] of cases) {
    assert.throws(
      () => parse(text),
      (e: Error) => {
        assert.match(e.message, re);
        assert.equal((e as { exitCode?: number }).exitCode, 2);
        return true;
      },
      re.source,
    );
  }
});

test('the order: each repeat runs every arm, rotated by one, each arm over all client counts', () => {
  const order = experimentSchedule(3, [1, 8], 2).map((s) => `${s.arm}:${s.clients}:${s.repeat}`);
  assert.deepEqual(order, [
    '0:1:1',
    '0:8:1',
    '1:1:1',
    '1:8:1',
    '2:1:1',
    '2:8:1',
    '1:1:2',
    '1:8:2',
    '2:1:2',
    '2:8:2',
    '0:1:2',
    '0:8:2',
  ]);
});

test('resume refuses a plan changed in what shapes the runs, and allows more repeats', () => {
  const p = parse(GOOD);
  const doc = {
    name: 't',
    plan: { workload: 'select1', baseline: 'pool' },
    arms: p.arms.map((a) => ({
      label: a.label,
      fingerprint: armFingerprint(p, a),
      settings: Object.fromEntries(a.settings.map((s) => [s.key, s.value])),
      ...(a.server ? { server: { stop: a.server.stop, start: a.server.start } } : {}),
      ...(a.check ? { check: a.check } : {}),
      runs: [],
    })),
  } as unknown as ExperimentDocument;
  assert.equal(resumeProblem(doc, p), undefined);
  assert.equal(resumeProblem(doc, parse(GOOD.replace('repeat: 3', 'repeat: 5'))), undefined);
  assert.match(
    resumeProblem(doc, parse(GOOD.replace('server-nice: 5', 'server-nice: 10'))) ?? '',
    /^arm 'nice' changed \(server-nice: 5 → 10\)/,
  );
  assert.match(
    resumeProblem(doc, parse(GOOD.replace('time: 2', 'time: 3'))) ?? '',
    /arm 'base' changed \(time: 2 → 3\)/,
  );
  assert.match(
    resumeProblem(doc, parse(GOOD.replace('"x start"', '"y start"'))) ?? '',
    /arm 'pool' changed \(its server commands\)/,
  );
  assert.match(
    resumeProblem(doc, parse(GOOD.replace('label: nice', 'label: nice2'))) ?? '',
    /the arms changed \(added nice2, removed nice\)/,
  );
  assert.match(
    resumeProblem(doc, parse(GOOD.replace('workload: select1', 'workload: oltp_point_select'))) ?? '',
    /the workload changed/,
  );
});

test('the example plans are valid plans', () => {
  const dir = path.join(import.meta.dirname, '..', 'examples');
  const th = readPlan(path.join(dir, 'thread-handling.yaml'), SPECS);
  assert.deepEqual(
    th.arms.map((a) => [a.label, a.baseline, a.check?.thread_handling, Boolean(a.server?.start)]),
    [
      ['per-connection', true, 'one-thread-per-connection', true],
      ['pool-of-threads', false, 'pool-of-threads', true],
    ],
  );
  const sched = readPlan(path.join(dir, 'scheduling.yaml'), SPECS);
  assert.deepEqual(
    sched.arms.map((a) => [
      a.label,
      a.server,
      a.settings.filter((s) => s.key.startsWith('server-')).flatMap(settingWords),
    ]),
    [
      ['baseline', undefined, []],
      ['nice-minus-5', undefined, ['--server-nice=-5']],
      ['fifo', undefined, ['--server-policy=fifo', '--server-priority=1']],
      ['batch', undefined, ['--server-policy=batch']],
    ],
  );
});

test('server commands are shown and stored with their passwords masked', () => {
  assert.equal(
    redactCommand(
      'mariadb-admin -uroot -pS3cret -h127.0.0.1 shutdown --password=x PGPASSWORD=y pg_ctl -p 5432',
    ),
    'mariadb-admin -uroot -p*** -h127.0.0.1 shutdown --password=*** PGPASSWORD=*** pg_ctl -p 5432',
  );
});

test('arms restarted into identical server variables, without a check, are warned about', () => {
  const arm = (label: string, settings: Record<string, string>, check?: Record<string, string>) => ({
    label,
    server: { start: 'x' },
    server_settings: settings,
    ...(check ? { check } : {}),
  });
  const doc = {
    arms: [
      arm('a', { thread_handling: 'one-thread-per-connection' }),
      arm('b', { thread_handling: 'one-thread-per-connection' }),
      arm('c', { thread_handling: 'pool-of-threads' }),
      arm('d', { thread_handling: 'pool-of-threads' }, { thread_handling: 'pool-of-threads' }),
    ],
  } as unknown as ExperimentDocument;
  assert.deepEqual(identicalSettingsWarnings(doc), [
    'arms a and b ran with identical server variables (1 read): their start commands may not have set what they differ by; give the arms a check: of the variable',
  ]);
});

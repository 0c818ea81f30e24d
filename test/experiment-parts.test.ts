import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  ExperimentRecorder,
  experimentOutFile,
  freshDocument,
  refuseServerCommands,
  runOptionSpecs,
} from '../src/cli/experiment.ts';
import { parsePlanText } from '../src/cli/experiment-plan.ts';
import { buildProgram } from '../src/cli/main.ts';
import { parseTarget } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';

const SPECS = runOptionSpecs(await buildProgram());
const PLAN = `name: parts
workload: select1
clients: [1]
repeat: 1
arms:
  - label: base
  - label: restarted
    baseline: true
    server: { stop: "srv stop", start: "srv start --password=hunter2" }
`;
const dir = mkdtempSync(path.join(tmpdir(), 'dbsmack-experiment-parts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('server commands are refused without --allow-shell, each named with its arm and place', () => {
  const plan = parsePlanText('plan.yaml', PLAN, SPECS);
  assert.throws(
    () => refuseServerCommands(plan, false),
    (e: unknown) =>
      e instanceof UsageError &&
      /^the plan runs server commands, which dbsmack runs only with --allow-shell:\n {2}plan\.yaml:\d+:\d+ \(arm restarted\): srv stop; srv start/.test(
        e.message,
      ) &&
      !e.message.includes('hunter2'),
  );
  refuseServerCommands(plan, true);
  refuseServerCommands(parsePlanText('plan.yaml', PLAN.split('\n').slice(0, 7).join('\n'), SPECS), false);
});

test('the experiment document is --out, else PLAN.experiment.json here', () => {
  assert.equal(experimentOutFile('plans/tuning.yaml', undefined), 'tuning.experiment.json');
  assert.equal(experimentOutFile('plans/tuning.YML', undefined), 'tuning.experiment.json');
  assert.equal(experimentOutFile('plans/tuning.yaml', 'x.json'), 'x.json');
});

test('the recorder rewrites the document, and one that cannot be written warns once', () => {
  const plan = parsePlanText('plan.yaml', PLAN, SPECS);
  const target = parseTarget(`sqlite:${path.join(dir, 'db.sqlite')}`);
  const out = path.join(dir, 'parts.experiment.json');
  const doc = freshDocument(plan, target);
  const rec = new ExperimentRecorder(doc, out, undefined);
  rec.persist();
  const written = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(written.name, 'parts');
  assert.deepEqual(
    written.arms.map((a: { label: string }) => a.label),
    ['base', 'restarted'],
  );
  assert.equal(rec.close(), undefined);
  const warned: string[] = [];
  const lost = new ExperimentRecorder(doc, path.join(dir, 'no', 'dir', 'x.json'), undefined);
  lost.log = (m) => warned.push(m);
  lost.persist();
  lost.persist();
  assert.equal(lost.outFailed, true);
  assert.equal(warned.length, 1);
  assert.match(warned[0]!, /\(--out\), going on without it$/);
});

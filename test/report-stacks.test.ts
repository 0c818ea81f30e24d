/**
 * A run recorded with `--profile-stacks` and `--count-calls` (test/fixtures/report/run-stacks-mariadb.json,
 * made by make-stacks.sh) in the text report and in the HTML report: the story's tables, and the flame graphs
 * of its preempted and off-CPU stacks as a person sees them in headless Chromium (Debian's `chromium`), with a
 * screenshot kept under test-artifacts/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { RunResult } from '../src/metrics/run-result.ts';
import { renderProfileText } from '../src/report/profile.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';

const CHROMIUM = process.env.DBSMACK_CHROMIUM ?? '/usr/bin/chromium';
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'report', 'run-stacks-mariadb.json');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');

test('the text report of a code profile prints the story’s tables', () => {
  const r = JSON.parse(readFileSync(FIXTURE, 'utf8')) as RunResult;
  const text = renderProfileText(r) ?? '';
  for (const heading of [
    /^code profile window: [\d.]+ s from [\d.]+ s into the measured part \(centred; asked 1\.00 s\)$/m,
    /^context switches of process \d+ \(mariadbd, all threads\): [\d,]+ involuntary \(preempted\), [\d,]+ voluntary \(blocked\)/m,
    /^Number of times preempted when in function \(on nearly every stack, not listed: .*start_thread.*\):$/m,
    /^ +count +% of switches +function +in$/m,
    /^ +[\d,]+ +[\d.]+ +dispatch_command +mariadbd$/m,
    /^Number of times blocked when in function/m,
    /^off-CPU time \(\d+ switches whose thread got a CPU back in the window\)/m,
    /^Number of times function executed \(uprobes, [\d.]+ s, \/usr\/sbin\/mariadbd\):$/m,
    /^ +[\d,]+ +[\d,]+ +[\d.]+ +open_table$/m,
    /^Lock waits by caller \(blocked switches inside a lock wait; nsec = average time off the CPU\):$/m,
    /^ +Count +nsec +Lock +Caller$/m,
  ])
    assert.match(text, heading);
});

test('the HTML report draws the preempted and off-CPU flame graphs, readable in Chromium', async (t) => {
  const dir = tmpDir('dbsmack-report-stacks-');
  const html = path.join(dir, 'report.html');
  const r = await runCli(['report', FIXTURE, '--html', html]);
  assert.equal(r.code, 0, r.stderr);
  const page0 = readFileSync(html, 'utf8');
  assert.equal((page0.match(/<figure id="flame-/g) ?? []).length, 2, 'two flame graphs');
  assert.ok(page0.includes('where threads were preempted') && page0.includes('off-CPU time by stack'));
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} is missing (apt-get install chromium)`;
    if (process.env.CI === 'true') assert.fail(why);
    t.skip(why);
    return;
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    const flames = page.locator('figure.flame');
    assert.equal(await flames.count(), 2);
    for (let i = 0; i < 2; i++) {
      const f = flames.nth(i);
      const box = await f.locator('svg').boundingBox();
      assert.ok(
        box && box.width > 600 && box.height > 150,
        `flame graph ${i} laid out: ${JSON.stringify(box)}`,
      );
      // boxes with names one can read: labels that fit their box, and a title on every box
      const boxes = await f.locator('svg g').count();
      assert.ok(boxes > 30, `${boxes} boxes`);
      assert.equal(await f.locator('svg g > title').count(), boxes);
      const labels = await f.locator('svg g > text').allTextContents();
      assert.ok(labels.includes('dispatch_command'), labels.slice(0, 40).join(', '));
      const overflow = await f.locator('svg g').evaluateAll(
        (gs) =>
          gs.filter((g) => {
            const rect = g.querySelector('rect');
            const text = g.querySelector('text');
            if (!rect || !text) return false;
            return (
              (text as unknown as { getComputedTextLength(): number }).getComputedTextLength() >
              Number(rect.getAttribute('width')) + 1
            );
          }).length,
      );
      assert.equal(overflow, 0, 'no label wider than its box');
    }
    assert.deepEqual(problems, [], 'console errors');
    mkdirSync(ARTIFACTS, { recursive: true });
    await flames.first().screenshot({ path: path.join(ARTIFACTS, 'flamegraph.png') });
  } finally {
    await browser.close();
  }
});

/** `--stages` and `--rate-stages`: load that changes during one run, measured per stage. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseStages } from '../src/cli/stages-parse.ts';
import { clientWindows, RampedRate, rateSegments, stageAt } from '../src/engine/stages.ts';
import { UsageError } from '../src/errors.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { checkStageIntervals } from '../src/run/checks.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { needServer, PG_URL } from './helpers/servers.ts';

test('stage lists parse, and a malformed one names the column of the bad character', () => {
  assert.deepEqual(parseStages('--stages', '30s:8,60s:64,30s:8', 'clients'), [
    { durationS: 30, clients: 8 },
    { durationS: 60, clients: 64 },
    { durationS: 30, clients: 8 },
  ]);
  assert.deepEqual(parseStages('--stages', '500ms:1, 2m:3,1h:2,5:4', 'clients'), [
    { durationS: 0.5, clients: 1 },
    { durationS: 120, clients: 3 },
    { durationS: 3600, clients: 2 },
    { durationS: 5, clients: 4 },
  ]);
  assert.deepEqual(parseStages('--rate-stages', '30s:1000,60s:5000/s,10s:0', 'rate'), [
    { durationS: 30, rate: 1000 },
    { durationS: 60, rate: 5000 },
    { durationS: 10, rate: 0 },
  ]);
  const bad: [string, 'clients' | 'rate', number, RegExp][] = [
    ['30s:8,60x:64', 'clients', 9, /unknown unit 'x'/],
    ['30s8', 'clients', 4, /expected ':'/],
    ['30s:0', 'clients', 5, /whole number of clients/],
    ['30s:2.5', 'clients', 5, /whole number of clients/],
    ['30s:8;60s:2', 'clients', 6, /expected ','/],
    ['30s:8,', 'clients', 7, /expected a duration/],
    ['0s:8', 'clients', 1, /more than 0 s/],
    ['', 'clients', 1, /expected a list/],
    ['s:1000', 'rate', 1, /expected a duration/],
    ['10s:fast', 'rate', 5, /expected a rate/],
  ];
  for (const [text, kind, col, re] of bad) {
    assert.throws(
      () => parseStages('--stages', text, kind),
      (e: unknown) => {
        assert.ok(e instanceof UsageError, String(e));
        assert.match(
          e.message,
          new RegExp(`^--stages '${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}': column ${col} `),
        );
        assert.match(e.message, re);
        // the hint points at the character, under the text as `hint: ` prints it
        assert.equal(e.hint?.split('\n')[1]?.indexOf('^'), col - 1 + 6, `${text}: ${e.hint}`);
        return true;
      },
      text,
    );
  }
  assert.throws(
    () => checkStageIntervals('--stages', [{ durationS: 1.5, clients: 1 }], 1),
    /stage 1 lasts 1.5 s, not a whole multiple of --report-interval 1 s/,
  );
  checkStageIntervals('--stages', [{ durationS: 1.5, clients: 1 }], 0.5);
});

test('client windows: a client runs in the stages with more clients than its id, merged over boundaries', () => {
  const stages = [
    { durationS: 2, clients: 2 },
    { durationS: 3, clients: 4 },
    { durationS: 1, clients: 1 },
  ];
  const m = 1_000_000;
  assert.deepEqual(clientWindows(stages, 0, m), [[Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]]);
  assert.deepEqual(clientWindows(stages, 1, m), [[Number.NEGATIVE_INFINITY, m + 5e6]]);
  assert.deepEqual(clientWindows(stages, 3, m), [[m + 2e6, m + 5e6]]);
  assert.deepEqual(clientWindows(stages, 4, m), []);
  assert.equal(stageAt(stages, 0), 0);
  assert.equal(stageAt(stages, 2), 1);
  assert.equal(stageAt(stages, 5.5), 2);
  assert.equal(stageAt(stages, 99), 2);
});

test('a ramped rate: arrivals follow the integral of the piecewise-linear rate', () => {
  // warm-up at 100/s, stage 1 held at 100/s for 1 s, stage 2 ramps 100 → 300/s over 2 s, then 300/s
  const stages = [
    { durationS: 1, rate: 100 },
    { durationS: 2, rate: 300 },
  ];
  const ramp = new RampedRate(rateSegments(stages, 100, 0, 1));
  const times: number[] = [];
  let t = 0;
  for (;;) {
    t = ramp.advance(t, 1);
    if (t >= 3e6) break;
    times.push(t);
  }
  // 100 in the first second, (100 + 300) / 2 × 2 = 400 in the ramp
  const first = times.filter((x) => x < 1e6).length;
  assert.ok(first === 99 || first === 100, `${first} in the first second`);
  assert.ok(Math.abs(times.length - 500) <= 1, `${times.length} arrivals`);
  // the gaps shrink along the ramp
  const gap = (i: number): number => (times[i + 1] as number) - (times[i] as number);
  assert.ok(gap(150) > gap(450), `${gap(150)} vs ${gap(450)}`);
  // a rate of 0 never arrives; half the share, half the arrivals
  assert.equal(new RampedRate(rateSegments([{ durationS: 1, rate: 0 }], 0, 0, 1)).advance(0, 1), Infinity);
  const half = new RampedRate(rateSegments(stages, 100, 0, 0.5));
  assert.ok(Math.abs(half.advance(0, 50) - 1e6) < 1, 'half the share: 50 arrivals in the first second');
});

test('bad stage options are refused before the run', async () => {
  const dir = tmpDir();
  const db = `sqlite:${path.join(dir, 'b.sqlite')}`;
  const cases: [string[], RegExp][] = [
    [['--stages', '1s:1', '--time', '5'], /--stages gives the run its length: leave --time out/],
    [['--stages', '1s:1', '--rate', '10'], /--stages is for the closed loop/],
    [['--stages', '1s:1', '--rate-stages', '1s:10'], /do not go together/],
    [['--stages', '1500ms:1'], /not a whole multiple of --report-interval 1 s/],
    [['--stages', '1s:1,2s:x'], /column 9 \('x'\): expected a number of clients/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(['run', 'select1', '--db', db, '--no-history', ...args], { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
});

test('--stages on PostgreSQL: clients per stage, connections opened and closed at the boundaries', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const dir = tmpDir();
  const mod = path.join(dir, 'sessions.mjs');
  // each event counts the sessions of this database on the server: the clients the stage has open
  writeFileSync(
    mod,
    `export default {
  name: 'sessions',
  client(ctx) {
    return {
      async event() {
        const rows = await ctx.all('sessions', "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'");
        ctx.count('seen_' + rows[0].n);
        await ctx.sleep(5);
      },
    };
  },
};
`,
  );
  const r = await runCli(
    ['run', mod, '--db', PG_URL, '--stages', '2s:1,2s:3,2s:2', '--no-history', '--format', 'json'],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.clients, 3, 'the run has as many clients as its largest stage');
  assert.equal(res.limits.time_s, 6);
  const stages = res.stages ?? [];
  assert.deepEqual(
    stages.map((s) => [s.stage, s.clients, s.start_s, s.end_s]),
    [
      [1, 1, 0, 2],
      [2, 3, 2, 4],
      [3, 2, 4, 6],
    ],
  );
  // each stage is the exact merge of its intervals, and the intervals say which stage they belong to
  for (const s of stages) {
    const ivs = res.intervals.filter((p) => p.stage === s.stage);
    assert.ok(ivs.length >= 1, `stage ${s.stage} has intervals`);
    assert.equal(
      ivs.reduce((a, p) => a + p.events, 0),
      s.events,
      `stage ${s.stage}: intervals add up to the stage`,
    );
    assert.ok(s.events > 0 && s.qps > 0, `stage ${s.stage} ran: ${JSON.stringify(s)}`);
    assert.ok(s.types.sessions && s.types.sessions.count > 0);
  }
  assert.equal(
    stages.reduce((a, s) => a + s.events, 0),
    res.totals.events,
  );
  // What the server saw, in the middle of each stage (an interval away from the boundaries, where a
  // connection may still be opening or closing): 1, then 3, then 2 sessions.
  const seen = (tEnd: number): Record<string, number> => {
    const p = res.intervals.find((x) => Math.abs(x.t - tEnd) < 1e-6);
    assert.ok(p, `an interval ends at ${tEnd} s`);
    return p.counters ?? {};
  };
  assert.deepEqual(Object.keys(seen(2)), ['seen_1'], 'stage 1: one session');
  assert.deepEqual(Object.keys(seen(4)), ['seen_3'], 'stage 2: three sessions');
  assert.ok((seen(6).seen_2 ?? 0) > 0, `stage 3: two sessions ${JSON.stringify(seen(6))}`);
  assert.equal(
    seen(6).seen_3 ?? 0,
    0,
    `stage 3: the third client closed its connection ${JSON.stringify(seen(6))}`,
  );

  // the text output shows each stage's clients and throughput
  const txt = await runCli(
    ['run', mod, '--db', PG_URL, '--stages', '1s:2,1s:1', '--no-history', '--progress'],
    {
      cwd: dir,
    },
  );
  assert.equal(txt.code, 0, txt.stderr);
  assert.match(txt.stdout, /^stages:$/m);
  // the progress lines give the clients of the interval's stage
  assert.match(txt.stderr, /^\[ 1s \] clients: 2 /m);
  assert.match(txt.stdout, /^1\s+2 clients\s+0–1 s\s+[\d.]+\s+[\d.]+\s+0\s/m);
  assert.match(txt.stdout, /^2\s+1 clients\s+1–2 s\s+[\d.]+\s+[\d.]+\s+0\s/m);
});

test('--rate-stages: arrivals ramp linearly from the previous stage, latency from the schedule', async () => {
  const dir = tmpDir();
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 'r.sqlite')}`,
      '--rate-stages',
      '1s:100,1s:300',
      '--rate-shape',
      'constant',
      '--threads',
      '2',
      '--no-history',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.limits.time_s, 2);
  assert.ok(res.rate, 'a rate-staged run is an open-loop run');
  assert.equal(res.rate.target, 100, 'it starts at the first stage rate');
  const [s1, s2] = res.stages ?? [];
  assert.ok(s1 && s2);
  assert.deepEqual([s1.rate_from, s1.rate, s2.rate_from, s2.rate], [100, 100, 100, 300]);
  // The schedule of the two workers' shares: 100 arrivals in the first second, (100 + 300) / 2 = 200 in the
  // ramp. Each was run or counted as dropped (the last arrival of a share may fall on the deadline).
  const scheduled = res.totals.events + res.rate.dropped;
  assert.ok(scheduled >= 296 && scheduled <= 300, `${res.totals.events} run + ${res.rate.dropped} dropped`);
  assert.ok(s1.events <= 101, `stage 1: ${s1.events} events`);
  assert.equal(s1.events + s2.events, res.totals.events);
});

/**
 * The pieces of `--profile-stacks` and `--count-calls` that need no server: reading `perf script` text (a
 * made-up one whose every figure is known, and a real excerpt recorded from MariaDB under oltp_read_write),
 * ELF symbols and C++ names, perf stat's CSV, the window's cost, the per-function ratios, the flame graph
 * layout and the option checks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { functionRatios } from '../src/analysis/function-ratios.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { stacksFiles, windowCost } from '../src/probe/code-probe.ts';
import { dataSymbolAt, ElfError, matchFunction, readElfSymbols } from '../src/probe/elf-symbols.ts';
import { MIN_RANK_SWITCHES, SwitchStacks } from '../src/probe/switch-stacks.ts';
import { parseStatCsv } from '../src/probe/uprobes.ts';
import { flameGraphSvg } from '../src/report/flamegraph.ts';
import { rankedFunctions } from '../src/report/stacks-text.ts';
import { ROOT, runCli } from './helpers/cli.ts';

const K = '([kernel.kallsyms])';
const M = '(/usr/sbin/mariadbd)';
const C = '(/usr/lib/x86_64-linux-gnu/libc.so.6)';

/** One sched_switch sample as perf script prints it: header, then frames leaf first, then a blank line. */
function sample(tid: number, t: string, state: string, frames: Array<[string, string]>): string {
  const head = `${tid}  ${t}:       sched:sched_switch: prev_comm=mariadbd prev_pid=${tid} prev_prio=120 prev_state=${state} ==> next_comm=swapper/0 next_pid=0 next_prio=120`;
  const body = frames.map(
    ([sym, dso], i) => `\t${dso === K ? 'ffffffff8100' : '    '}${(0x1000 + i).toString(16)} ${sym} ${dso}`,
  );
  return [head, ...body, ''].join('\n');
}

const ENTRY: Array<[string, string]> = [
  ['do_command', M],
  ['do_handle_one_connection', M],
  ['start_thread', C],
  ['clone3', C],
];

const TEXT = [
  // a preempted thread, with a recursive function on its stack (counted once)
  sample(10, '100.000000000', 'R', [
    ['__schedule', K],
    ['asm_sysvec_reschedule_ipi', K],
    ['rec', M],
    ['rec', M],
    ['JOIN::exec', M],
    ['dispatch_command', M],
    ...ENTRY,
  ]),
  '10   100.000010000: PERF_RECORD_SWITCH OUT preempt',
  '10   100.002000000: PERF_RECORD_SWITCH IN',
  // a thread about to sleep on a futex: the address of a global mutex
  '11   100.000900000: syscalls:sys_enter_futex: uaddr: 0x5000, op: 0x00000080, val: 0x00000002, utime: 0x00000000, uaddr2: 0x00000000, val3: 0xffffffff     7fd50cca412b __GI___lll_lock_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)',
  sample(11, '100.001000000', 'S', [
    ['__schedule', K],
    ['futex_wait', K],
    ['__GI___lll_lock_wait', C],
    ['pthread_mutex_lock@@GLIBC_2.2.5', C],
    ['psi_mutex_lock', M],
    ['[unknown]', M],
    ['tdc_acquire_share', M],
    ['open_table', M],
    ['dispatch_command', M],
    ...ENTRY,
  ]),
  '11   100.006000000: PERF_RECORD_SWITCH IN',
  // a condition wait is a sleep, not a lock wait
  sample(12, '100.001500000', 'S', [
    ['__schedule', K],
    ['futex_wait', K],
    ['__futex_abstimed_wait_common', C],
    ['___pthread_cond_timedwait', C],
    ['tpool::thread_pool_generic::wait_for_tasks', M],
    ['start_thread', C],
    ['clone3', C],
  ]),
  '12   100.011500000: PERF_RECORD_SWITCH IN',
  // blocked on the network, and never back on a CPU inside the window
  sample(13, '100.002000000', 'S', [
    ['__schedule', K],
    ['do_sys_poll', K],
    ['__poll', C],
    ['vio_io_wait', M],
    ['my_net_read_packet', M],
    ...ENTRY,
  ]),
  // a stack cut short before the thread's start
  sample(14, '100.003000000', 'D', [
    ['__schedule', K],
    ['io_schedule', K],
    ['__pwrite', C],
    ['os_file_write_func', M],
  ]),
  '14   100.004000000: PERF_RECORD_SWITCH IN',
].join('\n');

function parsed(opts: ConstructorParameters<typeof SwitchStacks>[0] = {}): SwitchStacks {
  const s = new SwitchStacks(opts);
  for (const line of TEXT.split('\n')) s.line(line);
  s.end();
  return s;
}

test('switches by kind, each function counted once per switch, ranked by count', () => {
  const r = parsed().result();
  assert.equal(r.involuntary, 1);
  assert.equal(r.voluntary, 4);
  assert.equal(r.threads, 5);
  assert.equal(r.truncated, 1);
  assert.deepEqual(
    r.preempted_in.map((f) => [f.function, f.count]),
    [
      ['clone3', 1],
      ['dispatch_command', 1],
      ['do_command', 1],
      ['do_handle_one_connection', 1],
      ['JOIN::exec', 1],
      ['rec', 1],
      ['start_thread', 1],
    ],
  );
  assert.equal(r.preempted_in.find((f) => f.function === 'JOIN::exec')?.module, 'mariadbd');
  assert.ok(!r.preempted_in.some((f) => f.function === '__schedule'), 'kernel frames are not ranked');
  const blocked = new Map(r.blocked_in.map((f) => [f.function, f.count]));
  assert.equal(blocked.get('start_thread'), 3);
  assert.equal(blocked.get('dispatch_command'), 1);
  assert.equal(blocked.get('[unknown]'), undefined, 'unnamed frames are not ranked');
  for (let i = 1; i < r.blocked_in.length; i++)
    assert.ok((r.blocked_in[i - 1]?.count ?? 0) >= (r.blocked_in[i]?.count ?? 0), 'sorted by count');
  assert.deepEqual(r.ranked, { preempted: false, blocked: false });
  assert.equal(r.min_switches, MIN_RANK_SWITCHES);
  assert.equal(r.window_s, 0.012, 'first to last record, ms resolution');
});

test('off-CPU time runs from a switch-out to the same thread’s next switch-in', () => {
  const o = parsed().result().off_cpu;
  assert.ok(o);
  assert.equal(o.paired, 4, 'thread 13 never came back inside the window');
  assert.equal(o.preempted_ms, 2);
  assert.equal(o.blocked_ms, 5 + 10 + 1);
  assert.equal(o.in.find((f) => f.function === 'open_table')?.ms, 5);
  assert.equal(o.stacks[0]?.stack.split(';')[0], 'blocked');
  assert.equal(o.stacks[0]?.ms, 10, 'longest first');
});

test('lock waits by caller: the first named server function above the lock machinery, not condition waits', () => {
  assert.deepEqual(parsed().lockCallers(), [
    { lock: 'mutex', caller: 'tdc_acquire_share', count: 1, wait_ms: 5 },
  ]);
  // the futex address names the lock when it is a global of the binary
  const named = parsed({ dataSymbol: (a) => (a === 0x5000n ? 'LOCK_open' : undefined) });
  assert.deepEqual(named.lockCallers(), [
    { lock: 'LOCK_open', caller: 'tdc_acquire_share', count: 1, wait_ms: 5 },
  ]);
});

test('folded stacks: root first, kernel frames marked, one line per distinct stack with its count', () => {
  const s = parsed();
  const lines = s.foldedCounts().trim().split('\n');
  assert.equal(lines.length, 5);
  assert.equal(
    lines[0],
    'preempted;clone3;start_thread;do_handle_one_connection;do_command;dispatch_command;JOIN::exec;rec;rec;asm_sysvec_reschedule_ipi_[k];__schedule_[k] 1',
  );
  assert.ok(
    lines.some(
      (l) => l.includes(';[mariadbd];tdc_acquire_share') || l.includes('tdc_acquire_share;[mariadbd];'),
    ),
  );
  const off = s.foldedOffCpu().trim().split('\n');
  assert.equal(off.length, 4);
  assert.match(off[0] ?? '', /^blocked;clone3;start_thread;tpool::.* 10000$/, 'microseconds');
  for (const l of [...lines, ...off]) assert.match(l, /^[^ ].* \d+$/);
});

test('a real perf script excerpt of MariaDB under oltp_read_write parses into the server’s own functions', () => {
  const s = new SwitchStacks();
  const text = readFileSync(
    path.join(ROOT, 'test', 'fixtures', 'perf', 'mariadb-read-write.script.txt'),
    'utf8',
  );
  for (const line of text.split('\n')) s.line(line);
  s.end();
  const r = s.result();
  assert.equal(r.involuntary, 26);
  assert.equal(r.voluntary, 55);
  assert.ok(r.truncated <= 2, `${r.truncated} stacks cut short`);
  const pre = r.preempted_in.map((f) => f.function);
  assert.ok(pre.includes('dispatch_command'), pre.join(', '));
  assert.ok(
    r.preempted_in.every((f) => f.module === 'mariadbd' || /^lib/.test(f.module ?? '')),
    'user-space functions of the server and its libraries only',
  );
  assert.ok((r.off_cpu?.paired ?? 0) > 50);
  for (const line of s.foldedCounts().trim().split('\n'))
    assert.match(line, /^(preempted|blocked);\S.* \d+$/);
});

test('C and C++ names find their symbols: overloads, const methods, constructors, not look-alikes', () => {
  const syms = [
    '_Z10open_tableP3THDP10TABLE_LISTP18Open_table_context',
    '_Z10open_tableP3THDi',
    '_Z11open_tablesP3THDPP10TABLE_LISTPjjP19Prelocking_strategy',
    '_Z10open_tableP3THD.cold',
    '_ZN4JOIN4execEv',
    '_ZNK4JOIN4execEi',
    '_ZN4JOIN10exec_innerEv',
    '_ZN3THDC1Eyb',
    '_ZN3THDC2Eyb',
    '_ZN3THDD2Ev',
    '_ZN5wsrep11transaction5stateB5cxx11Ev',
    'LWLockAcquire',
    'LWLockAcquireOrWait',
  ].map((name, i) => ({ name, value: i * 16, size: 16 }));
  assert.deepEqual(matchFunction(syms, 'open_table'), [
    '_Z10open_tableP3THDP10TABLE_LISTP18Open_table_context',
    '_Z10open_tableP3THDi',
  ]);
  assert.deepEqual(matchFunction(syms, 'JOIN::exec'), ['_ZN4JOIN4execEv', '_ZNK4JOIN4execEi']);
  assert.deepEqual(matchFunction(syms, 'THD::THD'), ['_ZN3THDC1Eyb', '_ZN3THDC2Eyb']);
  assert.deepEqual(matchFunction(syms, 'THD::~THD'), ['_ZN3THDD2Ev']);
  assert.deepEqual(matchFunction(syms, 'wsrep::transaction::state'), [
    '_ZN5wsrep11transaction5stateB5cxx11Ev',
  ]);
  assert.deepEqual(matchFunction(syms, 'LWLockAcquire'), ['LWLockAcquire']);
  assert.deepEqual(matchFunction(syms, 'nothing'), []);
  const objects = [
    { name: 'LOCK_plugin', value: 0x1000, size: 48 },
    { name: 'lock_sys', value: 0x2000, size: 256 },
  ];
  assert.equal(dataSymbolAt(objects, 0x1000), 'LOCK_plugin');
  assert.equal(dataSymbolAt(objects, 0x2040), 'lock_sys+0x40');
  assert.equal(dataSymbolAt(objects, 0x1030), undefined, 'past the end of the object');
  assert.equal(dataSymbolAt(objects, 0x10), undefined);
});

test('the ELF reader reads a real executable and refuses what is not one', () => {
  const elf = readElfSymbols(process.execPath);
  assert.ok(elf.functions.length > 100, `${elf.functions.length} functions in ${process.execPath}`);
  assert.ok(
    elf.objects.every((o, i) => i === 0 || (elf.objects[i - 1]?.value ?? 0) <= o.value),
    'sorted',
  );
  assert.throws(() => readElfSymbols(path.join(ROOT, 'package.json')), ElfError);
});

test('perf stat CSV: counts per function, overloads added up, uncounted events as 0', () => {
  const csv = [
    '# started on Tue Dec  1 08:46:10 2026',
    '',
    '45706,,dbsmack_7:open_table,4000123456,100.00,,',
    '12,,dbsmack_7:open_table_2,4000123456,100.00,,',
    '<not counted>,,dbsmack_7:JOIN__exec,0,0.00,,',
    '99,,dbsmack_8:open_table,4000123456,100.00,,',
  ].join('\n');
  const events = new Map([
    ['open_table', 'open_table'],
    ['open_table_2', 'open_table'],
    ['JOIN__exec', 'JOIN::exec'],
  ]);
  assert.deepEqual(parseStatCsv(csv, 'dbsmack_7', events), { open_table: 45718, 'JOIN::exec': 0 });
});

function withIntervals(qps: number[]): RunResult {
  return {
    totals: { qps: 0, queries: 0 },
    intervals: qps.map((q, i) => ({ t: i + 1, dur: 1, queries: q })),
  } as unknown as RunResult;
}

test('the cost of the window: throughput of the intervals inside it against those wholly outside', () => {
  const c = windowCost(withIntervals([100, 100, 100, 80, 80, 100, 100, 100]), 3, 2, ['stack recording']);
  assert.deepEqual(c, {
    what: ['stack recording'],
    inside_qps: 80,
    outside_qps: 100,
    ratio: 0.8,
    inside_intervals: 2,
    outside_intervals: 6,
  });
  // a window that covers no whole interval, or everything, has nothing to compare
  assert.equal(windowCost(withIntervals([100, 100, 100]), 0.5, 0.8, []), undefined);
  assert.equal(windowCost(withIntervals([100, 100, 100]), 0, 3, []), undefined);
});

test('--stacks-out names: one file per run in a sweep, the off-CPU file beside it', () => {
  assert.deepEqual(stacksFiles('/tmp/out.folded'), {
    counts: '/tmp/out.folded',
    offCpu: '/tmp/out.off-cpu.folded',
  });
  assert.deepEqual(stacksFiles('stacks', { clients: 8, n: 2 }), {
    counts: 'stacks-8c-2',
    offCpu: 'stacks-8c-2.off-cpu',
  });
});

test('the text tables leave out the frames on nearly every stack (thread start and main loop)', () => {
  const { everywhere, rows } = rankedFunctions(
    [
      { function: 'start_thread', count: 1000 },
      { function: 'do_command', count: 995 },
      { function: 'dispatch_command', count: 900 },
      { function: 'open_table', count: 10 },
    ],
    1050,
  );
  assert.deepEqual(everywhere, ['start_thread', 'do_command']);
  assert.deepEqual(
    rows.map((r) => r.function),
    ['dispatch_command', 'open_table'],
  );
});

function coded(
  window: number,
  preempted: Array<[string, number]>,
  calls?: Record<string, number>,
): RunResult {
  return {
    profile: {
      elapsed_s: window,
      notes: [],
      stacks: {
        window_s: window,
        involuntary: 1000,
        voluntary: 0,
        preempted_in: preempted.map(([f, count]) => ({ function: f, count })),
        blocked_in: [],
      },
      ...(calls ? { calls, code_window: { length_s: window } } : {}),
    },
  } as unknown as RunResult;
}

test('per-function ratios candidate/base, per second of each window', () => {
  const base = coded(
    2,
    [
      ['start_thread', 1000],
      ['open_table', 2],
      ['dispatch_command', 400],
    ],
    { open_table: 10_000 },
  );
  const cand = coded(
    4,
    [
      ['start_thread', 4000],
      ['open_table', 1832],
      ['close_thread_tables', 8],
    ],
    { open_table: 30_000 },
  );
  const tables = functionRatios([base as never, cand as never]);
  assert.deepEqual(
    tables.map((t) => t.kind),
    ['preempted', 'calls'],
    'no blocked switches: no table of them',
  );
  const byFn = new Map(tables[0]?.rows.map((r) => [r.function, r]));
  assert.equal(byFn.has('start_thread'), false);
  assert.deepEqual(byFn.get('open_table')?.rates, [1, 458]);
  assert.deepEqual(byFn.get('open_table')?.ratios, [458]);
  assert.deepEqual(byFn.get('dispatch_command')?.ratios, [0]);
  assert.deepEqual(byFn.get('close_thread_tables')?.ratios, [Number.POSITIVE_INFINITY]);
  assert.deepEqual(tables[1]?.rows[0]?.ratios, [1.5]);
});

test('flame graph: nested boxes as wide as their share, names escaped, titles on hover', () => {
  const svg = flameGraphSvg(
    [
      { stack: 'main;a;srw_lock<true>::wait', value: 3 },
      { stack: 'main;b', value: 1 },
    ],
    { title: 'test <graph>', unit: 'switches', width: 420 },
  );
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(!/<script|href=|xlink/.test(svg), 'self-contained, no script or link');
  assert.equal((svg.match(/<rect /g) ?? []).length, 1 + 5, 'background and one box per node');
  assert.ok(svg.includes('srw_lock&#60;true&#62;::wait'), 'escaped');
  assert.ok(svg.includes('<title>a: 3 switches, 75.00%</title>'));
  const width = (name: string): number =>
    Number(new RegExp(`<title>${name}:[^<]*</title><rect [^>]*width="([\\d.]+)"`).exec(svg)?.[1]);
  // inner width 400: all 400 (less the 0.5 gap), a three quarters, b one quarter
  assert.equal(width('all'), 399.5);
  assert.equal(width('a'), 299.5);
  assert.equal(width('b'), 99.5);
  assert.match(flameGraphSvg([], { title: 'none', unit: 'ms' }), /nothing to draw/);
});

test('option checks: --stacks-out and --stacks-window need what they go with, function names are checked', async () => {
  for (const [args, msg] of [
    [['--stacks-out', 'x.folded'], /--stacks-out goes with --profile-stacks/],
    [['--stacks-window', '3'], /--stacks-window goes with --profile-stacks or --count-calls/],
    [['--profile-stacks', '--stacks-window', '0'], /--stacks-window expects seconds above 0/],
    [['--count-calls', 'open table'], /'open table' is not a function name/],
    [['--profile-stacks', '--stacks-out', '/nonexistent-dir/x.folded'], /cannot write --stacks-out/],
  ] as const) {
    const r = await runCli(['run', 'select1', '--db', 'sqlite::memory:', '--time', '0.2', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
  }
});

test('SQLite has no server to record: the run goes on with a note', async () => {
  const r = await runCli([
    'run',
    'select1',
    '--db',
    'sqlite::memory:',
    '--time',
    '0.3',
    '--profile-stacks',
    '--format',
    'json',
    '--no-history',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout);
  assert.equal(res.status, 'complete');
  assert.match(JSON.stringify(res.profile.notes), /SQLite runs inside dbsmack/);
  assert.equal(res.profile.stacks, undefined);
});

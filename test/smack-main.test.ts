/** `main` of a smack file, phase by phase: where each call puts its actions, prints and errors. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSmack } from '../src/workload/smack/compile.ts';
import { SmackError } from '../src/workload/smack/errors.ts';
import type { Action, Group } from '../src/workload/smack/model.ts';
import { parseSmack } from '../src/workload/smack/parser.ts';

const HEAD = `query "q1" { query "select 1"; type "t1"; }
query "q2" { query "select 2"; }
client "a" { query_barrel "2 q1 1 q2"; }
client "b" { user "u"; }
`;
const compile = (main: string, args: string[] = ['3', '5']) =>
  compileSmack(parseSmack(`${HEAD}main {\n${main}\n}\n`, 'm.smack'), args);
const group = (main: string, args?: string[]): Group => compile(main, args).groups[0] as Group;
const sql = (as: Action[]): string[] => as.map((a) => (a.kind === 'query' ? a.sql : a.kind));
const fails = (main: string, message: RegExp, hint?: RegExp): void => {
  assert.throws(
    () => compile(main),
    (e: unknown) => {
      assert.ok(e instanceof SmackError, String(e));
      assert.match(e.message, message);
      if (hint) assert.match(e.hint ?? '', hint);
      return true;
    },
  );
};

test('client set-up: rounds and threads from arguments and variables', () => {
  const g = group(`$n = $1; a.init(); a.set_num_rounds($2); a.create_threads($n); a.connect();
a.unload_query_barrel(); a.collect_threads();`);
  assert.deepEqual([g.threads, g.rounds, g.start, g.segments.length], [3, 5, 0, 1]);
  fails('a.init(); a.set_num_rounds("x");', /^m\.smack:6:\d+: set_num_rounds expects a whole number from 0/);
  fails('a.init(); a.create_threads(0);', /create_threads expects a whole number from 1 to 100000, got '0'/);
  fails(
    'a.init(); a.create_threads(1); a.create_threads(1);',
    /a\.create_threads\(\) is called a second time/,
  );
  fails('b.init(); b.create_threads(1);', /client "b" has no query_barrel to run/, /add query_barrel/);
  fails('a.init(); a.connect(1);', /connect takes 0 parameters, got 1/);
  fails('a.init(); a.init();', /a\.init\(\) is called a second time/);
  fails('a.connect();', /a\.connect\(\) before a\.init\(\)/, /super-smack ignored such lines/);
  fails('zz.init();', /client "zz" is not defined/, /clients: a, b/);
  fails('a.init(); a.fly();', /unknown method 'fly' called for client 'a'/);
});

test('the query barrel: each unload is a segment, in the threads and after connect', () => {
  const g = group(`a.init(); a.create_threads(2); a.connect(); a.set_num_rounds(2); a.unload_query_barrel();
a.set_num_rounds(7); a.unload_query_barrel(); a.collect_threads();`);
  assert.deepEqual(
    g.segments.map((s) => s.rounds),
    [2, 7],
  );
  assert.equal(g.rounds, 9);
  fails('a.init(); a.unload_query_barrel();', /a\.unload_query_barrel\(\) before create_threads\(\)/);
  fails(
    'a.init(); a.create_threads(1); a.unload_query_barrel();',
    /unload_query_barrel\(\) before a\.connect\(\)/,
  );
  fails(
    'a.init(); a.create_threads(1); a.connect(); a.collect_threads(); a.unload_query_barrel();',
    /a\.unload_query_barrel\(\) after collect_threads\(\)/,
  );
  fails(
    'a.init(); a.create_threads(1); a.connect(); a.disconnect(); a.unload_query_barrel();',
    /before a\.connect\(\)/,
  );
  fails('a.init(); a.collect_threads();', /a\.collect_threads\(\) without create_threads\(\)/);
});

test('actions go before the threads, into their set-up, between segments, at their end, or after', () => {
  const g = group(`a.init(); a.query("before"); a.create_threads(2); a.query("setup"); a.connect();
a.unload_query_barrel(); a.sleep(1, 5); a.query("between"); a.unload_query_barrel(); a.query("end");
a.run_save_result("q2", "out.txt"); a.collect_threads(); a.query("after");`);
  assert.deepEqual(sql(g.before), ['before']);
  assert.deepEqual(sql(g.threadSetup), ['setup']);
  assert.deepEqual(
    g.segments.map((s) => sql(s.before)),
    [[], ['sleep', 'between']],
  );
  assert.deepEqual(g.segments[1]?.before[0], { kind: 'sleep', ms: 1005 });
  assert.deepEqual(sql(g.threadEnd), ['end', 'save']);
  assert.deepEqual(sql(g.after), ['after']);
  fails(
    'a.init(); a.run_save_result("nope", "f");',
    /run_save_result names query "nope", which is not defined/,
  );
  fails('a.init(); a.sleep(1, 2, 3);', /sleep takes 1 or 2 parameters, got 3/);
  fails('a.init(); a.query(a::max_connect_time);', /query needs a value known before the run/);
});

test('threads never collected end at the end of main: their pending actions become the thread end', () => {
  const g = group('a.init(); a.create_threads(1); a.connect(); a.unload_query_barrel(); a.query("tail");');
  assert.deepEqual(sql(g.threadEnd), ['tail']);
  const none = group('a.init(); a.create_threads(1); a.query("only");');
  assert.deepEqual([sql(none.threadSetup), none.segments.length], [['only'], 0]);
});

test('prints: once before the threads, once per thread in them, after the run once collected', () => {
  const g =
    group(`a.init(); a.print("x"); a.create_threads(3); a.print("each"); a.connect(); a.unload_query_barrel();
a.collect_threads(); a.print("q1=" . a::t1::num_queries . " c=" . a::max_connect_time);`);
  assert.deepEqual(
    g.prints.map((p) => [typeof p.value === 'string' ? p.value : 'later', p.times, p.where]),
    [
      ['x', 1, 'before'],
      ['each', 3, 'before'],
      ['later', 1, 'after'],
    ],
  );
  const late = g.prints[2]?.value;
  assert.ok(typeof late === 'function');
  const asked: unknown[] = [];
  assert.equal(
    late((client, type, stat) => {
      asked.push([client, type, stat]);
      return asked.length === 1 ? 12 : 0.5;
    }),
    'q1=12.000000 c=0.500000',
  );
  assert.deepEqual(asked, [
    ['a', 't1', 'num_queries'],
    ['a', undefined, 'max_connect_time'],
  ]);
  fails(
    'a.init(); a.print(a::nope::num_queries);',
    /client "a" runs no query of type 'nope'/,
    /its types: t1, q2/,
  );
  fails('a.init(); a.print(a::t1::speed);', /unknown query statistic 'speed'/);
  fails('a.init(); a.print(a::speed);', /unknown client statistic 'speed'/);
  fails('a.init(); a.print(zz::max_connect_time);', /zz::… names client "zz", which is not defined/);
  fails('a.init(); a.print($u);', /\$u is used before it is assigned/);
  fails('a.init(); a.print($3);', /\$3 refers to command-line argument 3, but 2 arguments were given/);
});

test('main closes with the client id ranges and type names of every group', () => {
  const m =
    compile(`b.init(); a.init(); a.create_threads(2); a.connect(); a.unload_query_barrel(); a.collect_threads();
b.print($0);`);
  assert.deepEqual(
    m.groups.map((g) => [g.client.name, g.start, g.threads]),
    [
      ['b', 0, 1],
      ['a', 1, 2],
    ],
  );
  assert.deepEqual(
    [...(m.groups[1]?.typeNames ?? [])],
    [
      ['t1', 'a::t1'],
      ['q2', 'a::q2'],
    ],
  );
  assert.equal(m.groups[0]?.prints[0]?.value, 'm.smack');
  fails('$x = 1;', /main starts no client/);
});

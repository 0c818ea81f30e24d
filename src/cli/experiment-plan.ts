/**
 * The plan of `dbsmack experiment PLAN`: a YAML file (the `yaml` library, with its positions) checked key by
 * key, so that an unknown key, a value of the wrong type or an arm without a label names FILE:LINE:COLUMN.
 * What the plan means is left to the code that already knows it: every setting becomes the words of a `run`
 * command line (`--time=1`, `--server-nice=5`, `--table-size=1000`), parsed by run's own options and the
 * workload's own option specs (experiment.ts), so a plan accepts exactly what `run` accepts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, type Node, type Pair, parseDocument, type YAMLMap } from 'yaml';
import { byName } from '../collate.ts';
import { InputError } from '../errors.ts';

/** What the plan needs to know of one option of `run`: its name and whether it is a flag (no value). */
export interface RunOptionSpec {
  name: string;
  flag: boolean;
}

/** Options of `run` a plan cannot set: the experiment decides them (clients, output, history) or names them otherwise (`target`). */
export const PLAN_EXCLUDED = new Set([
  'clients',
  'threads',
  'format',
  'out',
  'label',
  'history',
  'no-history',
  'help',
  'db',
  'quiet',
  'progress',
  'debug',
]);

/** Options of `run` that do not go with an experiment's runs, and why. */
const NOT_IN_EXPERIMENT = new Map([
  ['stages', 'an experiment runs its own client counts (use run --stages)'],
  ['rate-stages', 'an experiment compares steady runs (use run --rate-stages)'],
  [
    'threshold',
    'thresholds are judged by run, not per experiment run (use run --threshold, or capacity --slo)',
  ],
  ['threshold-abort', 'thresholds are judged by run (use run --threshold-abort)'],
  ['metrics-listen', 'live metrics are served by run and sweep'],
  ['metrics-linger', 'live metrics are served by run and sweep'],
]);

export type PlanValue = string | number | boolean;

/** One setting of an arm: a run option or a workload option, with where it was written. */
export interface PlanSetting {
  key: string;
  value: PlanValue;
  /** FILE:LINE:COLUMN of the key. */
  at: string;
  /** A run option (else a workload option, checked against the workload when the plan is resolved). */
  run: boolean;
}

export interface PlanServer {
  stop?: string;
  start?: string;
  /** Seconds to wait for the server to answer after `start`. */
  wait?: number;
  at: string;
}

export interface PlanArm {
  label: string;
  baseline: boolean;
  /** Settings of the plan's top, overridden by the arm's own, by key. */
  settings: PlanSetting[];
  server?: PlanServer;
  /** Server variables and the values they must show after the arm's start (`thread_handling: pool-of-threads`). */
  check?: Record<string, string>;
  at: string;
}

export interface ExperimentPlan {
  file: string;
  name: string;
  target?: string;
  targetAt?: string;
  workload: string;
  workloadAt: string;
  clients: number[];
  repeat: number;
  arms: PlanArm[];
}

const TOP_KEYS = ['name', 'target', 'workload', 'options', 'clients', 'repeat', 'arms'];
const ARM_KEYS = ['label', 'baseline', 'options', 'server', 'check'];
const SERVER_KEYS = ['stop', 'start', 'wait'];

/** Runs per client count and arm when the plan gives no `repeat` (as sweep's default, for the same reason). */
export const PLAN_DEFAULT_REPEAT = 5;

class PlanReader {
  private readonly lc = new LineCounter();
  constructor(
    readonly file: string,
    readonly text: string,
    private readonly runOptions: ReadonlyMap<string, RunOptionSpec>,
  ) {}

  at(node: Node | Pair | null | undefined): string {
    const n = node && 'range' in node ? node : (node as Pair | undefined)?.key;
    const off = (n as Node | undefined)?.range?.[0] ?? 0;
    const p = this.lc.linePos(off);
    return `${this.file}:${p.line}:${p.col}`;
  }

  fail(node: Node | Pair | null | undefined, message: string, hint?: string): never {
    throw new InputError(`${this.at(node)}: ${message}`, hint);
  }

  read(defaultRepeat: number): ExperimentPlan {
    const doc = parseDocument(this.text, { lineCounter: this.lc, prettyErrors: false, uniqueKeys: true });
    const err = doc.errors[0];
    if (err) {
      const p = this.lc.linePos(err.pos[0]);
      throw new InputError(`${this.file}:${p.line}:${p.col}: not valid YAML: ${err.message.split('\n')[0]}`);
    }
    const root = doc.contents;
    if (!isMap(root))
      this.fail(
        root,
        'a plan is a mapping (name:, workload:, clients:, arms: …)',
        'see dbsmack experiment --help',
      );
    const top = this.pairs(root, TOP_KEYS, 'the plan');
    const name = this.str(top.get('name'), 'name', true) as string;
    const workloadPair = this.need(root, top, 'workload');
    const workload = this.str(workloadPair, 'workload', true) as string;
    const targetPair = top.get('target');
    const target = this.str(targetPair, 'target', false);
    const clients = this.clientList(this.need(root, top, 'clients'));
    const repeatPair = top.get('repeat');
    const repeat = repeatPair ? this.positiveInt(repeatPair, 'repeat') : defaultRepeat;
    const common = this.settings(root, top, 'the plan');
    const armsPair = this.need(root, top, 'arms');
    const armsNode = armsPair.value as Node | null;
    if (!isSeq(armsNode) || armsNode.items.length === 0)
      this.fail(armsNode ?? armsPair, 'arms must be a list of arms (- label: …)');
    const arms: PlanArm[] = [];
    for (const item of armsNode.items) {
      const arm = this.arm(item as Node, common);
      const twin = arms.find((a) => a.label === arm.label);
      if (twin) this.fail(item as Node, `a second arm labelled '${arm.label}' (the first is at ${twin.at})`);
      if (arm.baseline) {
        const other = arms.find((a) => a.baseline);
        if (other)
          this.fail(item as Node, `a second baseline arm: '${other.label}' (${other.at}) is the baseline`);
      }
      arms.push(arm);
    }
    if (!arms.some((a) => a.baseline) && arms[0]) arms[0].baseline = true;
    return {
      file: this.file,
      name,
      ...(target !== undefined ? { target, targetAt: this.at(targetPair) } : {}),
      workload,
      workloadAt: this.at(workloadPair),
      clients,
      repeat,
      arms,
    };
  }

  /** The pairs of a mapping by key; an unknown key names its position and the keys that are known. */
  private pairs(map: YAMLMap, known: readonly string[], where: string): Map<string, Pair> {
    const out = new Map<string, Pair>();
    for (const p of map.items) {
      const k = isScalar(p.key) ? p.key.value : undefined;
      if (typeof k !== 'string') this.fail(p, `keys of ${where} are names, got ${JSON.stringify(k)}`);
      if (!known.includes(k) && !(where !== 'server:' && this.runOptions.has(k))) {
        this.fail(
          p,
          `unknown key '${k}' in ${where}`,
          `${where} takes ${known.join(', ')}${where === 'server:' ? '' : ', and options of dbsmack run (time, warmup, profile, server-nice …); workload options go under options:'}`,
        );
      }
      out.set(k, p);
    }
    return out;
  }

  private need(map: YAMLMap, pairs: Map<string, Pair>, key: string): Pair {
    const p = pairs.get(key);
    if (!p) this.fail(map, `the plan has no '${key}'`, 'see dbsmack experiment --help');
    return p;
  }

  private str(p: Pair | undefined, key: string, required: boolean): string | undefined {
    if (!p) {
      if (required) throw new InputError(`${this.file}:1:1: the plan has no '${key}'`);
      return undefined;
    }
    const v = p.value as Node | null;
    if (!isScalar(v) || typeof v.value !== 'string' || v.value.trim() === '')
      this.fail(v ?? p, `${key} must be a string, got ${describe(v)}`);
    return v.value;
  }

  private positiveInt(p: Pair, key: string): number {
    const v = p.value as Node | null;
    if (!isScalar(v) || typeof v.value !== 'number' || !Number.isInteger(v.value) || v.value < 1)
      this.fail(v ?? p, `${key} must be a whole number of at least 1, got ${describe(v)}`);
    return v.value;
  }

  private clientList(p: Pair): number[] {
    const v = p.value as Node | null;
    const items = isSeq(v) ? v.items : [v];
    const out: number[] = [];
    for (const it of items as (Node | null)[]) {
      if (!isScalar(it) || typeof it.value !== 'number' || !Number.isInteger(it.value) || it.value < 1)
        this.fail(it ?? p, `clients must be a list of client counts like [1, 8, 32], got ${describe(it)}`);
      if (out.includes(it.value)) this.fail(it, `client count ${it.value} is listed twice`);
      out.push(it.value);
    }
    if (out.length === 0) this.fail(v ?? p, 'clients must list at least one client count');
    return out;
  }

  private scalarSetting(p: Pair, key: string, run: boolean): PlanSetting {
    const v = p.value as Node | null;
    if (!isScalar(v) || !['string', 'number', 'boolean'].includes(typeof v.value))
      this.fail(v ?? p, `${key} must be a single value (text, number or true/false), got ${describe(v)}`);
    const value = v.value as PlanValue;
    const spec = this.runOptions.get(key);
    if (run && spec?.flag && typeof value !== 'boolean')
      this.fail(v, `${key} is a switch: true or false, got ${describe(v)}`);
    if (run && spec && !spec.flag && typeof value === 'boolean')
      this.fail(v, `${key} takes a value (dbsmack run --${key} VALUE), got ${describe(v)}`);
    return { key, value, at: this.at(p), run };
  }

  /** Run options standing as keys of the plan or the arm, and the entries of its `options:`. */
  private settings(map: YAMLMap, pairs: Map<string, Pair>, where: string): PlanSetting[] {
    const out: PlanSetting[] = [];
    for (const [k, p] of pairs) {
      if (this.runOptions.has(k) && !TOP_KEYS.includes(k) && !ARM_KEYS.includes(k)) {
        const why = NOT_IN_EXPERIMENT.get(k);
        if (why) this.fail(p, `${k} cannot be set in a plan: ${why}`);
        out.push(this.scalarSetting(p, k, true));
      }
    }
    const opts = pairs.get('options');
    if (opts) {
      const v = opts.value as Node | null;
      if (!isMap(v)) this.fail(v ?? opts, `options of ${where} must be a mapping, got ${describe(v)}`);
      for (const p of v.items) {
        const k = isScalar(p.key) ? p.key.value : undefined;
        if (typeof k !== 'string' || k === '')
          this.fail(p, `option names are words, got ${JSON.stringify(k)}`);
        const name = k.replace(/^--/, '');
        if (PLAN_EXCLUDED.has(name))
          this.fail(
            p,
            `${name} cannot be set in a plan`,
            'the experiment decides it (clients: and target: are keys of the plan)',
          );
        const why = NOT_IN_EXPERIMENT.get(name);
        if (why) this.fail(p, `${name} cannot be set in a plan: ${why}`);
        const dup = out.find((s) => s.key === name);
        if (dup) this.fail(p, `${name} is set twice (also at ${dup.at})`);
        out.push(this.scalarSetting(p, name, this.runOptions.has(name)));
      }
    }
    void map;
    return out;
  }

  private arm(node: Node, common: PlanSetting[]): PlanArm {
    if (!isMap(node))
      this.fail(node, `an arm is a mapping (label:, options:, server: …), got ${describe(node)}`);
    const pairs = this.pairs(node, ARM_KEYS, 'an arm');
    const labelPair = pairs.get('label');
    if (!labelPair)
      this.fail(node, 'an arm without a label', 'give every arm a label: (its column in the table)');
    const label = this.str(labelPair, 'label', true) as string;
    let baseline = false;
    const b = pairs.get('baseline');
    if (b) {
      const v = b.value as Node | null;
      if (!isScalar(v) || typeof v.value !== 'boolean')
        this.fail(v ?? b, `baseline must be true or false, got ${describe(v)}`);
      baseline = v.value;
    }
    const own = this.settings(node, pairs, `arm '${label}'`);
    const settings = [...common.filter((c) => !own.some((o) => o.key === c.key)), ...own];
    const arm: PlanArm = { label, baseline, settings, at: this.at(node) };
    const server = pairs.get('server');
    if (server) arm.server = this.server(server);
    const check = pairs.get('check');
    if (check) {
      const v = check.value as Node | null;
      if (!isMap(v)) this.fail(v ?? check, `check must map server variables to values, got ${describe(v)}`);
      arm.check = {};
      for (const p of v.items) {
        const k = isScalar(p.key) ? p.key.value : undefined;
        const val = p.value as Node | null;
        if (typeof k !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(k))
          this.fail(p, `check: a server variable name (letters, digits, _), got ${JSON.stringify(k)}`);
        if (!isScalar(val) || !['string', 'number', 'boolean'].includes(typeof val.value))
          this.fail(val ?? p, `check: ${k} must be a single value, got ${describe(val)}`);
        arm.check[k] = String(val.value);
      }
    }
    return arm;
  }

  private server(p: Pair): PlanServer {
    const v = p.value as Node | null;
    if (!isMap(v)) this.fail(v ?? p, `server must be a mapping (stop:, start:, wait:), got ${describe(v)}`);
    const pairs = this.pairs(v, SERVER_KEYS, 'server:');
    const out: PlanServer = { at: this.at(p) };
    for (const k of ['stop', 'start'] as const) {
      const q = pairs.get(k);
      if (q) out[k] = this.str(q, `server ${k}`, true) as string;
    }
    const w = pairs.get('wait');
    if (w) {
      const val = w.value as Node | null;
      if (!isScalar(val) || typeof val.value !== 'number' || !(val.value > 0))
        this.fail(val ?? w, `server wait must be seconds above 0, got ${describe(val)}`);
      out.wait = val.value;
    }
    if (out.start === undefined && out.stop === undefined)
      this.fail(p, 'server needs a start: or a stop: command');
    return out;
  }
}

function describe(n: Node | null | undefined): string {
  if (n === null || n === undefined) return 'nothing';
  if (isMap(n)) return 'a mapping';
  if (isSeq(n)) return 'a list';
  if (isScalar(n)) return n.value === null ? 'nothing' : `${typeof n.value} ${JSON.stringify(n.value)}`;
  return 'something else';
}

/** Parse and check a plan's text. Positions name `file`. */
export function parsePlanText(
  file: string,
  text: string,
  runOptions: readonly RunOptionSpec[],
  defaultRepeat = PLAN_DEFAULT_REPEAT,
): ExperimentPlan {
  const specs = new Map(runOptions.filter((o) => !PLAN_EXCLUDED.has(o.name)).map((o) => [o.name, o]));
  return new PlanReader(file, text, specs).read(defaultRepeat);
}

/** Read and check a plan file. */
export function readPlan(file: string, runOptions: readonly RunOptionSpec[]): ExperimentPlan {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(
      `cannot read the plan ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (e as Error).message}`,
    );
  }
  return parsePlanText(file, text, runOptions);
}

/** The words of `run`'s command line that an arm's settings stand for. */
export function settingWords(s: PlanSetting): string[] {
  if (s.run && typeof s.value === 'boolean') return s.value ? [`--${s.key}`] : [];
  return [`--${s.key}=${String(s.value)}`];
}

/**
 * What must not change between an experiment and its resumption, per arm: everything that shapes a run
 * (workload, target, settings, server commands, checks). Client counts and repeats may grow: a run is
 * matched by its arm, client count and repeat number.
 */
export function armFingerprint(plan: ExperimentPlan, arm: PlanArm): string {
  const canon = {
    workload: plan.workload,
    target: plan.target ?? null,
    settings: [...arm.settings].map((s) => [s.key, s.value]).sort(([a], [b]) => byName(String(a), String(b))),
    server: arm.server ? { stop: arm.server.stop ?? null, start: arm.server.start ?? null } : null,
    check: arm.check ?? null,
  };
  return createHash('sha256').update(JSON.stringify(canon)).digest('hex').slice(0, 16);
}

/**
 * The order of an experiment's runs: for each repeat every arm in turn, rotated by one per repeat (arm 1
 * first, then arm 2 first …), each arm running all client counts before the next arm, so that drift spreads
 * over every arm alike and a server restarts once per arm and repeat (none where the rotation keeps the
 * same arm on).
 */
export function experimentSchedule(
  arms: number,
  clients: readonly number[],
  repeat: number,
): { arm: number; clients: number; repeat: number }[] {
  const out: { arm: number; clients: number; repeat: number }[] = [];
  for (let r = 1; r <= repeat; r++) {
    for (let k = 0; k < arms; k++) {
      const arm = (r - 1 + k) % arms;
      for (const c of clients) out.push({ arm, clients: c, repeat: r });
    }
  }
  return out;
}

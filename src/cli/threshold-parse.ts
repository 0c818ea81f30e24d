/**
 * `--threshold EXPR` and `capacity --slo EXPR`: `p99<5ms`, `p95{statement=point_selects}<2ms`,
 * `errors<0.1%`, `errors<=10`, `qps>10000`, `tps>=500`, `p99{stage=2}<5ms`. A malformed expression names
 * the column of the first character that does not fit.
 */
import {
  isLatency,
  LATENCY_METRICS,
  type ThresholdMetric,
  type ThresholdSpec,
} from '../analysis/threshold-spec.ts';
import { UsageError } from '../errors.ts';
import { Scanner } from './stages-parse.ts';

const METRICS: readonly string[] = [...LATENCY_METRICS, 'errors', 'qps', 'tps'];
const ALIASES: Record<string, ThresholdMetric> = { 'p99.9': 'p999', avg: 'mean', eps: 'tps' };
const TIME_UNITS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };

export function parseThreshold(option: string, text: string): ThresholdSpec {
  const sc: Scanner = new Scanner(option, text);
  sc.skipSpaces();
  const at = sc.i;
  const name = sc.word();
  if (name === '') sc.fail(`expected a metric: ${METRICS.join(', ')}`);
  const metric = (ALIASES[name] ?? name) as ThresholdMetric;
  if (!METRICS.includes(metric)) sc.fail(`unknown metric '${name}' (${METRICS.join(', ')})`, at);
  const spec: Partial<ThresholdSpec> = { metric };
  sc.skipSpaces();
  if (sc.peek() === '{') {
    sc.i++;
    for (;;) {
      sc.skipSpaces();
      const kAt = sc.i;
      const key = sc.word();
      if (key !== 'statement' && key !== 'stage') {
        sc.fail(
          key === '' ? 'expected statement= or stage=' : `unknown filter '${key}' (statement, stage)`,
          kAt,
        );
      }
      sc.skipSpaces();
      if (sc.peek() !== '=') sc.fail(`expected '=' after ${key}`);
      sc.i++;
      sc.skipSpaces();
      const vAt = sc.i;
      if (key === 'stage') {
        const n = sc.number('a stage number (from 1)');
        if (!Number.isInteger(n) || n < 1) sc.fail('a stage number is a whole number from 1', vAt);
        spec.stage = n;
      } else {
        const m = /^[^,}\s]+/.exec(sc.text.slice(sc.i));
        if (m === null) sc.fail('expected a statement type name');
        sc.i += m[0].length;
        spec.statement = m[0];
      }
      sc.skipSpaces();
      if (sc.peek() === ',') {
        sc.i++;
        continue;
      }
      if (sc.peek() !== '}') sc.fail("expected ',' or '}'");
      sc.i++;
      break;
    }
    sc.skipSpaces();
  }
  const opAt = sc.i;
  const op = /^(<=|>=|<|>)/.exec(sc.text.slice(sc.i))?.[0];
  if (op === undefined) sc.fail('expected a comparison: <, <=, > or >=', opAt);
  sc.i += op.length;
  spec.op = op as ThresholdSpec['op'];
  sc.skipSpaces();
  const value = sc.number('a number');
  const uAt = sc.i;
  let unit = '';
  if (sc.peek() === '%') {
    sc.i++;
    unit = '%';
  } else if (sc.text.slice(sc.i, sc.i + 2) === '/s') {
    sc.i += 2;
    unit = '/s';
  } else unit = sc.word();
  if (isLatency(metric)) {
    const f = TIME_UNITS[unit];
    if (f === undefined) {
      sc.fail(
        unit === '' ? 'a latency needs a unit: us, ms or s' : `unknown unit '${unit}' (us, ms, s)`,
        uAt,
      );
    }
    spec.limit = value * f;
    spec.unit = 'ms';
  } else if (metric === 'errors') {
    if (unit !== '' && unit !== '%') sc.fail(`errors take a count or a percentage (%), not '${unit}'`, uAt);
    spec.limit = value;
    spec.unit = unit === '%' ? '%' : 'count';
  } else {
    if (unit !== '' && unit !== '/s')
      sc.fail(`${metric} is per second: a plain number (or N/s), not '${unit}'`, uAt);
    spec.limit = value;
    spec.unit = '/s';
    if (metric === 'tps' && spec.statement !== undefined) {
      throw new UsageError(
        `${option} '${text}': tps counts events, not statements`,
        `use qps{statement=${spec.statement}} for a statement type's rate`,
      );
    }
  }
  sc.skipSpaces();
  if (!sc.done) sc.fail('unexpected text after the threshold');
  spec.expr = text.replace(/\s+/g, '');
  return spec as ThresholdSpec;
}

/**
 * The public API for workload modules: `import { defineWorkload } from 'dbsmack'`.
 *
 * The built-in sysbench workloads (workload/sysbench/) import from here on purpose, as a user's module would:
 * they prove the public API enough to write sysbench's OLTP workloads. That is the one import in the house
 * that runs from a layer up to this face of it.
 */

export { DbError } from './driver/errors.ts';
export type { Connection, DriverName, PreparedStatement, Row, Target } from './driver/types.ts';
export { UsageError } from './errors.ts';
export type { StatementKind } from './metrics/kinds.ts';
export type { RunResult } from './metrics/run-result.ts';
export { seededRandom } from './seeded-random.ts';
export { defineWorkload, oneStatement, statementSequence } from './workload/define.ts';
export {
  C_TEMPLATE,
  DISTRIBUTIONS,
  type Distribution,
  type DistributionOptions,
  type DistributionType,
  distribution,
  distributionFromOptions,
  PAD_TEMPLATE,
  randOptions,
  randomString,
  uniqueSequence,
} from './workload/distributions.ts';
export type {
  AdhocQuery,
  AdminContext,
  ClientContext,
  ClientHandler,
  ErrorAction,
  OptionSpec,
  ParamType,
  Random,
  SingleStatement,
  Statement,
  StatementOptions,
  Workload,
} from './workload/types.ts';

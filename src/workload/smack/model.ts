/**
 * What a smack file means once compiled: its queries, dictionaries, clients and tables, and for each client
 * type that `main` starts, the actions of its report process and of each of its threads. Plain data plus a
 * few closures for `print` values; `workload.ts` turns it into a dbsmack `Workload`.
 */
import type { Pos } from './ast.ts';
import type { DictionaryDef } from './dictionary.ts';
import type { TemplatePart } from './template.ts';

export interface QueryDef {
  name: string;
  pos: Pos;
  sql: string;
  /** The report group; defaults to the query's name when empty. */
  type: string;
  hasResultSet: boolean;
  parsed: boolean;
  /** The compiled `$name` template of a parsed query. */
  parts: TemplatePart[] | undefined;
}

export type BarrelAction = { kind: 'query'; query: QueryDef; count: number } | { kind: 'sleep'; ms: number };

export interface ClientDef {
  name: string;
  pos: Pos;
  user: string;
  pass: string;
  host: string;
  db: string;
  port: string;
  socket: string;
  barrel: BarrelAction[];
}

export interface TableDef {
  name: string;
  pos: Pos;
  client: ClientDef;
  create: string | undefined;
  minRows: number;
  dataFile: string | undefined;
  dataFilePos: Pos | undefined;
  genDataFile: string | undefined;
  genDataFilePos: Pos | undefined;
}

/** The statistics `client::stat` and `client::type::stat` read, known once the run is over. */
export type StatLookup = (client: string, type: string | undefined, stat: string) => number;

/** A value of `main`: text known now, or text computed from the run's statistics. */
export type Value = string | ((stats: StatLookup) => string);

/** A step a client thread (or the report process) takes outside the query barrel. */
export type Action =
  | { kind: 'query'; sql: string; pos: Pos }
  | { kind: 'sleep'; ms: number }
  | { kind: 'save'; query: QueryDef; file: string; pos: Pos };

/** `unload_query_barrel()` with the rounds set at that point, and what runs just before it. */
export interface Segment {
  rounds: number;
  before: Action[];
}

export interface PrintLine {
  value: Value;
  /** How many times it prints (once per thread for a print between create_threads and collect_threads). */
  times: number;
  /** Before or after the group's Query Barrel Report. */
  where: 'before' | 'after';
}

/** One client type started by `main`: `threads` clients running its barrel. */
export interface Group {
  client: ClientDef;
  threads: number;
  /** First client id of the group; ids start..start+threads-1 belong to it. */
  start: number;
  /** Report process only, before the threads start. */
  before: Action[];
  /** Each thread: set-up actions, then the segments (rounds of the barrel with actions between). */
  threadSetup: Action[];
  segments: Segment[];
  /** Each thread, after its last round. */
  threadEnd: Action[];
  /** Report process only, after every thread has finished. */
  after: Action[];
  rounds: number;
  prints: PrintLine[];
  /** Statement type names as recorded (prefixed with the client name when several groups run). */
  typeNames: Map<string, string>;
}

export interface SmackModel {
  file: string;
  queries: Map<string, QueryDef>;
  dictionaries: Map<string, DictionaryDef>;
  clients: Map<string, ClientDef>;
  tables: TableDef[];
  groups: Group[];
  /** Dictionaries the queries of the groups use. */
  usedDictionaries: Set<string>;
}

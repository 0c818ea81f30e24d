/**
 * The history of runs and sweeps: one SQLite file (better-sqlite3), one table of records. A record is a
 * run or a sweep; a sweep's runs are records of their own pointing at it, so `show ID` and `compare ID`
 * work on either. The full documents are stored as JSON; the columns are what `history` lists and filters.
 *
 * Safety: the schema version lives in a `meta` table; a file from a newer dbsmack is refused before
 * anything is written, a file that is not a dbsmack history is refused, and every write is one
 * transaction (WAL mode), so a crash or Ctrl-C leaves the history as it was before or after the write.
 * Readers (`history`, `show`, `compare`, `report`) open it read-only: they never create the file nor write
 * the tables into an empty one.
 */
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { SweepResult, SweepRun } from '../analysis/types.ts';
import type { RunResult } from '../metrics/run-result.ts';

/**
 * better-sqlite3, loaded when a history is first opened: a run with `--no-history` (bench/peers' runs) never
 * loads it, which cost the CLI's start about 7 ms of module resolution and loading (`--cpu-prof`).
 */
let sqliteModule: typeof Database | undefined;
function sqlite(): typeof Database {
  sqliteModule ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return sqliteModule;
}

/** Version of the tables below. Raise it with a migration when they change. */
export const HISTORY_SCHEMA_VERSION = 1;

/** A history that cannot be used: newer schema, not a history, unreadable. The CLI maps it to exit 2. */
export class HistoryError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

export type RecordKind = 'run' | 'sweep';

/** One line of `dbsmack history`. */
export interface HistoryEntry {
  id: number;
  kind: RecordKind;
  sweep_id: number | null;
  label: string | null;
  workload: string;
  driver: string;
  url: string;
  server_version: string;
  /** Run: its client count; sweep: the list, e.g. "1,2,4". */
  clients: string;
  repeat: number | null;
  status: string;
  qps: number | null;
  p95_ms: number | null;
  started_at: string;
  recorded_at: string;
  host: string;
}

export interface ListFilter {
  label?: string;
  workload?: string;
  kind?: RecordKind;
  /** Include the runs that belong to sweeps (hidden by default: the sweep stands for them). */
  sweepRuns?: boolean;
  limit?: number;
}

const DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'sweep')),
  sweep_id INTEGER REFERENCES records(id),
  label TEXT,
  workload TEXT NOT NULL,
  driver TEXT NOT NULL,
  url TEXT NOT NULL,
  server_version TEXT NOT NULL,
  clients TEXT NOT NULL,
  repeat INTEGER,
  status TEXT NOT NULL,
  qps REAL,
  p95_ms REAL,
  started_at TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  host TEXT NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_label ON records(label, id);
CREATE INDEX IF NOT EXISTS records_sweep ON records(sweep_id, id);
`;

const COLUMNS =
  'id, kind, sweep_id, label, workload, driver, url, server_version, clients, repeat, status, qps, p95_ms, started_at, recorded_at, host';

export class History {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly readonly: boolean;
  /** A reader's file that has no tables yet (an empty file): every list is empty. */
  private empty = false;

  private constructor(file: string, db: Database.Database, readonly: boolean) {
    this.path = file;
    this.db = db;
    this.readonly = readonly;
  }

  /**
   * Open the history: writers (`create: true`) create it, with its directory, and its tables; readers
   * (`create: false`) open it read-only, so that listing never writes: they get a clear error when there is
   * none yet (and no file is left behind), and an empty file reads as an empty history.
   */
  static open(file: string, opts: { create: boolean }): History {
    const exists = existsSync(file);
    if (!exists && !opts.create) {
      throw new HistoryError(
        `no history at ${file} yet`,
        'run `dbsmack run` or `dbsmack sweep` first, or point --history at one',
      );
    }
    if (exists && statSync(file).isDirectory()) {
      throw new HistoryError(`the history ${file} is a directory`, 'point --history at a file');
    }
    if (!exists) mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    let db: Database.Database;
    try {
      db = new (sqlite())(file, { fileMustExist: exists, readonly: !opts.create });
      db.pragma('busy_timeout = 10000');
    } catch (e) {
      throw new HistoryError(`cannot open the history ${file}: ${(e as Error).message}`);
    }
    const h = new History(file, db, !opts.create);
    try {
      h.init(exists);
    } catch (e) {
      db.close();
      throw e;
    }
    if (!exists) {
      try {
        chmodSync(file, 0o600); // it names hosts, users and databases
      } catch {
        // not ours to fix (another user's file system); the history still works
      }
    }
    return h;
  }

  private init(existed: boolean): void {
    let tables: string[];
    try {
      tables = (
        this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
      ).map((t) => t.name);
    } catch (e) {
      throw new HistoryError(
        `${this.path} is not a dbsmack history (${(e as Error).message})`,
        'point --history at another file',
      );
    }
    if (existed && tables.length > 0 && !tables.includes('meta')) {
      throw new HistoryError(
        `${this.path} is an SQLite database but not a dbsmack history; it was left untouched`,
        'point --history at another file',
      );
    }
    if (tables.includes('meta')) {
      const row = this.db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
        | { value: string }
        | undefined;
      const v = Number(row?.value);
      if (!Number.isInteger(v))
        throw new HistoryError(`${this.path} has no valid schema version; it was left untouched`);
      if (v > HISTORY_SCHEMA_VERSION) {
        throw new HistoryError(
          `the history ${this.path} was written by a newer dbsmack (schema ${v}; this one knows up to ${HISTORY_SCHEMA_VERSION}); it was left untouched`,
          'upgrade dbsmack, or use another history file with --history PATH',
        );
      }
      return;
    }
    if (this.readonly) {
      // nothing recorded yet: a reader neither writes the tables nor needs them
      this.empty = true;
      return;
    }
    this.db.pragma('journal_mode = WAL');
    this.db.transaction(() => {
      this.db.exec(DDL);
      this.db
        .prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)")
        .run(String(HISTORY_SCHEMA_VERSION));
    })();
  }

  close(): void {
    this.db.close();
  }

  private insert(
    kind: RecordKind,
    sweepId: number | null,
    doc: RunResult | SweepResult,
    row: Omit<HistoryEntry, 'id' | 'kind' | 'sweep_id' | 'recorded_at'>,
  ): number {
    const info = this.db
      .prepare(
        `INSERT INTO records (kind, sweep_id, label, workload, driver, url, server_version, clients, repeat, status, qps, p95_ms, started_at, recorded_at, host, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        kind,
        sweepId,
        row.label,
        row.workload,
        row.driver,
        row.url,
        row.server_version,
        row.clients,
        row.repeat,
        row.status,
        row.qps,
        row.p95_ms,
        row.started_at,
        new Date().toISOString(),
        row.host,
        JSON.stringify(doc),
      );
    return Number(info.lastInsertRowid);
  }

  /** Store one run (standalone, or of a sweep with its repeat number); returns its id. */
  addRun(r: RunResult, sweep?: { id: number; repeat: number }): number {
    return this.db.transaction(() =>
      this.insert('run', sweep?.id ?? null, r, {
        label: r.label ?? null,
        workload: r.workload.name,
        driver: r.target.driver,
        url: r.target.url,
        server_version: r.server?.version ?? r.target.server_version,
        clients: String(r.clients),
        repeat: sweep?.repeat ?? null,
        status: r.status,
        qps: r.totals.qps,
        p95_ms: r.events.latency_ms.p95,
        started_at: r.started_at,
        host: r.env.host,
      }),
    )();
  }

  /** Runs are stored on their own; the sweep's document keeps their ids instead of a second copy. */
  private static slim(s: SweepResult): unknown {
    return {
      ...s,
      points: s.points.map((p) => ({ ...p, runs: p.runs.map(({ result: _r, ...rest }) => rest) })),
    };
  }

  private sweepRow(s: SweepResult): Omit<HistoryEntry, 'id' | 'kind' | 'sweep_id' | 'recorded_at'> {
    const best = s.points.reduce((m, p) => Math.max(m, p.qps.median), 0);
    return {
      label: s.label,
      workload: s.workload.name,
      driver: s.target.driver,
      url: s.target.url,
      server_version: s.target.server_version,
      clients: (s.clients ?? s.points.map((p) => p.clients)).join(','),
      repeat: s.repeat,
      status: s.status,
      qps: s.points.length > 0 ? best : null,
      p95_ms: null,
      started_at: s.started_at,
      host: s.env.host,
    };
  }

  /**
   * Store a sweep with the run that just finished, in one transaction: the first call inserts the sweep
   * (pass `sweepId` undefined), later calls update it. Returns the sweep id and the run id.
   */
  addSweepRun(
    sweepId: number | undefined,
    s: SweepResult,
    run: RunResult,
    repeat: number,
  ): { sweepId: number; runId: number } {
    return this.db.transaction(() => {
      let id = sweepId;
      if (id === undefined) id = this.insert('sweep', null, History.slim(s) as SweepResult, this.sweepRow(s));
      const runId = this.addRun(run, { id, repeat });
      const found = s.points.flatMap((p) => p.runs).find((r) => r.result === run);
      if (found) found.id = runId;
      this.updateSweep(id, s);
      return { sweepId: id, runId };
    })();
  }

  /** Rewrite a stored sweep's document and columns (after a run, or when it ends). */
  updateSweep(id: number, s: SweepResult): void {
    const r = this.sweepRow(s);
    this.db
      .prepare('UPDATE records SET status = ?, qps = ?, clients = ?, doc = ? WHERE id = ? AND kind = ?')
      .run(r.status, r.qps, r.clients, JSON.stringify(History.slim(s)), id, 'sweep');
  }

  list(f: ListFilter = {}): HistoryEntry[] {
    if (this.empty) return [];
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.label !== undefined) {
      where.push('label = ?');
      args.push(f.label);
    }
    if (f.workload !== undefined) {
      where.push('workload = ?');
      args.push(f.workload);
    }
    if (f.kind !== undefined) {
      where.push('kind = ?');
      args.push(f.kind);
    }
    if (!f.sweepRuns) where.push('sweep_id IS NULL');
    const sql = `SELECT ${COLUMNS} FROM records ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    args.push(f.limit ?? -1);
    return this.db.prepare(sql).all(...args) as HistoryEntry[];
  }

  entry(id: number): HistoryEntry | undefined {
    if (this.empty) return undefined;
    return this.db.prepare(`SELECT ${COLUMNS} FROM records WHERE id = ?`).get(id) as HistoryEntry | undefined;
  }

  /** A stored run's RunResult. */
  run(id: number): RunResult | undefined {
    if (this.empty) return undefined;
    const row = this.db.prepare("SELECT doc FROM records WHERE id = ? AND kind = 'run'").get(id) as
      | { doc: string }
      | undefined;
    return row ? (JSON.parse(row.doc) as RunResult) : undefined;
  }

  /** A stored sweep, with its runs' full results put back. */
  sweep(id: number): SweepResult | undefined {
    if (this.empty) return undefined;
    const row = this.db.prepare("SELECT doc FROM records WHERE id = ? AND kind = 'sweep'").get(id) as
      | { doc: string }
      | undefined;
    if (!row) return undefined;
    const s = JSON.parse(row.doc) as SweepResult;
    const runs = new Map(
      (
        this.db.prepare("SELECT id, doc FROM records WHERE sweep_id = ? AND kind = 'run'").all(id) as {
          id: number;
          doc: string;
        }[]
      ).map((r) => [r.id, r.doc]),
    );
    for (const p of s.points) {
      p.runs = p.runs.flatMap((r: SweepRun) => {
        const doc = r.id !== undefined ? runs.get(r.id) : undefined;
        return doc ? [{ ...r, result: JSON.parse(doc) as RunResult }] : [];
      });
    }
    return s;
  }

  /** Id of the newest sweep with this label. */
  latestSweepWithLabel(label: string): number | undefined {
    if (this.empty) return undefined;
    const row = this.db
      .prepare("SELECT id FROM records WHERE kind = 'sweep' AND label = ? ORDER BY id DESC LIMIT 1")
      .get(label) as { id: number } | undefined;
    return row?.id;
  }

  /**
   * The arms of the experiment `name` (`dbsmack experiment`): the newest sweep of each label `NAME/ARM`
   * whose document says it is an arm of that experiment, the baseline first.
   */
  experimentSweeps(name: string): { id: number; doc: SweepResult }[] {
    if (this.empty) return [];
    const rows = this.db
      .prepare(
        "SELECT id, label FROM records WHERE kind = 'sweep' AND substr(label, 1, ?) = ? ORDER BY id DESC",
      )
      .all(name.length + 1, `${name}/`) as { id: number; label: string }[];
    const seen = new Set<string>();
    const out: { id: number; doc: SweepResult }[] = [];
    for (const r of rows) {
      if (seen.has(r.label)) continue;
      seen.add(r.label);
      const doc = this.sweep(r.id);
      if (doc?.experiment?.name === name) out.push({ id: r.id, doc });
    }
    return out.sort(
      (a, b) => Number(b.doc.experiment?.baseline) - Number(a.doc.experiment?.baseline) || a.id - b.id,
    );
  }

  /** Every standalone run with this label, oldest first. */
  runsWithLabel(label: string): RunResult[] {
    if (this.empty) return [];
    return (
      this.db
        .prepare("SELECT doc FROM records WHERE kind = 'run' AND sweep_id IS NULL AND label = ? ORDER BY id")
        .all(label) as {
        doc: string;
      }[]
    ).map((r) => JSON.parse(r.doc) as RunResult);
  }

  /** Labels in the history (for the hint when one is not found). */
  labels(limit = 10): string[] {
    if (this.empty) return [];
    return (
      this.db
        .prepare(
          'SELECT label FROM records WHERE label IS NOT NULL GROUP BY label ORDER BY MAX(id) DESC LIMIT ?',
        )
        .all(limit) as {
        label: string;
      }[]
    ).map((r) => r.label);
  }
}

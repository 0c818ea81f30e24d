/** The real pgbench (PostgreSQL 15 here), as the reference the pgbench scripts are checked against. */
import { spawn, spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import type { Target } from '../../src/driver/types.ts';

export function pgbenchAvailable(): string | undefined {
  const r = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Skip (or fail under CI=true) when pgbench is not installed. */
export function needPgbench(t: TestContext): boolean {
  if (pgbenchAvailable()) return true;
  const why = 'pgbench is not installed (Debian: apt-get install postgresql-15, which ships it)';
  if (process.env.CI === 'true') throw new Error(`CI=true and ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped: ${why}\n`);
  return false;
}

/** libpq's environment for a target (no password: the test servers trust). */
export function pgEnv(target: Target): NodeJS.ProcessEnv {
  return {
    PGHOST: target.socket ?? target.host ?? '127.0.0.1',
    PGPORT: String(target.port ?? 5432),
    PGUSER: target.user ?? 'root',
    PGDATABASE: target.database ?? 'test',
    ...(target.password ? { PGPASSWORD: target.password } : {}),
  };
}

export interface PgbenchOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runPgbench(target: Target, args: string[], timeoutMs = 120_000): Promise<PgbenchOutput> {
  return new Promise((resolve) => {
    const child = spawn('pgbench', args, { env: { ...process.env, ...pgEnv(target) }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A report's lines with every number replaced by `#` and runs of blanks by one, to compare the layouts of
 * runs whose figures (and so the widths of padded columns) differ. The statement lines keep their shape:
 * leading blanks, then the figures, two blanks, the command.
 */
export function layout(report: string): string[] {
  return report
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('pgbench ('))
    .map((l) => l.replace(/-?\d+(\.\d+)?|NaN/g, '#').replace(/ +/g, ' '));
}

/** The value after `label` in a pgbench report (`number of transactions actually processed: 21/21` → `21/21`). */
export function reportValue(report: string, label: string): string | undefined {
  const line = report.split('\n').find((l) => l.startsWith(label));
  return line?.slice(label.length).trim();
}

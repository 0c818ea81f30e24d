import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { EnvInfo } from '../metrics/run-result.ts';
import { VERSION } from '../version.ts';

function osName(): string {
  try {
    const rel = readFileSync('/etc/os-release', 'utf8');
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(rel);
    if (m?.[1]) return m[1];
  } catch {
    // not Linux, or no os-release
  }
  return `${os.type()} ${os.release()}`;
}

/** What the client ran on: recorded in every RunResult so that runs on different machines are told apart. */
export function captureEnv(): EnvInfo {
  const cpus = os.cpus();
  return {
    host: os.hostname(),
    os: osName(),
    kernel: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    cpu_count: os.availableParallelism?.() ?? cpus.length,
    memory_gb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    dbsmack: VERSION,
  };
}

import { readFileSync } from 'node:fs';

/**
 * The package version, read from the package.json beside src/ or dist/ (this file is src/version.ts,
 * dist/version.js, or part of a chunk in dist/bundle/, one level further down).
 */
export const VERSION: string = (() => {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version: string;
      };
      if (pkg.name === 'dbsmack') return pkg.version;
    } catch {
      // not there: the next
    }
  }
  return '0.0.0';
})();

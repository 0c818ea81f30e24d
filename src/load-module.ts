/**
 * Every `import()` of a package or a file in dbsmack goes through `loadModule`. Why: the CLI and the load
 * workers run from CommonJS bundles that are compiled through V8's code cache (scripts/bundle.js,
 * src/code-cache.ts), and on Node.js 20 an `import()` in code that came from that cache throws (the
 * script's dynamic-import hook is not restored with it). This module stays out of the bundles: Node.js's own
 * loader compiles it, and its `import()` works. A relative specifier would resolve against this file, so
 * callers pass package names or absolute file URLs. It imports nothing, as the ground floor does.
 */
export function loadModule<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}

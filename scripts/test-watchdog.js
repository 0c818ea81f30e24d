// Loaded into every test file's process by scripts/run-tests.js (`--import`): a test that runs longer than
// DBSMACK_TEST_TIMEOUT seconds ends its file's process with a failure that names it. node 20's test runner
// has no per-test default timeout (its --test-timeout bounds a whole file and then reports no test by name),
// and one wait that never ends must not hold CI until its own limit. A timed-out test ends its file: the
// tests after it in the same file do not run, and the runner reports the file as failed.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach } from 'node:test';

const limitS = Number(process.env.DBSMACK_TEST_TIMEOUT ?? 300);
const timers = new Map();

/** SIGKILL the processes this one started (a CLI run, a sleeper), so that none outlives the test file. */
function killChildren() {
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      for (const pid of readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  } catch {
    // no /proc: nothing more to do than exit
  }
}

// Only in the processes that run test files (the runner sets NODE_TEST_CONTEXT for them).
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  beforeEach((t) => {
    const timer = setTimeout(() => {
      process.stderr.write(
        `\n# test '${t.fullName ?? t.name}' did not finish within ${limitS} s (DBSMACK_TEST_TIMEOUT): ending ${process.argv[1]}\n`,
      );
      killChildren();
      process.exit(124);
    }, limitS * 1000);
    timer.unref();
    timers.set(t, timer);
  });
  afterEach((t) => {
    clearTimeout(timers.get(t));
    timers.delete(t);
  });
}

/** Shared assertions of the driver tests. */
import assert from 'node:assert/strict';
import { DbError } from '../../src/driver/errors.ts';

/** Await `p`, expect it to reject with a DbError of `kind` and one of `codes`; returns that error. */
export async function expectError(
  p: Promise<unknown>,
  kind: DbError['kind'],
  codes: string[],
): Promise<DbError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DbError, `expected a DbError, got ${String(e)}`);
    assert.equal(e.kind, kind, `${e.code}: ${e.message}`);
    assert.ok(codes.includes(e.code), `code ${e.code} not in ${codes.join(',')}: ${e.message}`);
    return e;
  }
  assert.fail('expected an error');
}

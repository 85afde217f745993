import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HTTP_STATUS, HTTP_STATUS_OF_CODE, httpStatusOf } from '../../cli/service/http-io.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';

const SERVICE_MD = fileURLToPath(new URL('../../../docs/service.md', import.meta.url));

/** The rows of docs/service.md's "HTTP statuses" table: each status with the codes named in its second column. */
function documentedStatuses(text: string): Array<{ status: number; codes: string[]; line: string }> {
  const section = text.split('\n### HTTP statuses\n')[1];
  assert.ok(section, 'docs/service.md has a "### HTTP statuses" section');
  const rows: Array<{ status: number; codes: string[]; line: string }> = [];
  for (const line of section.split('\n')) {
    const match = /^\| (\d{3}) \| ([^|]+) \|/.exec(line);
    if (match)
      rows.push({ status: Number(match[1]), codes: [...match[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!), line });
    else if (rows.length > 0 && !line.startsWith('|')) break;
  }
  return rows;
}

describe('docs/service.md#http-statuses is the control API’s status table', () => {
  const rows = documentedStatuses(readFileSync(SERVICE_MD, 'utf8'));

  it('names each code once, with the status HTTP_STATUS_OF_CODE gives it, and every code of the map', () => {
    const documented = new Map<string, number>();
    for (const { status, codes } of rows)
      for (const code of codes) {
        assert.equal(documented.has(code), false, `${code} is in two rows`);
        documented.set(code, status);
      }
    assert.deepEqual(
      Object.fromEntries([...documented].sort()),
      Object.fromEntries(Object.entries(HTTP_STATUS_OF_CODE).sort()),
    );
  });

  it('the row for every other code is the default status, and each code it names is in the error table', () => {
    const other = rows.filter((row) => /every other code/.test(row.line));
    assert.deepEqual(
      other.map((row) => row.status),
      [DEFAULT_HTTP_STATUS],
    );
    assert.equal(httpStatusOf('invalid_transition'), DEFAULT_HTTP_STATUS);
    for (const { codes } of rows)
      for (const code of codes) assert.ok(DOCUMENTED_CODES.has(code), `${code} is not in docs/errors.md`);
  });

  it('storage_failed and lease_lost are 503 (retry), task_elsewhere 409, task_not_found 404', () => {
    assert.deepEqual(
      ['storage_failed', 'lease_lost', 'task_elsewhere', 'task_not_found'].map(httpStatusOf),
      [503, 503, 409, 404],
    );
  });
});

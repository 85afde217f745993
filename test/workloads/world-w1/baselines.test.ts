import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BASELINE_FAULTS,
  BASELINE_VARIANTS,
  OPERATIONS,
  runBaseline,
  runBaselines,
  W1ResultRow,
} from '../../../workloads/world-w1/baselines/index.js';
import {
  Operation,
  performCounts,
  readProviderRecords,
  startProvider,
  type ProviderProcess,
} from '../../../workloads/world-w1/provider/index.js';
import { stoppedAfter } from '../../support/stopped-after.js';
import { tempDir } from '../../support/temp.js';

// The three baselines over every (operation, fault) against one real provider process; each row's
// performs is read from the records file, and checked here against the file once more.

const provider = stoppedAfter((): Promise<ProviderProcess> =>
  startProvider({ dir: tempDir('ordivon-w1-baselines-'), identity: 'key-one', retentionMs: 60_000 }),
);

/** What each baseline does to one effect, by the provider's contract (docs/world-w1.md, "The comparison"). */
function expectedPerforms(variant: string, operation: string, fault: string): number {
  if (fault === 'none' || fault === 'identity-changed' || fault === 'target-changed') return 1;
  // A client that died and starts over remembers nothing: only a key derived from the job (b) holds.
  if (fault === 'host-sigkill') return variant === 'b-key' && operation === 'orders' ? 1 : 2;
  if (variant === 'a-retry') return 2; // a fresh request after every lost answer
  if (operation !== 'orders') return 2; // no key honoured, no lookup of a lost answer
  return fault === 'lookup-expired' ? 2 : 1; // the key (b) or the lookup (c) holds within its window
}

describe('World W1 baselines (a) retry, (b) key only, (c) lookup only', () => {
  it('run every (variant, operation, fault): duplicates exactly where the provider cannot deduplicate or answer a lookup', async () => {
    const p = await provider();
    const rows = await runBaselines({ provider: p, timeoutMs: 300 });
    assert.equal(rows.length, BASELINE_VARIANTS.length * OPERATIONS.length * BASELINE_FAULTS.length);
    for (const row of rows) W1ResultRow.parse(row);
    const counts = performCounts(readProviderRecords(p.dir));
    const seen = rows.map((r) => [
      r.variant,
      r.operation,
      r.fault,
      r.performs,
      r.unsafeRedispatches,
      r.staleEvidenceUsed,
    ]);
    const expected = rows.map((r) => {
      const performs = expectedPerforms(r.variant, r.operation, r.fault);
      const stale = r.fault === 'identity-changed' || r.fault === 'target-changed' ? 1 : 0;
      return [r.variant, r.operation, r.fault, performs, performs - 1, stale];
    });
    assert.deepEqual(seen, expected);
    for (const row of rows) {
      assert.equal(
        row.performs,
        counts[Operation.parse(row.operation)][`${row.variant}.${row.operation}.${row.fault}`],
        'read from the file',
      );
      assert.deepEqual(
        [
          row.outcome,
          row.duplicateEffects,
          row.lostEffects,
          row.falseSuccess,
          row.falseFailure,
          row.operatorInterventions,
        ],
        ['succeeded', row.performs - 1, 0, 0, 0, 0],
        `${row.variant} ${row.operation} ${row.fault}`,
      );
    }
  });

  it('(a) on commit-then-drop for messages: two performs, one unsafe redispatch, and the client believes it succeeded once', async () => {
    const p = await provider();
    const row = await runBaseline({ provider: p, timeoutMs: 300 }, 'a-retry', 'messages', 'commit-then-drop');
    assert.deepEqual(
      [row.outcome, row.sends, row.performs, row.duplicateEffects, row.unsafeRedispatches],
      ['succeeded', 2, 2, 1, 1],
    );
    assert.deepEqual(performCounts(readProviderRecords(p.dir)).messages, { 'a-retry.messages.commit-then-drop': 2 });
  });

  it('a client that gives up after its only send reports failed although the provider performed it (a false failure)', async () => {
    const p = await provider();
    const row = await runBaseline(
      { provider: p, timeoutMs: 300, maxSends: 1 },
      'a-retry',
      'orders',
      'commit-then-drop',
    );
    assert.deepEqual([row.outcome, row.performs, row.falseFailure], ['failed', 1, 1]);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { checkLmdbPages, PAGE_ROLE, type PageMap } from '../../store/index.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { tempDir } from '../support/temp.js';
import { buildFlipRoot } from './flip-root.js';
import { FLIP_KINDS, planFlips, runFlips, type Flip } from './flip-plan.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const SEED = 44;
const FLIPS = 1_000;
let pristine: string;
let map: PageMap;
let bytes: Buffer;

before(async () => {
  pristine = join(tempDir(), 'pristine');
  await buildFlipRoot(pristine);
  bytes = readFileSync(join(pristine, 'lmdb', 'data.mdb'));
  const check = checkLmdbPages(join(pristine, 'lmdb', 'data.mdb'), { map: (m) => (map = m) });
  assert.equal(check.kind, 'sound', JSON.stringify(check));
});

/** A fresh directory for each flip worker. */
function workDir(): (n: number) => string {
  const base = tempDir();
  return (n) => {
    const dir = join(base, String(n));
    mkdirSync(dir);
    return dir;
  };
}

/**
 * The named case: the first leaf page of the file with the high byte of its first node offset
 * XORed with 0xe0, which puts that node about 60 kB past its page, into other pages' bytes.
 */
function nodeOffPage(): Flip {
  const page = map.roles.indexOf(PAGE_ROLE.leaf);
  return { i: 0, kind: 'leaf', page, offset: page * map.pageSize + 24 + 1, mask: 0xe0 };
}

/** The CLI in a child process, `--json`: its signal, exit status and error code. */
function cli(args: string[]): { signal: NodeJS.Signals | null; status: number | null; code?: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--json'], { encoding: 'utf8' });
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  let code: string | undefined;
  try {
    code = (JSON.parse(last) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { signal: r.signal, status: r.status, ...(code ? { code } : {}), stderr: r.stderr };
}

describe('a damaged lmdb/data.mdb never crashes its reader', () => {
  it('the built root has every page kind the flips aim at', () => {
    const count = (role: number) => map.roles.filter((r) => r === role).length;
    for (const [kind, role] of [
      ['meta', PAGE_ROLE.meta],
      ['branch', PAGE_ROLE.branch],
      ['leaf', PAGE_ROLE.leaf],
      ['overflow', PAGE_ROLE.overflow],
      ['free-list', PAGE_ROLE.freeList],
    ] as const)
      assert.ok(count(role) > 0, `no ${kind} page`);
  });

  // Found by flipping bytes with the store's reads before the page check (flip-worker.ts, raw):
  // a leaf whose node offset points off its page dies of SIGSEGV (or SIGABRT on LMDB's assertion).
  it('a leaf node offset pointing off its page kills a raw LMDB reader with a signal, and is storage_corrupt for doctor, boot and serve', async () => {
    const flip = nodeOffPage();
    const page = flip.page;
    const [raw] = await runFlips([flip], { pristine, work: workDir(), workers: 1, raw: true });
    assert.ok(raw!.signal, `the raw reader survived: ${JSON.stringify(raw)}`);

    const [checked] = await runFlips([flip], { pristine, work: workDir(), workers: 1 });
    assert.deepEqual(
      [checked!.signal, checked!.doctor, checked!.boot],
      [undefined, ['storage_corrupt'], ['storage_corrupt']],
    );
    assert.equal(checked!.page, `leaf ${page}`);

    // The same damage through the CLI: doctor's report and serve's refusal, each exit 1.
    const state = join(tempDir(), 'state');
    cpSync(pristine, state, { recursive: true });
    const fd = openSync(join(state, 'lmdb', 'data.mdb'), 'r+');
    writeSync(fd, Buffer.from([bytes[flip.offset]! ^ flip.mask]), 0, 1, flip.offset);
    closeSync(fd);
    const doctor = spawnSync(process.execPath, [CLI, 'doctor', '--state', state, '--json'], { encoding: 'utf8' });
    assert.deepEqual([doctor.signal, doctor.status], [null, 1], doctor.stderr);
    const report = JSON.parse(doctor.stderr.trim().split('\n').at(-1)!).error;
    assert.equal(report.code, 'storage_corrupt');
    assert.equal(report.healthy, false);
    assert.deepEqual([report.findings[0].page.number, report.findings[0].page.kind], [page, 'leaf']);
    assert.equal(report.findings[0].object, 'lmdb/data.mdb');
    assert.match(report.findings[0].message, /ordivon restore/);

    const error = await createSupervisor({ state })
      .start()
      .then(
        () => assert.fail('boot succeeded on a damaged data file'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof HostError, String(error));
    assert.equal(error.code, 'storage_corrupt');
    assert.deepEqual(error.findings, report.findings);

    const serve = spawnSync(process.execPath, [CLI, 'serve', '--state', state, '--port', '0', '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.deepEqual([serve.signal, serve.status], [null, 1], serve.stderr);
    assert.equal(JSON.parse(serve.stderr.trim().split('\n').at(-1)!).error.code, 'storage_corrupt');

    // backup reads the source, restore the backup, both before lmdb maps them.
    const backup = cli(['backup', join(tempDir(), 'backup'), '--state', state]);
    assert.deepEqual([backup.signal, backup.status, backup.code], [null, 1, 'storage_corrupt'], backup.stderr);
    const damagedBackup = join(tempDir(), 'damaged-backup');
    cpSync(state, damagedBackup, { recursive: true });
    writeFileSync(join(damagedBackup, 'backup.json'), '{"backup":"ordivon-state"}\n');
    const restore = cli(['restore', damagedBackup, '--state', join(tempDir(), 'restored')]);
    assert.deepEqual([restore.signal, restore.status, restore.code], [null, 1, 'storage_corrupt'], restore.stderr);
  });

  it(`${FLIPS} seeded single-byte flips in every page kind: no reader dies of a signal, each is clean or a documented code, doctor and boot agree`, async (t) => {
    const flips = planFlips(map, bytes, SEED, FLIPS);
    const started = performance.now();
    const outcomes = await runFlips(flips, { pristine, work: workDir(), workers: 2 });
    const seconds = (performance.now() - started) / 1000;

    const crashes = outcomes.filter((o) => o.signal);
    const byCode = new Map<string, number>();
    const byKind = new Map<string, number>();
    const disagreements: unknown[] = [];
    const undocumented: unknown[] = [];
    for (const outcome of outcomes) {
      const flip = flips[outcome.i]!;
      if (outcome.signal) continue;
      if (JSON.stringify(outcome.boot) !== JSON.stringify(outcome.doctor)) disagreements.push({ ...flip, ...outcome });
      if (!outcome.doctor!.every((code) => DOCUMENTED_CODES.has(code))) undocumented.push({ ...flip, ...outcome });
      const code = outcome.doctor![0] ?? 'clean';
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
      byKind.set(flip.kind, (byKind.get(flip.kind) ?? 0) + 1);
    }
    t.diagnostic(
      `${FLIPS} flips (seed ${SEED}) in ${seconds.toFixed(1)} s: ${[...byCode].map(([c, n]) => `${c} ${n}`).join(', ')}; crashes ${crashes.length}`,
    );
    assert.deepEqual(crashes, [], 'flips whose reader died');
    assert.deepEqual(disagreements, [], 'flips doctor and boot disagree on');
    assert.deepEqual(undocumented, [], 'flips answered with a code docs/errors.md does not list');
    for (const kind of FLIP_KINDS) assert.equal(byKind.get(kind), FLIPS / FLIP_KINDS.length, kind);
    // The page check itself catches flips in pages' structure.
    assert.ok((byCode.get('storage_corrupt') ?? 0) > 0);
  });
});

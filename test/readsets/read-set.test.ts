import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ABSENT, readSource, sourceTrust, staleSources } from '../../readsets/read-set.js';
import { TaskSpec, type ReadSetContext, type TaskSpecInput } from '../../objects/index.js';
import { tempDir } from '../support/temp.js';

const BASE: TaskSpecInput = {
  title: 't',
  goal: 'g',
  requiredArtifacts: [{ name: 'out.json' }],
  world: '/srv/world',
};

function body(items: ReadSetContext['items']): ReadSetContext {
  return { taskId: 't', generation: 1, stage: 'work', goal: { revision: 1, digest: ABSENT }, items, candidates: [] };
}

describe('read sets', () => {
  it('binds a directory by its tree digest, which moves when any file under it does', async () => {
    const world = tempDir();
    mkdirSync(join(world, 'upstream/src'), { recursive: true });
    writeFileSync(join(world, 'upstream/src/a.js'), 'one');
    const at = { in: 'world' as const, path: 'upstream' };
    const before = await readSource({ workspace: tempDir(), world }, at);
    assert.equal(before?.text, null, 'a directory is bound by digest, never shown');
    writeFileSync(join(world, 'upstream/src/a.js'), 'two');
    const after = await readSource({ workspace: tempDir(), world }, at);
    assert.notEqual(after?.digest, before?.digest);
    assert.equal(await readSource({ workspace: tempDir() }, at), null, 'no world: absent');

    const item = { digest: before!.digest, trust: 'trusted' as const, claim: 'asserted' as const, selectedBy: 's' };
    const stale = await staleSources(
      body([
        { sourceId: 'upstream', ...item, dependsOn: [], location: at },
        {
          sourceId: 'plan',
          ...item,
          digest: ABSENT,
          dependsOn: ['upstream'],
          location: { in: 'world', path: 'PLAN.md' },
        },
        { sourceId: 'notes', ...item, trust: 'untrusted', dependsOn: ['upstream'], location: at },
      ]),
      { revision: 1 },
      async (location) => (await readSource({ workspace: tempDir(), world }, location))?.digest ?? null,
    );
    assert.deepEqual(stale, [
      { sourceId: 'upstream', bound: before!.digest, current: after!.digest },
      { sourceId: 'plan', bound: ABSENT, current: ABSENT, via: 'upstream' },
    ]);
  });

  it('a workspace source that is a symlink leading out of the workspace reads as absent, never as the file it names', async () => {
    const workspace = tempDir();
    const outside = join(tempDir(), 'secret.txt');
    writeFileSync(outside, 'a secret outside the workspace');
    symlinkSync(outside, join(workspace, 'README.md'));
    assert.equal(await readSource({ workspace }, { in: 'workspace', path: 'README.md' }), null);
    writeFileSync(join(workspace, 'NOTES.md'), 'inside');
    symlinkSync(join(workspace, 'NOTES.md'), join(workspace, 'LINK.md'));
    assert.equal((await readSource({ workspace }, { in: 'workspace', path: 'LINK.md' }))?.text, 'inside');
  });

  it('a source absent when compiled and present at admission has moved; untrusted ones never invalidate', async () => {
    const world = tempDir();
    const read = async (location: { in: 'world' | 'workspace'; path: string }) =>
      (await readSource({ workspace: tempDir(), world }, location))?.digest ?? null;
    const items: ReadSetContext['items'] = [
      {
        sourceId: 'policy',
        digest: ABSENT,
        trust: 'trusted',
        claim: 'asserted',
        selectedBy: 's',
        dependsOn: [],
        location: { in: 'world', path: 'POLICY.md' },
      },
    ];
    assert.deepEqual(await staleSources(body(items), { revision: 1 }, read), []);
    writeFileSync(join(world, 'POLICY.md'), 'now here');
    const [moved] = await staleSources(body(items), { revision: 1 }, read);
    assert.deepEqual([moved?.sourceId, moved?.bound], ['policy', 'absent']);
    assert.deepEqual(await staleSources(body([{ ...items[0]!, trust: 'untrusted' }]), { revision: 1 }, read), []);
  });

  it('trust propagates: a source declared trusted that depends on an untrusted one is untrusted', () => {
    const spec = TaskSpec.parse({
      ...BASE,
      sources: [
        { id: 'notes', path: 'NOTES.md' },
        { id: 'spec', path: 'SPEC.md', in: 'world', trust: 'trusted' },
        { id: 'derived', path: 'D.md', in: 'world', trust: 'trusted', dependsOn: ['spec', 'notes'] },
        { id: 'plan', path: 'P.md', in: 'world', trust: 'trusted', dependsOn: ['goal', 'spec'] },
      ],
    });
    assert.deepEqual(Object.fromEntries(sourceTrust(spec)), {
      goal: 'trusted',
      notes: 'untrusted',
      spec: 'trusted',
      derived: 'untrusted',
      plan: 'trusted',
    });
  });

  it('the spec refuses Host item ids, duplicates, unknown or cyclic dependencies, a world source without a world, and a decision without its contract', () => {
    const issue = (input: unknown) => {
      const parsed = TaskSpec.safeParse(input);
      return parsed.success ? 'ok' : `${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`;
    };
    const source = (id: string, more: Record<string, unknown> = {}) => ({ id, path: `${id}.md`, ...more });
    assert.match(issue({ ...BASE, sources: [source('goal')] }), /^sources.0.id: goal is the Host's own item/);
    assert.match(issue({ ...BASE, sources: [source('a'), source('a')] }), /^sources.1.id: source a is declared twice/);
    assert.match(
      issue({ ...BASE, sources: [source('a', { dependsOn: ['b'] })] }),
      /^sources.0.dependsOn.0: no source b/,
    );
    assert.match(
      issue({ ...BASE, sources: [source('a', { dependsOn: ['b'] }), source('b', { dependsOn: ['a'] })] }),
      /^sources.0.dependsOn: a depends on itself/,
    );
    assert.match(
      issue({ ...BASE, world: undefined, sources: [source('a', { in: 'world' })] }),
      /^sources.0.in: a world source/,
    );
    assert.match(issue({ ...BASE, world: 'relative/dir' }), /^world: must be an absolute path/);
    const decide = (artifact: Record<string, unknown>, supportedBy = ['goal']) => ({
      ...BASE,
      requiredArtifacts: [{ name: 'd.json', ...artifact }],
      stages: [
        {
          name: 'd',
          produces: ['d.json'],
          decision: {
            artifact: 'd.json',
            candidates: [{ id: 'x', summary: 's', supportedBy, action: { kind: 'none' } }],
          },
        },
      ],
    });
    assert.equal(issue(decide({ schema: 'decision' })), 'ok');
    assert.match(
      issue(decide({})),
      /^stages.0.decision.artifact: d.json must be declared kind json with schema "decision"/,
    );
    assert.match(
      issue(decide({ schema: 'decision' }, ['nowhere'])),
      /^stages.0.decision.candidates.0.supportedBy.0: no source nowhere/,
    );
  });
});

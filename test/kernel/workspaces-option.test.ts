import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { HostError } from '../../kernel/index.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { workspacePath } from '../../runtime/index.js';
import { ACCEPT_X2, branchAgents } from '../support/branch-agent.js';
import { tempDir } from '../support/temp.js';

describe('SupervisorOptions.workspaces', () => {
  it('is refused invalid_option at workspaces unless it is an absolute path; nothing is created', () => {
    const state = join(tempDir(), 'state');
    assert.throws(
      () => createSupervisor({ state, workspaces: 'relative/workspaces' }),
      (error: unknown) => error instanceof HostError && error.code === 'invalid_option' && error.path === 'workspaces',
    );
    assert.equal(existsSync(state), false);
  });

  it('puts every Task Attempt’s workspace there, not under the state root, and admission reads it there', async () => {
    const agents = branchAgents(tempDir());
    const state = join(agents.dir, 'state');
    const workspaces = join(agents.dir, 'shared-workspaces');
    const host = await openHost({ state, workspaces, harnesses: agents.harnesses() as never });
    try {
      await host.supervisor.createTask({
        taskId: 'here',
        title: 'Make x equal 2',
        goal: 'The module a.js exports x; make it 2 and report.',
        requiredArtifacts: [{ name: 'report.md', kind: 'text', pattern: '^# ' }],
        // A workspace source: admission re-reads it where the run wrote it.
        sources: [{ id: 'module', in: 'workspace', path: 'a.js', trust: 'untrusted' }],
        workspaceSeed: agents.seed,
        acceptance: ACCEPT_X2,
        start: { stage: 'work', harness: 'right' },
      });
      assert.equal(await host.supervisor.waitFor('here', ['completed', 'waiting']), 'completed');
      assert.equal(existsSync(join(workspacePath(workspaces, 'here', 1), 'report.md')), true);
      assert.equal(existsSync(join(state, 'workspaces', 'here')), false);
    } finally {
      await host.stop();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerServerRequest, turnFailureRetryable } from '../../drivers/codex/index.js';

// Pure decision tables: what the driver answers to each kind of server request, and which failed
// turns are worth retrying. The wire-level behaviour is covered against real codex in codex-driver.

const request = (method: string, params: unknown = {}) => ({ id: 7, method, params });

describe('answerServerRequest', () => {
  const cases: [string, unknown, 'allow' | 'refuse' | 'escalate', unknown][] = [
    ['item/commandExecution/requestApproval', {}, 'allow', { result: { decision: 'accept' } }],
    ['item/commandExecution/requestApproval', {}, 'refuse', { result: { decision: 'decline' } }],
    ['item/fileChange/requestApproval', {}, 'allow', { result: { decision: 'accept' } }],
    ['item/fileChange/requestApproval', {}, 'refuse', { result: { decision: 'decline' } }],
    [
      'item/permissions/requestApproval',
      { permissions: { network: { enabled: true }, fileSystem: null } },
      'allow',
      { result: { permissions: { network: { enabled: true } }, scope: 'turn' } },
    ],
    [
      'item/permissions/requestApproval',
      { permissions: { network: { enabled: true } } },
      'refuse',
      { result: { permissions: {}, scope: 'turn' } },
    ],
    ['execCommandApproval', {}, 'allow', { result: { decision: 'approved' } }],
    [
      'applyPatchApproval',
      {},
      'escalate',
      { result: { decision: { denied: { rejection: 'declined for now: the Host asks a person after this run' } } } },
    ],
    ['mcpServer/elicitation/request', {}, 'allow', { result: { action: 'decline', content: null, _meta: null } }],
  ];
  for (const [method, params, policy, expected] of cases) {
    it(`answers ${method} when the policy answers ${policy}`, () => {
      assert.deepEqual(answerServerRequest(request(method, params), policy), expected);
    });
  }

  for (const method of [
    'item/tool/requestUserInput',
    'item/tool/call',
    'account/chatgptAuthTokens/refresh',
    'attestation/generate',
    'future/unknown',
  ]) {
    it(`answers ${method} with a JSON-RPC method-not-found error, never silence`, () => {
      const reply = answerServerRequest(request(method), 'allow');
      assert.ok('error' in reply);
      assert.equal(reply.error.code, -32601);
      assert.match(reply.error.message, new RegExp(method.replaceAll('/', '\\/')));
    });
  }
});

describe('turnFailureRetryable', () => {
  const cases: [unknown, boolean][] = [
    ['internalServerError', true],
    ['serverOverloaded', true],
    [{ responseStreamDisconnected: { httpStatusCode: null } }, true],
    ['modelNotFound', false],
    ['unauthorized', false],
    ['contextWindowExceeded', false],
    ['other', false],
    [null, false],
    [undefined, false],
  ];
  for (const [info, retryable] of cases) {
    it(`treats ${JSON.stringify(info)} as ${retryable ? 'retryable' : 'final'}`, () => {
      assert.equal(turnFailureRetryable(info), retryable);
    });
  }
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { CLI, commitAndObserve, http, startServe } from './serve-child.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is a HELP, a TYPE or a
 * sample; every sample belongs to a family declared by TYPE before it; label values are quoted
 * with the format's escapes; values are floats. Anything else throws, naming the line.
 */
function parsePrometheus(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/;
  const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/;
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') {
        assert.match(meta[3]!, /^(counter|gauge|histogram|summary|untyped)$/, `line ${i + 1}: ${line}`);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const m = sample.exec(line);
    assert.ok(m, `line ${i + 1} is not a sample: ${line}`);
    const name = m[1]!;
    const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((n) => types.has(n));
    assert.ok(family, `line ${i + 1}: ${name} has no TYPE before it`);
    const labels: Record<string, string> = {};
    let rest = m[3] ?? '';
    while (rest !== '') {
      const l = label.exec(rest);
      assert.ok(l, `line ${i + 1}: bad labels ${m[3]}`);
      labels[l[1]!] = l[2]!;
      rest = rest.slice(l[0].length);
    }
    const value = /^(\+Inf|-Inf|NaN)$/.test(m[4]!) ? Number(m[4]!.replace('Inf', 'Infinity')) : Number(m[4]);
    assert.ok(!Number.isNaN(value) || m[4] === 'NaN', `line ${i + 1}: value ${m[4]}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

const valueOf = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;

describe('ordivon serve logs JSON lines and answers /metrics', { timeout: 90_000 }, () => {
  it('logs a request, a refusal, a dispatch and a job end, and its counters move with an admission and a refusal', async () => {
    const dir = tempDir();
    const config = join(dir, 'harnesses.json');
    writeFileSync(
      config,
      JSON.stringify({
        harnesses: { probe: { driver: 'command', command: process.execPath, args: ['-e', 'console.log("probe")'] } },
      }),
    );
    const serve = await startServe(['--state', join(dir, 'state'), '--port', '0', '--config', config], {
      ORDIVON_LOG_LEVEL: 'debug',
    });
    let metricsBefore: Sample[];
    let metricsAfter: Sample[];
    try {
      const unauthorized = await http(serve.ready, 'GET', '/metrics', { token: false });
      assert.equal(unauthorized.status, 401, '/metrics needs the token');
      const first = await http(serve.ready, 'GET', '/metrics');
      assert.equal(first.status, 200);
      assert.match(String(first.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      metricsBefore = parsePrometheus(first.text);
      assert.equal(valueOf(metricsBefore, 'ordivon_admissions_total', { type: 'task.created' }), 0);

      const spec = {
        taskId: 'obs-1',
        title: 'Observed',
        goal: 'Run the probe.',
        requiredArtifacts: [{ name: 'out.json' }],
      };
      const created = await http(serve.ready, 'POST', '/tasks', {
        body: spec,
        headers: { 'x-request-id': 'create-obs-1' },
      });
      assert.equal(created.status, 201, created.text);
      await commitAndObserve(serve.ready, 'obs-1', 'probe', 'work');
      // The Task, cancelled, takes no more events: a refusal that writes nothing.
      assert.equal(
        (await http(serve.ready, 'POST', '/tasks/obs-1/events', { body: { type: 'task.cancel', reason: 'done' } }))
          .status,
        200,
      );
      const refused = await http(serve.ready, 'POST', '/tasks/obs-1/events', {
        body: { type: 'task.cancel', reason: 'again' },
      });
      assert.equal(refused.body.code, 'invalid_transition');

      metricsAfter = parsePrometheus((await http(serve.ready, 'GET', '/metrics')).text);
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
    assert.equal(valueOf(metricsAfter, 'ordivon_admissions_total', { type: 'task.created' }), 1);
    assert.equal(valueOf(metricsAfter, 'ordivon_admissions_total', { type: 'task.cancel' }), 1);
    assert.equal(valueOf(metricsAfter, 'ordivon_refusals_total', { code: 'invalid_transition' }), 1);
    assert.equal(valueOf(metricsBefore, 'ordivon_refusals_total', { code: 'invalid_transition' }), 0);
    assert.equal(
      valueOf(metricsAfter, 'ordivon_refusals_total', { code: 'missing_artifact' }),
      1,
      'a retained refusal',
    );
    assert.equal(valueOf(metricsAfter, 'ordivon_dispatches_total', { status: 'intended' }), 1);
    assert.ok(valueOf(metricsAfter, 'ordivon_append_seconds_count', { operation: 'send' }) >= 3);
    for (const family of ['ordivon_leases_held', 'ordivon_boot_duration_seconds'])
      assert.ok(
        metricsAfter.some((s) => s.name === family),
        family,
      );

    const lines = serve
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.find((l) => l.msg === 'request' && l.requestId === 'create-obs-1');
    assert.ok(request, 'a request line with the given X-Request-Id');
    assert.deepEqual(
      [request.method, request.route, request.status, request.taskId, typeof request.ms, request.level],
      ['POST', '/tasks', 201, 'obs-1', 'number', 30],
    );
    const eventsLine = lines.find((l) => l.msg === 'request' && l.route === '/tasks/:id/events');
    assert.equal(eventsLine?.taskId, 'obs-1');
    const retained = lines.find((l) => l.msg === 'transition refused' && l.code === 'missing_artifact');
    assert.deepEqual(
      [retained?.event, retained?.admitted, typeof retained?.revision],
      ['completion.propose', false, 'number'],
    );
    const refusal = lines.find((l) => l.msg === 'transition refused' && l.written === false);
    assert.deepEqual(
      [refusal?.taskId, refusal?.event, refusal?.code, refusal?.level],
      ['obs-1', 'task.cancel', 'invalid_transition', 40],
    );
    const admitted = lines.find((l) => l.msg === 'transition admitted' && l.event === 'task.created');
    assert.deepEqual([admitted?.taskId, admitted?.revision], ['obs-1', 1]);
    assert.ok(
      lines.some((l) => l.msg === 'dispatch' && l.taskId === 'obs-1'),
      'a dispatch line',
    );
    assert.ok(lines.some((l) => l.msg === 'job end' && l.taskId === 'obs-1' && typeof l.jobStatus === 'string'));
    assert.ok(lines.some((l) => l.msg === 'boot'));
  });

  it('--log-level warn keeps info lines out; a bad level exits 2 naming the flag', async () => {
    const dir = tempDir();
    const serve = await startServe([
      '--state',
      join(dir, 'state'),
      '--port',
      '0',
      '--no-harnesses',
      '--log-level',
      'warn',
    ]);
    try {
      assert.equal((await http(serve.ready, 'GET', '/health')).status, 200);
      assert.equal((await http(serve.ready, 'GET', '/tasks', { token: false })).status, 401);
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
    assert.equal(
      serve
        .stderr()
        .split('\n')
        .some((l) => l.startsWith('{') && (JSON.parse(l) as { level: number }).level < 40),
      false,
      serve.stderr(),
    );
    const bad = spawnSync(
      process.execPath,
      [CLI, 'serve', '--json', '--state', join(dir, 'state2'), '--port', '0', '--no-harnesses', '--log-level', 'loud'],
      { encoding: 'utf8' },
    );
    assert.equal(bad.status, 2, bad.stderr);
    assert.equal(JSON.parse(bad.stderr).error.path, '--log-level');
  });
});

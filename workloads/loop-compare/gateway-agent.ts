#!/usr/bin/env node
// The one-shot gateway, as a `command` harness: the prompt on stdin, ONE model call (the
// Responses API at ORDIVON_GATEWAY_URL, no tools), its answer — JSON `{ files, summary }` —
// written into the workspace (the cwd), the summary printed as the last stdout line. It cannot
// look at the repository or run anything: what the comparison (compare.ts) sets Loop v0 against.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { resolveInside } from '../../drivers/confine.js';
import { wireFor } from '../../drivers/loop/index.js';

const Answer = z.strictObject({
  files: z.record(z.string().min(1), z.string()),
  summary: z.string(),
});

async function main(): Promise<void> {
  const baseUrl = z.url().parse(process.env['ORDIVON_GATEWAY_URL'], { error: () => 'ORDIVON_GATEWAY_URL: not a URL' });
  const prompt = readFileSync(0, 'utf8');
  const turn = await wireFor('responses')(
    {
      system:
        'Answer with one JSON object {"files": {path: content}, "summary": text}: the files are written as they are.',
      items: [{ kind: 'user', text: prompt, context: true }],
      tools: [],
    },
    {
      baseUrl,
      model: 'scripted-model',
      maxOutputTokens: 16_384,
      signal: new AbortController().signal,
      firstByteTimeoutMs: 60_000,
      callTimeoutMs: 600_000,
    },
  );
  const answer = Answer.parse(JSON.parse(turn.text));
  for (const [path, content] of Object.entries(answer.files)) {
    const target = resolveInside(process.cwd(), path);
    if (!target.ok) throw new Error(`${target.code}: ${target.detail}`);
    mkdirSync(dirname(target.value), { recursive: true });
    writeFileSync(target.value, content);
  }
  process.stdout.write(`${answer.summary}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

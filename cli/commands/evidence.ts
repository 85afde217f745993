import { CliError, EXIT, emit } from '../cli-io.js';
import { command, positional } from '../command.js';
import { exportTarget, toFlag } from './export.js';

/** A file name an adapter gave that is safe as one path segment; any other is written under a made-up one. */
const SAFE_NAME = /^(?!\.{1,2}$)[\w.-]{1,200}$/;

/**
 * `ordivon evidence TASK_ID --to DIR`: the evidence files the Task's Effect receipts hold (a page's
 * HTML, a screenshot: docs/effects.md), each written as the bytes the Host keeps, re-checked against
 * its digest, to `DIR/r<revision>-<n>/<name>` (the event that recorded the receipt, the receipt's
 * place in it), with `manifest.json`. DIR must be absent or empty (`export_exists`).
 */
export const evidence = command({
  name: 'evidence',
  summary: "the evidence files of a Task's Effect receipts, written to a directory with a manifest",
  details: [
    'Writes DIR/r<revision>-<n>/<name> for each file of each receipt (the event that recorded it, the receipt',
    'within it) and DIR/manifest.json (taskId, each file with its receipt, request id, media type and sha256).',
    'DIR must be absent or empty. A Task with no evidence files writes the manifest alone.',
  ],
  positionals: { taskId: positional('TASK_ID', 'the Task') },
  flags: {
    to: toFlag,
  },
  async run(values, io) {
    const { to, files, put, writeManifest } = await exportTarget(values.to);
    const [{ taskEffects }, { readTaskRecords }] = await Promise.all([
      import('../../views/index.js'),
      import('./work-back.js'),
    ]);
    const listed: Array<Record<string, unknown>> = [];
    await readTaskRecords(values.state, values.taskId, async (_root, task, blob) => {
      const effects = taskEffects({ events: task.events, object: (digest) => task.object(digest) });
      const seen = new Map<number, number>();
      for (const effect of effects) {
        const n = (seen.get(effect.revision) ?? 0) + 1;
        seen.set(effect.revision, n);
        for (const [i, file] of effect.evidence.entries()) {
          const name = SAFE_NAME.test(file.name) ? file.name : `file-${i + 1}`;
          const path = `r${effect.revision}-${n}/${name}`;
          const bytes = blob(file.digest);
          if (bytes.length !== file.bytes)
            throw new CliError('object_corrupt', `evidence ${file.digest} is ${bytes.length} bytes, not ${file.bytes}`);
          await put(path, bytes);
          listed.push({
            path,
            name: file.name,
            mediaType: file.mediaType,
            digest: file.digest,
            bytes: file.bytes,
            requestId: effect.requestId,
            receiptDigest: effect.receiptDigest,
            event: effect.event,
            revision: effect.revision,
          });
        }
      }
    });
    const manifest = { taskId: values.taskId, files: listed };
    await writeManifest(manifest);
    emit(io, { ...manifest, to }, () =>
      [
        `evidence of task ${values.taskId} written to ${to}: ${files.length} file(s)`,
        ...listed.map((f) => `  ${String(f.path)}  ${String(f.digest)}  (${String(f.requestId)})`),
        '  manifest.json',
      ].join('\n'),
    );
    return EXIT.ok;
  },
});

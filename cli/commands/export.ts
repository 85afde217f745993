import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CliError, EXIT, emit } from '../cli-io.js';
import { command, positional, stringFlag } from '../command.js';

const sha256 = (bytes: Buffer | string) => 'sha256:' + createHash('sha256').update(bytes).digest('hex');

/** `--to DIR` of `export` and `evidence`. */
export const toFlag = stringFlag(
  'DIR',
  'the directory to write (absent or empty)',
  (z) => z.string({ error: 'required' }).min(1, 'must not be empty'),
  { required: true },
);

/**
 * The directory an export writes (`export_exists` unless absent or empty), a writer of files into
 * it that lists each with its sha256, and the writer of its `manifest.json` (written last).
 */
export async function exportTarget(dir: string) {
  const to = resolve(dir);
  const present = await readdir(to).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw new CliError('export_exists', `${to} cannot be written to: ${error.message}`);
  });
  if (present.length > 0) throw new CliError('export_exists', `${to} is not empty`);
  const files: Array<{ path: string; digest: string; bytes: number }> = [];
  const put = async (path: string, bytes: Buffer | string) => {
    await mkdir(dirname(join(to, path)), { recursive: true });
    await writeFile(join(to, path), bytes);
    files.push({ path, digest: sha256(bytes), bytes: Buffer.byteLength(bytes) });
  };
  const writeManifest = async (manifest: object) => {
    await mkdir(to, { recursive: true });
    await writeFile(join(to, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  };
  return { to, files, put, writeManifest };
}

/**
 * `ordivon export TASK_ID --to DIR`: writes the accepted change where the user can take it:
 * `artifacts/<name>` for each artifact the outcome binds (the bytes the Host holds), `change.patch`
 * (what `ordivon diff` prints) and `manifest.json` (the Task, the outcome digest, the source
 * digest, and each file with its sha256). DIR must be absent or empty (`export_exists`); refused
 * as `diff` is otherwise, writing nothing.
 */
export const exportTask = command({
  name: 'export',
  summary: 'the held artifacts, the patch and a manifest of their digests, written to a directory',
  details: [
    'Writes DIR/artifacts/<name> (the bytes the Host holds), DIR/change.patch (as ordivon diff prints it) and',
    'DIR/manifest.json (taskId, outcomeDigest, sourceDigest, each file with its sha256). DIR must be absent or empty.',
  ],
  positionals: { taskId: positional('TASK_ID', 'the completed Task') },
  flags: {
    to: toFlag,
  },
  async run(values, io) {
    const { acceptedOf, acceptedPatch, readTaskRecords } = await import('./work-back.js');
    const { to, files, put, writeManifest } = await exportTarget(values.to);
    const made = await readTaskRecords(values.state, values.taskId, async (root, task, blob) => {
      const accepted = await acceptedOf(root, task);
      const patch = await acceptedPatch(accepted);
      const artifacts = Object.entries(accepted.evidence)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, digest]) => ({ name, digest, bytes: blob(digest) }));
      return { accepted, patch, artifacts };
    });
    for (const artifact of made.artifacts) await put(`artifacts/${artifact.name}`, artifact.bytes);
    await put('change.patch', made.patch);
    const manifest = {
      taskId: made.accepted.taskId,
      outcomeDigest: made.accepted.outcomeDigest,
      sourceDigest: made.accepted.sourceDigest,
      workspace: made.accepted.workspace,
      files,
    };
    await writeManifest(manifest);
    const answer = { ...manifest, to };
    emit(io, answer, () =>
      [
        `exported task ${manifest.taskId} (outcome ${manifest.outcomeDigest}) to ${to}:`,
        ...files.map((f) => `  ${f.path}  ${f.digest}`),
        '  manifest.json',
      ].join('\n'),
    );
    return EXIT.ok;
  },
});

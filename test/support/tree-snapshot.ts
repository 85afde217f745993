import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sha256 } from '../../store/index.js';

/** Every path under `root` with its mode, size, mtime and (for files) digest: "nothing was written, no mode changed". */
export function treeSnapshot(root: string): string {
  const lines: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    const body = stat.isFile() ? sha256(readFileSync(path)) : '';
    lines.push(`${relative(root, path)} ${(stat.mode & 0o777).toString(8)} ${stat.size} ${stat.mtimeMs} ${body}`);
    if (stat.isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name));
  };
  walk(root);
  return lines.join('\n');
}

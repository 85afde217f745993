import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TaskSpec } from '../objects/index.js';

/** Root of the frozen workloads shipped with the package (source tree, not dist/). */
const WORKLOADS = fileURLToPath(new URL('../../workloads/', import.meta.url));

export interface Workload {
  name: string;
  dir: string;
  /** The Task spec with `workspaceSeed` (and `world`, if it has one) resolved against the workload's folder. */
  spec: TaskSpec;
  /** Reads a file of the workload (e.g. one a scripted provider writes). */
  file(path: string): string;
}

/** The workloads shipped with the package: each folder of `workloads/` with a `task.json`. */
export function workloadNames(): string[] {
  return readdirSync(WORKLOADS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(`${WORKLOADS}${entry.name}/task.json`))
    .map((entry) => entry.name)
    .sort();
}

/** Loads a frozen workload by name (its folder's); its spec is parsed like any Task spec. */
export function loadWorkload(name: string): Workload {
  const dir = `${WORKLOADS}${name}/`;
  const raw = JSON.parse(readFileSync(`${dir}task.json`, 'utf8'));
  const world = typeof raw.world === 'string' ? { world: `${dir}${raw.world}` } : {};
  const spec = TaskSpec.parse({ ...raw, ...world, workspaceSeed: `${dir}repo` });
  return { name, dir, spec, file: (path) => readFileSync(`${dir}${path}`, 'utf8') };
}

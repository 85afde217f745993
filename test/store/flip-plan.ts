import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PAGE_ROLE, type PageMap } from '../../store/index.js';
import { z } from 'zod';
import { seededRandom } from '../reliability/seeded-random.js';

export const FlipBatch = z.object({
  pristine: z.string(),
  work: z.string(),
  raw: z.boolean().default(false),
  flips: z.array(
    z.object({ i: z.number().int(), offset: z.number().int().min(0), mask: z.number().int().min(1).max(255) }),
  ),
});
export type FlipBatch = z.input<typeof FlipBatch>;

/** What `doctor` and a boot said of one flip: each the codes of its findings ([] healthy). */
export const FlipResult = z.object({
  i: z.number(),
  doctor: z.array(z.string()),
  boot: z.array(z.string()),
  page: z.string().optional(),
});
export type FlipResult = z.infer<typeof FlipResult>;

const WORKER = fileURLToPath(new URL('./flip-worker.js', import.meta.url));

/** The page kinds a flip is aimed at, each in turn. */
export const FLIP_KINDS = ['meta', 'branch', 'leaf', 'overflow', 'free-list'] as const;
export type FlipKind = (typeof FLIP_KINDS)[number];
const ROLE_OF: Record<FlipKind, number> = {
  meta: PAGE_ROLE.meta,
  branch: PAGE_ROLE.branch,
  leaf: PAGE_ROLE.leaf,
  overflow: PAGE_ROLE.overflow,
  'free-list': PAGE_ROLE.freeList,
};

export interface Flip {
  i: number;
  kind: FlipKind;
  page: number;
  offset: number;
  mask: number;
}

/**
 * `count` flips, the page kinds in turn: a page of that kind, then three times in four a byte of its
 * structure (the header and the node offsets of a branch or leaf, the fields of a meta page, the
 * first 32 bytes of an overflow run), else any byte of it (a value's bytes are the digest checks'
 * to catch); XORed with 1–255.
 */
export function planFlips(map: PageMap, bytes: Buffer, seed: number, count: number): Flip[] {
  const random = seededRandom(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const pagesOf = Object.fromEntries(
    FLIP_KINDS.map((kind) => [kind, [...map.roles.keys()].filter((page) => map.roles[page] === ROLE_OF[kind])]),
  ) as Record<FlipKind, number[]>;
  const flips: Flip[] = [];
  for (let i = 0; i < count; i++) {
    const kind = FLIP_KINDS[i % FLIP_KINDS.length]!;
    const pages = pagesOf[kind];
    if (pages.length === 0) throw new Error(`the root has no ${kind} page`);
    const page = pages[pick(pages.length)]!;
    const start = page * map.pageSize;
    const lower = bytes.readUInt16LE(start + 20);
    const structure = kind === 'meta' ? 168 : kind === 'overflow' ? 32 : Math.min(map.pageSize, 24 + (lower & 0xfffe));
    const within = random() < 0.75 ? pick(structure) : pick(map.pageSize);
    flips.push({ i, kind, page, offset: start + within, mask: 1 + pick(255) });
  }
  return flips;
}

export interface FlipOutcome extends Partial<FlipResult> {
  i: number;
  /** The signal the worker died of while on this flip. */
  signal?: string;
}

/**
 * Runs `flips` in `workers` child processes (flip-worker.ts); a worker that dies on a flip is
 * recorded with its signal and exit status and a new one goes on after it.
 */
export async function runFlips(
  flips: readonly Flip[],
  options: { pristine: string; work: (n: number) => string; workers: number; raw?: boolean },
): Promise<FlipOutcome[]> {
  const outcomes = new Map<number, FlipOutcome>();
  const lanes = Array.from({ length: options.workers }, (_, n) => flips.filter((_, k) => k % options.workers === n));
  let spawned = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      let rest = lane;
      while (rest.length > 0) {
        const batch: FlipBatch = {
          pristine: options.pristine,
          work: options.work(spawned++),
          raw: options.raw ?? false,
          flips: rest.map(({ i, offset, mask }) => ({ i, offset, mask })),
        };
        const { lines, signal, status, stderr } = await runWorker(batch);
        // A worker may die after printing a flip's result (closing what the flip damaged): that
        // death is the last started flip's.
        let current: number | undefined;
        for (const line of lines) {
          const parsed = JSON.parse(line) as { start?: number };
          if (parsed.start !== undefined) current = parsed.start;
          else outcomes.set(parsed.start ?? FlipResult.parse(parsed).i, FlipResult.parse(parsed));
        }
        if (!signal && status === 0) break;
        if (current === undefined)
          throw new Error(`a flip worker failed before its first flip: ${signal ?? status}\n${stderr}`);
        outcomes.set(current, { i: current, signal: signal ?? `exit ${status}` });
        rest = rest.slice(rest.findIndex((f) => f.i === current) + 1);
      }
    }),
  );
  return flips.map((f) => outcomes.get(f.i) ?? { i: f.i, signal: 'never run' });
}

function runWorker(
  batch: FlipBatch,
): Promise<{ lines: string[]; signal: string | null; status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify(batch)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.on('error', reject);
    child.on('close', (status, signal) =>
      resolve({ lines: out.split('\n').filter((l) => l.startsWith('{')), signal, status, stderr }),
    );
  });
}

import type { RefusalCause, TaskContextView, GrantView } from '../../views/index.js';
import type { CandidateAction } from '../../objects/index.js';
import type { ShowView } from '../service/show-view.js';
import { requestLines } from './request-text.js';
import { queuedText } from './queued-text.js';

const HEX = 'sha256:'.length;
/** `sha256:` and the first 12 hex digits: enough to tell digests apart on a line. */
const short = (digest: string) => (digest.startsWith('sha256:') ? `${digest.slice(0, HEX + 12)}…` : digest);
/** A Context's digest as its heading shows it: the first 16 hex digits. */
const head16 = (digest: string) => (digest.startsWith('sha256:') ? digest.slice(HEX, HEX + 16) : digest);

/** What the Host would do for a candidate: the command line it runs, the Effect it performs, or the kind. */
export function describeAction(action: CandidateAction): string {
  if (action.kind === 'command') return [action.command, ...action.args].join(' ');
  if (action.kind === 'effect') return `effect ${action.adapter}: ${action.operation} ${action.target}`;
  return action.kind;
}

function columns(rows: string[][]): string[] {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join('  '));
}

/** One Context: its heading, one line per item (trust, claim, digest, where, dependencies) and per candidate. */
export function contextLines(c: TaskContextView): string[] {
  const heading =
    `  context r${c.revision} g${c.generation} ${c.stage ?? '-'} ${head16(c.contextDigest)}` +
    (c.goalRevision !== null ? `  goal revision ${c.goalRevision}` : '') +
    (c.format === 'sources' ? '  (compiled before read sets: trust from its source class, claims not recorded)' : '');
  const items = columns(
    c.items.map((i) => [
      `    ${i.sourceId}`,
      i.trust,
      i.claim,
      short(i.digest),
      [
        i.revision !== undefined ? `revision ${i.revision}` : '',
        i.location ? `${i.location.in} ${i.location.path}` : '',
        i.dependsOn.length ? `depends on ${i.dependsOn.join(', ')}` : '',
        `selected: ${i.selectedBy}`,
      ]
        .filter(Boolean)
        .join('  '),
    ]),
  );
  const candidates = columns(
    c.candidates.map((k) => [
      `    candidate ${k.id}`,
      k.authority,
      `supported by ${k.supportedBy.map((s) => `${s.sourceId} (${s.trust})`).join(', ') || 'nothing'}`,
      `action: ${describeAction(k.action)}`,
    ]),
  );
  return [heading, ...items, ...candidates, ...(c.grants ?? []).map((g) => `    ${grantLine(g)}`)];
}

/** `grant allow <key> by operator: edit settings.json (t-1/permission/…)`: one answered permission request. */
function grantLine(g: GrantView): string {
  return `grant ${g.answer} ${g.key} by ${g.by}: ${g.action} (${g.requestId})`;
}

/** An output tail under its stream's name, each line indented (nothing when the stream was empty). */
function tailLines(stream: string, tail: string): string[] {
  const text = tail.trimEnd();
  return text === '' ? [] : [`      ${stream} (tail):`, ...text.split('\n').map((l) => `        ${l}`)];
}

/** The lines under a refusal naming what caused it. */
export function causeLines(causes: RefusalCause[]): string[] {
  const lines: string[] = [];
  const support = new Map<string, string[]>();
  for (const cause of causes) {
    switch (cause.kind) {
      case 'stale':
        lines.push(
          `    stale ${cause.sourceId}: bound ${short(cause.bound)}, now ${cause.current === null ? 'gone' : short(cause.current)}` +
            (cause.via ? ` (via ${cause.via})` : ''),
        );
        break;
      case 'support':
        support.set(cause.candidateId, [
          ...(support.get(cause.candidateId) ?? []),
          `${cause.sourceId} (${cause.trust})`,
        ]);
        break;
      case 'candidate':
        lines.push(
          `    candidate ${JSON.stringify(cause.candidateId)} is not one of the Context's: ${cause.known.join(', ') || 'none'}`,
        );
        break;
      case 'action':
        lines.push(`    candidate ${cause.candidateId}: job ${cause.jobId ?? '-'} exited ${cause.exitCode ?? '-'}`);
        break;
      case 'revoked':
        lines.push(
          `    request ${cause.requestId} revoked at r${cause.revision} by ${cause.event}` +
            (cause.generation !== undefined ? ` (generation ${cause.generation})` : '') +
            (cause.reason !== undefined ? `: ${cause.reason}` : '') +
            (cause.stale?.length ? ` (${cause.stale.map((s) => s.sourceId).join(', ')} moved)` : ''),
        );
        break;
      case 'context':
        lines.push(
          `    named context ${head16(cause.named) || '-'}, current ${cause.current === null ? 'none' : head16(cause.current)}` +
            (cause.decidedAt !== null ? ` (already decided at r${cause.decidedAt})` : ''),
        );
        break;
      case 'frozen':
        lines.push(
          `    frozen test ${cause.path} changed: bound ${short(cause.bound)}, now ${cause.current === null ? (cause.code ?? 'gone') : short(cause.current)}`,
        );
        break;
      case 'command':
        lines.push(
          `    acceptance command ${cause.exitCode === null ? `did not exit (${cause.jobState})` : `exited ${cause.exitCode}`}`,
          ...tailLines('stdout', cause.stdout),
          ...tailLines('stderr', cause.stderr),
        );
        break;
      case 'source':
        lines.push(
          `    source moved: ${cause.before === null ? '-' : short(cause.before)} before the command, ${cause.after === null ? '-' : short(cause.after)} after, ${short(cause.host)} on the Host`,
        );
    }
  }
  for (const [candidate, sources] of support)
    lines.push(`    candidate ${candidate} supported by ${sources.join(', ')}`);
  return lines;
}

/**
 * A branch stage's tree: the join, then one line per child with its state now, its generation,
 * whether it was verified and why it won or lost.
 */
function branchLines(view: ShowView): string[] {
  const branch = view.branch;
  if (!branch) return [];
  const head =
    `  branch ${branch.branchId} (${branch.kind}, join ${branch.join}): ` +
    (branch.joined
      ? branch.winners.length
        ? `joined, ${branch.winners.join(', ')} (${branch.reason ?? ''})`
        : `not met (${branch.reason ?? ''})`
      : 'waiting for its children');
  const rows = columns(
    branch.children.map((c, i) => [
      `    ${i === branch.children.length - 1 ? '└' : '├'} ${c.taskId}`,
      c.harness,
      ...(c.item !== null ? [c.item] : []),
      `${c.state}${c.generation !== null ? ` g${c.generation}` : ''}`,
      c.verified ? 'verified' : 'unverified',
      `${c.outcome}: ${c.why}`,
    ]),
  );
  return [head, ...rows];
}

/** `ordivon show`'s human form of a Task view (from the store or a running service). */
export function showText(view: ShowView): string {
  const c = view.context;
  const lines = [
    `${view.taskId}  ${view.state}  revision ${view.revision}  generation ${c.generation}`,
    `  ${view.title}`,
    `  frontier: ${view.frontier}`,
    ...(view.queued ? [`  ${queuedText(view.queued)}`] : []),
    `  assignment: ${c.assignment ? `${c.assignment.harness} (${c.assignment.purpose}) g${c.assignment.generation}` : '-'}`,
    `  evidence: ${Object.keys(c.evidence).join(', ') || '-'}`,
    ...(typeof view['workspace'] === 'string' ? [`  workspace: ${view['workspace']}`] : []),
    ...view.contexts.flatMap(contextLines),
    ...view.rejections.flatMap((r) => [
      `  rejected r${r.revision} ${r.event}: ${r.code}${r.detail ? ` (${r.detail})` : ''}`,
      ...causeLines(r.causes ?? []),
    ]),
    ...(view.requests ?? []).flatMap(requestLines),
    ...(view.grants?.length
      ? ['  grants for the next Context:', ...view.grants.map((g) => `    ${grantLine(g)}`)]
      : []),
    ...view.runs.map(
      (r) =>
        `  run r${r.revision} g${r.generation} ${r.purpose} by ${r.harness} (${r.driver}, ${r.provider}${r.confined === false ? ', unconfined' : ''}): ${r.jobStatus}/${r.stopReason}, ` +
        `${r.messages} messages, ${r.toolItemsCompleted}/${r.toolItemsStarted} tool items, final text ${r.finalText}; ` +
        `evidence ${r.refusedAs ? `none (run refused ${r.refusedAs})` : Object.keys(r.evidence).join(', ') || 'none'}${
          Object.keys(r.refused).length
            ? `; refused ${Object.entries(r.refused)
                .map(([n, why]) => `${n} (${why.code}: ${why.detail})`)
                .join(', ')}`
            : ''
        }`,
    ),
    ...branchLines(view),
    ...(view.effects ?? []).flatMap((f) => [
      `  effect r${f.revision} ${f.event} ${f.requestId} via ${f.via}: receipt ${short(f.receiptDigest)}`,
      ...f.evidence.map((file) => `    evidence ${file.name} (${file.mediaType}, ${file.bytes} bytes) ${file.digest}`),
    ]),
  ];
  for (const e of view.events ?? [])
    lines.push(
      `  #${e.revision} ${e.at} ${e.origin.padEnd(8)} ${e.type}${e.disposition.admitted ? '' : `  → ${e.disposition.code}`}`,
    );
  return lines.join('\n');
}

import type { PermissionLog } from '../permission-route.js';
import type { ArtifactFound, DriverRunInput, HarnessRunReceipt } from '../receipt.js';
import type { ServerNotification } from './codex-wire.js';
import {
  ErrorParams,
  ItemParams,
  TokenUsageParams,
  TOOL_ITEM_TYPES,
  TurnParams,
  type ThreadItem,
} from './codex-wire.js';
import { RunSteps } from '../run-steps.js';

/** How the turn ended according to Codex (`turn/completed`). */
export interface TurnEnd {
  turnId: string;
  status: string;
  error?: { message: string; codexErrorInfo?: unknown; additionalDetails?: string | null | undefined } | undefined;
}

/** The parts of a receipt that only exist once the process is down. */
export interface ReceiptEnd {
  stopReason: string;
  exitCode?: number | null | undefined;
  signal?: string | null | undefined;
  artifacts: ArtifactFound[];
  artifactRefusals: { name: string; code: string }[];
}

/** A string field of a thread item Codex reports beyond the fields this driver parses, or null. */
function textField(item: ThreadItem, key: string): string | null {
  const value = (item as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : null;
}

/**
 * What a tool item did, in a line: a command execution's command (a string or its argv), a
 * file change's paths, an MCP or dynamic tool's name; else the item's type.
 */
function toolTitle(item: ThreadItem): string {
  const fields = item as Record<string, unknown>;
  const command = fields['command'];
  if (typeof command === 'string') return command;
  if (Array.isArray(command)) return command.map(String).join(' ');
  const changes = fields['changes'];
  if (Array.isArray(changes))
    return `${item.type}: ${changes.map((c) => String((c as { path?: unknown }).path ?? '?')).join(', ')}`;
  const tool = fields['tool'];
  if (typeof tool === 'string') return `${item.type}: ${tool}`;
  return item.type;
}

function versionFromUserAgent(userAgent: string | undefined): string | undefined {
  // `<originator>/<codex version> (<os>; <arch>) …`
  return userAgent === undefined ? undefined : /^[^/\s]+\/([^\s]+)/.exec(userAgent)?.[1];
}

/**
 * Everything one Codex run has observed so far, accumulated from the server's notifications for
 * *our* thread (other threads, e.g. sub-agents, are ignored). Usage is kept exactly as the last
 * `thread/tokenUsage/updated` reported it; the final text is the last completed `agentMessage`.
 */
export class CodexTally {
  readonly startedAt = new Date();
  readonly #startedMs = performance.now();
  readonly #input: DriverRunInput;
  userAgent: string | undefined;
  cliVersion: string | undefined;
  model: string | undefined;
  modelProvider: string | undefined;
  threadId: string | undefined;
  sessionId: string | undefined;
  turnId: string | undefined;
  usage: unknown;
  finalText: string | undefined;
  lastError: string | undefined;
  messages = 0;
  thoughts = 0;
  toolItemsStarted = 0;
  toolItemsCompleted = 0;
  protocolErrors = 0;
  turnEnd: TurnEnd | undefined;
  /** Each agent message and tool item of our thread, in order, for the receipt's `steps`. */
  readonly steps = new RunSteps();
  readonly #turnEnded: { promise: Promise<TurnEnd>; resolve: (end: TurnEnd) => void };

  readonly #permissions: PermissionLog | undefined;

  constructor(input: DriverRunInput, permissions?: PermissionLog) {
    this.#input = input;
    this.#permissions = permissions;
    let resolve!: (end: TurnEnd) => void;
    const promise = new Promise<TurnEnd>((r) => (resolve = r));
    this.#turnEnded = { promise, resolve };
  }

  /** Resolves when `turn/completed` arrives for our turn. Never rejects. */
  get turnEnded(): Promise<TurnEnd> {
    return this.#turnEnded.promise;
  }

  /** Records a line or message the driver could not use; returns the running count. */
  protocolError(): number {
    return ++this.protocolErrors;
  }

  /** Folds one notification into the tally; a notification of a known method with a bad shape is a protocol error. */
  observe(notification: ServerNotification): void {
    const { method, params } = notification;
    switch (method) {
      case 'item/started':
      case 'item/completed': {
        const parsed = ItemParams.safeParse(params);
        if (!parsed.success) return void this.protocolError();
        if (!this.#ours(parsed.data.threadId)) return;
        this.#item(method === 'item/started', parsed.data.item);
        return;
      }
      case 'thread/tokenUsage/updated': {
        const parsed = TokenUsageParams.safeParse(params);
        if (!parsed.success) return void this.protocolError();
        if (this.#ours(parsed.data.threadId)) this.usage = parsed.data.tokenUsage;
        return;
      }
      case 'turn/started':
      case 'turn/completed': {
        const parsed = TurnParams.safeParse(params);
        if (!parsed.success) return void this.protocolError();
        if (!this.#ours(parsed.data.threadId)) return;
        this.turnId ??= parsed.data.turn.id;
        if (method === 'turn/completed' && parsed.data.turn.id === this.turnId && this.turnEnd === undefined) {
          const { id, status, error } = parsed.data.turn;
          this.turnEnd = { turnId: id, status, error: error ?? undefined };
          this.#turnEnded.resolve(this.turnEnd);
        }
        return;
      }
      case 'error': {
        const parsed = ErrorParams.safeParse(params);
        if (!parsed.success) return void this.protocolError();
        if (parsed.data.threadId === undefined || this.#ours(parsed.data.threadId)) {
          this.lastError = `${parsed.data.error.message}${parsed.data.willRetry ? ' (codex will retry)' : ''}`;
        }
        return;
      }
      default:
        return; // deltas, status changes, warnings, rate limits…: not receipt material
    }
  }

  #ours(threadId: string): boolean {
    return this.threadId === undefined || threadId === this.threadId;
  }

  #item(started: boolean, item: ThreadItem): void {
    if (TOOL_ITEM_TYPES.has(item.type)) {
      if (started) this.toolItemsStarted++;
      else this.toolItemsCompleted++;
      this.steps.tool(item.id, {
        title: toolTitle(item),
        status: item.status ?? null,
        output: textField(item, 'aggregatedOutput'),
      });
      return;
    }
    if (started) return;
    if (item.type === 'agentMessage') {
      this.messages++;
      this.finalText = item.text ?? '';
      this.steps.message(this.finalText);
    } else if (item.type === 'reasoning') {
      this.thoughts++;
    }
  }

  /** The receipt of this run as observed so far, closed with how it ended. */
  receipt(end: ReceiptEnd): HarnessRunReceipt {
    const input = this.#input;
    const version = this.cliVersion ?? versionFromUserAgent(this.userAgent);
    const receipt: HarnessRunReceipt = {
      driver: 'codex',
      runId: input.runId,
      provider: version === undefined ? { name: 'codex' } : { name: 'codex', version },
      contextDigest: input.contextDigest,
      artifacts: end.artifacts,
      artifactRefusals: end.artifactRefusals,
      counts: {
        messages: this.messages,
        thoughts: this.thoughts,
        toolItemsStarted: this.toolItemsStarted,
        toolItemsCompleted: this.toolItemsCompleted,
        protocolErrors: this.protocolErrors,
      },
      stopReason: end.stopReason,
      timings: {
        startedAt: this.startedAt.toISOString(),
        endedAt: new Date().toISOString(),
        durationMs: Math.max(0, performance.now() - this.#startedMs),
      },
    };
    const model = this.model ?? input.model;
    if (model !== undefined) receipt.model = model;
    if (this.sessionId !== undefined) receipt.sessionId = this.sessionId;
    if (this.threadId !== undefined) receipt.threadId = this.threadId;
    if (this.turnId !== undefined) receipt.turnId = this.turnId;
    if (input.jobId !== undefined) receipt.jobId = input.jobId;
    if (this.usage !== undefined) receipt.usage = this.usage;
    if (this.finalText !== undefined) receipt.finalText = this.finalText;
    Object.assign(receipt, this.steps.receiptFields());
    if (end.exitCode !== undefined) receipt.exitCode = end.exitCode;
    if (end.signal !== undefined) receipt.signal = end.signal;
    return { ...receipt, ...this.#permissions?.receiptField() };
  }
}

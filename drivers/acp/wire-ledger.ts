import { RunSteps } from '../run-steps.js';
import { StringDecoder } from 'node:string_decoder';
import {
  ContentChunk,
  InitializeResult,
  NewSessionResult,
  PromptResult,
  RawMessage,
  SessionUpdateParams,
  ToolCallUpdate,
  type JsonRpcId,
} from './wire-schema.js';

export type WireDirection = 'agent_to_client' | 'client_to_agent';
/** Observer of every raw line, parsed when it is JSON (`undefined` when it is not). */
export type WireObserver = (direction: WireDirection, message: unknown, line: string) => void;

/** Splits a byte stream into lines without breaking multi-byte characters across chunks. */
class LineSplitter {
  #decoder = new StringDecoder('utf8');
  #pending = '';
  push(chunk: Uint8Array): string[] {
    this.#pending += this.#decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    const lines = this.#pending.split('\n');
    this.#pending = lines.pop() ?? '';
    return lines;
  }
  flush(): string[] {
    const rest = this.#pending + this.#decoder.end();
    this.#pending = '';
    return rest.trim() ? [rest] : [];
  }
}

const TERMINAL_TOOL_STATUS = new Set(['completed', 'failed']);

/**
 * The receipt's source of truth: every ndjson line in both directions, parsed with zod here rather
 * than through the SDK (which drops update kinds it does not know). Tolerates what real agents do:
 * a `tool_call_update` for an id never announced (upserted as started), a repeated `tool_call`,
 * updates after the prompt answered (counted, but not part of the final text), string ids.
 */
export class WireLedger {
  readonly #in = new LineSplitter();
  readonly #out = new LineSplitter();
  /** Ids of the requests this client sent, by method, to recognise their answers in the raw stream. */
  readonly #sent = new Map<string, JsonRpcId>();
  readonly #methodsSeen = new Set<string>();

  agentInfo: { name: string; version?: string } | undefined;
  protocolVersion: number | undefined;
  sessionId: string | undefined;
  model: string | undefined;
  messages = 0;
  thoughts = 0;
  protocolErrors = 0;
  readonly toolStarted = new Set<string>();
  readonly toolFinished = new Set<string>();
  promptAnswered = false;
  promptSent = false;
  stopReason: string | undefined;
  promptUsage: unknown;
  /** `_meta.quota` of the prompt answer: where gemini-cli (and claude-agent-acp, besides `usage`) report tokens. */
  promptQuota: unknown;
  lastUsageUpdate: unknown;
  /** Each message and tool call of the turn, in order, for the receipt's `steps`. */
  readonly steps = new RunSteps();
  /** Text of the agent message being received; earlier messages of the turn are not kept. */
  #finalText = '';
  /** `messageId` of that message (`null` when the agent sends none). */
  #messageId: string | null = null;
  /** A tool call was reported since that message's last chunk: the next chunk starts a new message. */
  #toolSinceText = false;

  constructor(private readonly observer?: WireObserver) {}

  /**
   * Bytes read from the agent's stdout. Returns the complete lines the SDK still needs to see:
   * everything except `session/update` notifications, which only the ledger consumes (the SDK
   * would validate them against its own schema and log every kind it does not know).
   */
  fromAgent(chunk: Uint8Array): string[] {
    return this.#in.push(chunk).filter((line) => this.#line('agent_to_client', line));
  }

  /** Bytes written to the agent's stdin. */
  toAgent(chunk: Uint8Array): void {
    for (const line of this.#out.push(chunk)) this.#line('client_to_agent', line);
  }

  /** Consumes a last unterminated line once the agent's stdout has ended; returns it if the SDK needs it. */
  endOfAgentOutput(): string[] {
    return this.#in.flush().filter((line) => this.#line('agent_to_client', line));
  }

  /** True once the client has sent this method at least once (e.g. `session/cancel`). */
  sent(method: string): boolean {
    return this.#methodsSeen.has(method);
  }

  /**
   * The turn's last agent message: its `agent_message_chunk` texts concatenated; undefined when
   * empty. A message ends where the chunks' `messageId` changes or a tool call reports in between,
   * so an adapter's notice sent earlier in the turn (claude-agent-acp's gateway warning) is not
   * part of the final text, as the Codex driver keeps only the last agent message.
   */
  get finalText(): string | undefined {
    return this.#finalText === '' ? undefined : this.#finalText;
  }

  /** Usage exactly as the agent reported it, or undefined when it reported none. */
  get usage(): unknown {
    if (this.promptUsage === undefined && this.lastUsageUpdate === undefined && this.promptQuota === undefined)
      return undefined;
    return {
      ...(this.promptUsage !== undefined ? { promptResponse: this.promptUsage } : {}),
      ...(this.promptQuota !== undefined ? { promptQuota: this.promptQuota } : {}),
      ...(this.lastUsageUpdate !== undefined ? { lastUsageUpdate: this.lastUsageUpdate } : {}),
    };
  }

  #observe(direction: WireDirection, message: unknown, line: string): void {
    try {
      this.observer?.(direction, message, line);
    } catch {
      // An observer is a bystander: its failure must not break the run or the receipt.
    }
  }

  /** Records one line; true when the line must still be passed on to the SDK. */
  #line(direction: WireDirection, line: string): boolean {
    const text = line.trim();
    if (!text) return false;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.#observe(direction, undefined, text);
      if (direction === 'agent_to_client') this.protocolErrors++;
      return true; // the SDK answers it with a JSON-RPC parse error, as the protocol asks
    }
    this.#observe(direction, json, text);
    const parsed = RawMessage.safeParse(json);
    if (!parsed.success) {
      if (direction === 'agent_to_client') this.protocolErrors++;
      return true;
    }
    if (direction === 'client_to_agent') {
      this.#outgoing(parsed.data);
      return true;
    }
    if (parsed.data.method === 'session/update' && parsed.data.id === undefined) {
      this.#update(parsed.data.params);
      return false;
    }
    this.#incoming(parsed.data);
    return true;
  }

  #outgoing(message: RawMessage): void {
    if (message.method === undefined) return;
    this.#methodsSeen.add(message.method);
    if (message.id !== undefined) this.#sent.set(message.method, message.id);
    if (message.method === 'session/prompt') this.promptSent = true;
  }

  #incoming(message: RawMessage): void {
    if (message.method !== undefined) return; // an agent → client request; the SDK handlers answer it
    if (message.id === undefined || message.id === null) {
      if (message.error === undefined) this.protocolErrors++;
      return;
    }
    if (message.error !== undefined) return;
    if (message.id === this.#sent.get('initialize')) this.#initialized(message.result);
    else if (message.id === this.#sent.get('session/new')) this.#sessionCreated(message.result);
    else if (message.id === this.#sent.get('session/prompt')) this.#promptAnswer(message.result);
  }

  #initialized(result: unknown): void {
    const parsed = InitializeResult.safeParse(result);
    if (!parsed.success) return void this.protocolErrors++;
    this.protocolVersion = parsed.data.protocolVersion;
    const info = parsed.data.agentInfo;
    if (info)
      this.agentInfo = info.version === undefined ? { name: info.name } : { name: info.name, version: info.version };
  }

  #sessionCreated(result: unknown): void {
    const parsed = NewSessionResult.safeParse(result);
    if (!parsed.success) return void this.protocolErrors++;
    this.sessionId = parsed.data.sessionId;
    const configured = parsed.data.configOptions?.find((o) => o.category === 'model')?.currentValue;
    this.model = parsed.data.models?.currentModelId ?? (typeof configured === 'string' ? configured : undefined);
  }

  #promptAnswer(result: unknown): void {
    const parsed = PromptResult.safeParse(result);
    if (!parsed.success) return void this.protocolErrors++;
    this.promptAnswered = true;
    this.stopReason = parsed.data.stopReason;
    this.promptUsage = parsed.data.usage;
    this.promptQuota = parsed.data._meta?.quota;
  }

  #update(params: unknown): void {
    const parsed = SessionUpdateParams.safeParse(params);
    if (!parsed.success) return void this.protocolErrors++;
    const update = parsed.data.update;
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const chunk = ContentChunk.safeParse(update);
        if (!chunk.success) return void this.protocolErrors++;
        if (update.sessionUpdate === 'agent_thought_chunk') return void this.thoughts++;
        this.messages++;
        const inTurn = this.promptSent && !this.promptAnswered;
        if (!inTurn || chunk.data.content.type !== 'text') return;
        const messageId = chunk.data.messageId ?? null;
        const starts = this.#toolSinceText || messageId !== this.#messageId;
        if (starts) this.#finalText = '';
        this.#messageId = messageId;
        this.#toolSinceText = false;
        this.#finalText += chunk.data.content.text ?? '';
        this.steps.message(chunk.data.content.text ?? '', !starts);
        return;
      }
      case 'tool_call':
      case 'tool_call_update': {
        const tool = ToolCallUpdate.safeParse(update);
        if (!tool.success) return void this.protocolErrors++;
        this.toolStarted.add(tool.data.toolCallId);
        this.#toolSinceText = true;
        const output = (tool.data.content ?? [])
          .map((c) => (c.type === 'content' && c.content?.type === 'text' ? (c.content.text ?? '') : ''))
          .join('');
        this.steps.tool(tool.data.toolCallId, { title: tool.data.title, status: tool.data.status, output });
        if (tool.data.status && TERMINAL_TOOL_STATUS.has(tool.data.status)) this.toolFinished.add(tool.data.toolCallId);
        return;
      }
      case 'usage_update':
        this.lastUsageUpdate = update;
        return;
      default:
        return; // plan, commands, mode, session info, kinds newer than this driver: not counted
    }
  }
}

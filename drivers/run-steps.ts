import { z } from 'zod';

/** At most this many steps are kept per run; later ones are counted in `stepsOmitted`. */
export const RUN_STEPS_MAX = 200;
/** Characters kept of a message's text or a tool call's output (the rest is cut, and says so). */
export const STEP_TEXT_MAX = 4_000;
const TITLE_MAX = 500;

/**
 * One thing the agent said or did during its run, in order, as its protocol reported it: a
 * message (its text), or a tool call (its title as the agent gave it — a command line, a file, a
 * tool's name —, its last status and its output where the protocol carries one). Evidence for a
 * person reading the run, never input to a decision.
 */
export const RunStep = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('message'), text: z.string() }),
  z.object({
    kind: z.literal('tool'),
    id: z.string(),
    title: z.string(),
    status: z.string().nullable(),
    output: z.string().nullable(),
  }),
]);
export type RunStep = z.infer<typeof RunStep>;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * The steps of one run as a driver observes them (the ACP wire ledger, the Codex tally): bounded
 * in number and in text, so a chatty agent cannot grow the receipt without end.
 */
export class RunSteps {
  readonly #steps: RunStep[] = [];
  readonly #tools = new Map<string, Extract<RunStep, { kind: 'tool' }>>();
  #omitted = 0;
  /** The message step that chunks are appended to, until a boundary. */
  #open: Extract<RunStep, { kind: 'message' }> | undefined;

  #push(step: RunStep): boolean {
    if (this.#steps.length >= RUN_STEPS_MAX) {
      this.#omitted++;
      return false;
    }
    this.#steps.push(step);
    return true;
  }

  /** A whole message, or (with `continues`) more text of the message being received. */
  message(text: string, continues = false): void {
    if (continues && this.#open) {
      this.#open.text = cut(this.#open.text + text, STEP_TEXT_MAX);
      return;
    }
    const step = { kind: 'message' as const, text: cut(text, STEP_TEXT_MAX) };
    this.#open = this.#push(step) ? step : undefined;
  }

  /** A tool call started or updated: the first report adds it, later ones update what they carry. */
  tool(id: string, update: { title?: string | null; status?: string | null; output?: string | null }): void {
    this.#open = undefined;
    const known = this.#tools.get(id);
    if (known) {
      if (update.title) known.title = cut(update.title, TITLE_MAX);
      if (update.status) known.status = update.status;
      if (update.output) known.output = cut(update.output, STEP_TEXT_MAX);
      return;
    }
    const step = {
      kind: 'tool' as const,
      id,
      title: cut(update.title || '(untitled)', TITLE_MAX),
      status: update.status ?? null,
      output: update.output ? cut(update.output, STEP_TEXT_MAX) : null,
    };
    if (this.#push(step)) this.#tools.set(id, step);
  }

  /** The receipt's `steps` and `stepsOmitted`, or nothing when the run reported no step. */
  receiptFields(): { steps?: RunStep[]; stepsOmitted?: number } {
    if (this.#steps.length === 0) return {};
    return {
      steps: this.#steps.map((s) => ({ ...s })),
      ...(this.#omitted > 0 ? { stepsOmitted: this.#omitted } : {}),
    };
  }
}

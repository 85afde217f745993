import { z } from 'zod';

// Every shape that crosses the ledger's boundaries (HTTP bodies and answers, the port line, a row
// of its database file) is one zod schema here, shared by the server and the client.

const Name = z.string().min(1).max(200);

/** What a caller asks the ledger to do; `input` is any JSON, kept only as its digest. */
export const LedgerInput = z.strictObject({ operation: Name, target: Name, input: z.json() });
export type LedgerInput = z.infer<typeof LedgerInput>;

/** `POST /perform`: the caller's request id is stored as given, never checked for uniqueness. */
export const PerformRequest = z.strictObject({ requestId: Name, ...LedgerInput.shape });
export type PerformRequest = z.infer<typeof PerformRequest>;

/** `GET /lookup?requestId=…`. */
export const LookupQuery = z.strictObject({ requestId: Name });

/**
 * One committed entry of the ledger, which is also the receipt of the perform that appended it:
 * `inputDigest` is sha256 of the input's canonical JSON (the Host's `digestOf`), so a reconciler can
 * tell a receipt of its own intent from another request that reused the id.
 */
export const LedgerEntry = z.strictObject({
  seq: z.number().int().positive(),
  requestId: z.string(),
  operation: z.string(),
  target: z.string(),
  inputDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  committedAt: z.iso.datetime(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const PerformAnswer = z.strictObject({ receipt: LedgerEntry });
export const LookupAnswer = z.strictObject({ receipts: z.array(LedgerEntry) });
export const EntriesAnswer = z.strictObject({ entries: z.array(LedgerEntry) });

/**
 * The fault switches. Both commit the entry first (durably), then: `commit-then-drop` destroys the
 * connection without answering; `crash-after-commit` SIGKILLs the server itself before answering.
 */
export const FaultMode = z.enum(['none', 'commit-then-drop', 'crash-after-commit']);
export type FaultMode = z.infer<typeof FaultMode>;

/** `POST /faults`: `times` performs hit the fault, then it switches itself off; omitted, it stays on. */
export const FaultRequest = z.strictObject({ mode: FaultMode, times: z.number().int().positive().optional() });
export type FaultRequest = z.infer<typeof FaultRequest>;

/** The switch as it stands (`remaining: null`: until switched off). */
export const FaultState = z.strictObject({ mode: FaultMode, remaining: z.number().int().positive().nullable() });
export type FaultState = z.infer<typeof FaultState>;

/** Every refusal the server answers (4xx, 5xx). */
export const ErrorAnswer = z.strictObject({ code: z.string(), path: z.string(), message: z.string() });

/** The one line the server prints on stdout once it listens. */
export const PortLine = z.strictObject({ port: z.number().int().min(1).max(65535) });
export type PortLine = z.infer<typeof PortLine>;

/**
 * A row of `entries` as better-sqlite3 returns it. The table lets every column but `request_id`
 * hold NULL; this ledger always writes them, so a NULL is a foreign row and fails here.
 */
export const EntryRow = z
  .strictObject({
    seq: z.number().int(),
    request_id: z.string(),
    operation: z.string(),
    target: z.string(),
    input_digest: z.string(),
    committed_at: z.string(),
  })
  .transform((row) => ({
    seq: row.seq,
    requestId: row.request_id,
    operation: row.operation,
    target: row.target,
    inputDigest: row.input_digest,
    committedAt: row.committed_at,
  }))
  .pipe(LedgerEntry);

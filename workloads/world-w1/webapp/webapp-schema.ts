import { z } from 'zod';

// Every shape that crosses the web app's boundaries (the form body, query strings, the control
// routes' JSON, the port line, a row of its database file) is one zod schema here, shared by the
// server and its clients.

const Name = z.string().min(1).max(200);
const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** An item's name as it appears in `/items/:name`. */
export const ItemName = z.string().regex(/^[a-z0-9-]{1,64}$/, 'lower-case letters, digits and dashes, 1 to 64');

/** `POST /orders`, form-encoded: every field once, as the item page's form names them. */
export const OrderForm = z.strictObject({
  item: ItemName,
  quantity: z
    .string()
    .regex(/^[1-9]\d{0,5}$/, 'a whole number from 1 to 999999')
    .transform(Number),
  note: z.string().min(1).max(500),
  /** The item's version when the form was filled (the hidden field): a submit for another is refused. */
  version: Digest,
  /** The digest of the input the submitter says it performs (`digestOf(input)`), stored as given. */
  inputDigest: Digest,
});
export type OrderForm = z.output<typeof OrderForm>;

/** `GET /orders?note=…`: the history of the orders whose note is exactly `note`; no note: every order. */
export const HistoryQuery = z.strictObject({ note: z.string().min(1).max(500).optional() });

/** An item of the catalogue; `version` is the digest of its name, title, price and revision. */
export const Item = z.strictObject({
  name: ItemName,
  title: z.string(),
  priceCents: z.number().int().nonnegative(),
  revision: z.number().int().positive(),
  version: Digest,
});
export type Item = z.infer<typeof Item>;

/** One committed order: the web app's own record, and what its confirmation and history pages show. */
export const Order = z.strictObject({
  orderNumber: z.number().int().positive(),
  item: ItemName,
  quantity: z.number().int().positive(),
  note: z.string(),
  itemVersion: Digest,
  inputDigest: Digest,
  committedAt: z.iso.datetime(),
});
export type Order = z.infer<typeof Order>;

/** A row of `orders` as better-sqlite3 returns it; a NULL or a foreign shape fails here. */
export const OrderRow = z
  .strictObject({
    order_number: z.number().int(),
    item: z.string(),
    quantity: z.number().int(),
    note: z.string(),
    item_version: z.string(),
    input_digest: z.string(),
    committed_at: z.string(),
  })
  .transform((row) => ({
    orderNumber: row.order_number,
    item: row.item,
    quantity: row.quantity,
    note: row.note,
    itemVersion: row.item_version,
    inputDigest: row.input_digest,
    committedAt: row.committed_at,
  }))
  .pipe(Order);

/** A row of `items`. */
export const ItemRow = z.strictObject({
  name: z.string(),
  title: z.string(),
  price_cents: z.number().int(),
  revision: z.number().int(),
});

/**
 * The fault switch of `POST /orders`. Both commit the order first (durably), then:
 * `commit-then-drop` destroys the socket without answering; `delay-confirmation` holds the
 * confirmation back `delayMs` before sending it.
 */
export const FaultMode = z.enum(['none', 'commit-then-drop', 'delay-confirmation']);
export type FaultMode = z.infer<typeof FaultMode>;

/** `POST /control/faults`: `times` submits hit the fault, then it switches itself off; omitted, it stays on. */
export const FaultRequest = z.strictObject({
  mode: FaultMode,
  times: z.number().int().positive().optional(),
  /** For `delay-confirmation`: how long the confirmation is held back (default 60000). */
  delayMs: z.number().int().nonnegative().max(600_000).optional(),
});
export type FaultRequest = z.infer<typeof FaultRequest>;

/** The switch as it stands (`remaining: null`: until switched off). */
export const FaultState = z.strictObject({
  mode: FaultMode,
  remaining: z.number().int().positive().nullable(),
  delayMs: z.number().int().nonnegative(),
});
export type FaultState = z.infer<typeof FaultState>;

/** `POST /control/identity`: the identity every page states from now on. */
export const IdentityRequest = z.strictObject({ identity: Name });
export const IdentityState = IdentityRequest;

/** `GET /control/orders`. */
export const OrdersAnswer = z.strictObject({ orders: z.array(Order) });

/** Every refusal a control route answers (4xx, 5xx); a page's refusal carries the same in its meta tags. */
export const ErrorAnswer = z.strictObject({ code: z.string(), path: z.string(), message: z.string() });

/** The one line the server prints on stdout once it listens. */
export const PortLine = z.strictObject({ port: z.number().int().min(1).max(65535) });
export type PortLine = z.infer<typeof PortLine>;

import { openRecordsFile, readRecordsFile, rowsOf } from '../../shared/records-file.js';
import { digestOf } from '../../../store/index.js';
import { Item, ItemRow, OrderRow, type Order, type OrderForm } from './webapp-schema.js';

/**
 * The schema. Orders are append-only (the triggers make it a property of the file) and nothing is
 * unique but the order number: the web app is non-idempotent, so a second submit of the same form
 * is a second order — the duplicate a client must avoid.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS items (
  name TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  price_cents INTEGER NOT NULL,
  revision INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
  order_number INTEGER PRIMARY KEY,
  item TEXT NOT NULL,
  quantity INTEGER NOT NULL,
  note TEXT NOT NULL,
  item_version TEXT NOT NULL,
  input_digest TEXT NOT NULL,
  committed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_note ON orders (note);
CREATE TRIGGER IF NOT EXISTS orders_no_update BEFORE UPDATE ON orders
  BEGIN SELECT RAISE(ABORT, 'orders are append-only'); END;
CREATE TRIGGER IF NOT EXISTS orders_no_delete BEFORE DELETE ON orders
  BEGIN SELECT RAISE(ABORT, 'orders are append-only'); END;
`;

/** The catalogue a new file starts with (an existing file keeps its own). */
export const SEED_ITEMS = [
  { name: 'widget', title: 'Widget', priceCents: 1250 },
  { name: 'gadget', title: 'Gadget', priceCents: 4000 },
] as const;

const COLUMNS = 'order_number, item, quantity, note, item_version, input_digest, committed_at';

/** The version digest of an item: it moves whenever the item's title, price or revision does. */
export function itemVersion(item: { name: string; title: string; priceCents: number; revision: number }): string {
  return digestOf({ name: item.name, title: item.title, priceCents: item.priceCents, revision: item.revision });
}

function itemOf(row: unknown): Item {
  const r = ItemRow.parse(row);
  const fields = { name: r.name, title: r.title, priceCents: r.price_cents, revision: r.revision };
  return Item.parse({ ...fields, version: itemVersion(fields) });
}

/** Whether an order was appended, or refused because the item moved (nothing appended). */
export type OrderOutcome = { ok: true; order: Order } | { ok: false; current: Item | undefined };

/** The server's handle on its file: the only writer. */
export interface WebappDb {
  item(name: string): Item | undefined;
  /**
   * Appends the order if `form.version` is the item's current version, in one transaction (the
   * check and the append cannot be split by a change). Durable on return: WAL with
   * `synchronous = FULL` syncs the log before the commit returns. Throws (nothing appended) if the
   * database refuses the write.
   */
  order(form: OrderForm): OrderOutcome;
  /** Bumps the item's revision (so its version moves) and returns it as it now is. */
  changeItem(name: string): Item | undefined;
  /** The orders whose note is exactly `note` (every order when undefined), in order-number order. */
  orders(note?: string): Order[];
  close(): void;
}

/** Opens (creating and seeding if needed) the web app's file for writing: WAL, `synchronous = FULL`. */
export function openWebappDb(file: string): WebappDb {
  const db = openRecordsFile(file, SCHEMA);
  const seed = db.prepare('INSERT OR IGNORE INTO items (name, title, price_cents, revision) VALUES (?, ?, ?, 1)');
  for (const item of SEED_ITEMS) seed.run(item.name, item.title, item.priceCents);
  const getItem = db.prepare('SELECT name, title, price_cents, revision FROM items WHERE name = ?');
  const bump = db.prepare('UPDATE items SET revision = revision + 1 WHERE name = ?');
  const insert = db.prepare(
    'INSERT INTO orders (item, quantity, note, item_version, input_digest, committed_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const byNote = db.prepare(`SELECT ${COLUMNS} FROM orders WHERE note = ? ORDER BY order_number`);
  const all = db.prepare(`SELECT ${COLUMNS} FROM orders ORDER BY order_number`);
  const item = (name: string) => {
    const row = getItem.get(name);
    return row === undefined ? undefined : itemOf(row);
  };
  const order = db.transaction((form: OrderForm): OrderOutcome => {
    const current = item(form.item);
    if (current === undefined || current.version !== form.version) return { ok: false, current };
    const committedAt = new Date().toISOString();
    const { lastInsertRowid } = insert.run(
      form.item,
      form.quantity,
      form.note,
      current.version,
      form.inputDigest,
      committedAt,
    );
    const appended: Order = {
      orderNumber: Number(lastInsertRowid),
      item: form.item,
      quantity: form.quantity,
      note: form.note,
      itemVersion: current.version,
      inputDigest: form.inputDigest,
      committedAt,
    };
    return { ok: true, order: appended };
  });
  return {
    item,
    order: (form) => order(form),
    changeItem(name) {
      bump.run(name);
      return item(name);
    },
    orders: (note) => rowsOf(note === undefined ? all.all() : byNote.all(note), OrderRow),
    close: () => void db.close(),
  };
}

/** The orders of a web-app file, read from the file itself (`readRecordsFile`: whatever any page showed). */
export function readWebappFile(file: string): Order[] {
  return readRecordsFile(file, `SELECT ${COLUMNS} FROM orders ORDER BY order_number`, OrderRow);
}

/** The orders in the file submitted with `input` (their input digest is `digestOf(input)`), whatever their notes. */
export function ordersWithInput(file: string, input: unknown): Order[] {
  const digest = digestOf(input);
  return readWebappFile(file).filter((order) => order.inputDigest === digest);
}

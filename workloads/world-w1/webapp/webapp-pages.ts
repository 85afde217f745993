import type { Item, Order } from './webapp-schema.js';

// The web app's HTML. Every page names the site's identity (`<meta name="site-identity">`); a
// refusal names its code and field path in meta tags too, so a browser reads the same data a JSON
// client would. Every value is escaped: the order note is free text.

const escape = (text: string | number): string =>
  String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

function page(identity: string, title: string, body: string, meta: Record<string, string> = {}): string {
  const metas = Object.entries({ 'site-identity': identity, ...meta })
    .map(([name, content]) => `<meta name="${escape(name)}" content="${escape(content)}">`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${metas}
<title>${escape(title)}</title>
</head>
<body>
<h1>${escape(title)}</h1>
${body}
</body>
</html>
`;
}

/** `GET /items/:name`: the item and its order form; the hidden `version` is the item's current one. */
export function itemPage(identity: string, item: Item): string {
  return page(
    identity,
    item.title,
    `<p id="price" data-value="${item.priceCents}">${(item.priceCents / 100).toFixed(2)}</p>
<form id="order" method="post" action="/orders">
<input type="hidden" name="item" value="${escape(item.name)}">
<input type="hidden" name="version" value="${escape(item.version)}">
<input type="hidden" name="inputDigest" value="">
<label>Quantity <input type="number" name="quantity" min="1" value="1"></label>
<label>Order note <input type="text" name="note" value=""></label>
<button type="submit" id="submit">Place order</button>
</form>`,
    { 'item-version': item.version },
  );
}

function orderFields(order: Order): string {
  return `<dl>
<dt>Order</dt><dd class="order-number">${order.orderNumber}</dd>
<dt>Item</dt><dd class="item">${escape(order.item)}</dd>
<dt>Quantity</dt><dd class="quantity">${order.quantity}</dd>
<dt>Note</dt><dd class="note">${escape(order.note)}</dd>
<dt>Item version</dt><dd class="item-version">${escape(order.itemVersion)}</dd>
<dt>Input digest</dt><dd class="input-digest">${escape(order.inputDigest)}</dd>
<dt>Committed</dt><dd class="committed-at">${escape(order.committedAt)}</dd>
</dl>`;
}

/** `POST /orders`, 200: "Order N confirmed", with the note and the input digest. */
export function confirmationPage(identity: string, order: Order): string {
  return page(
    identity,
    `Order ${order.orderNumber} confirmed`,
    `<section id="confirmation" data-order-number="${order.orderNumber}">\n${orderFields(order)}\n</section>`,
  );
}

/** `GET /orders?note=…`: one `<li class="order">` per order, in order-number order. */
export function historyPage(identity: string, note: string | undefined, orders: Order[]): string {
  const items = orders.map((order) => `<li class="order">\n${orderFields(order)}\n</li>`).join('\n');
  return page(
    identity,
    note === undefined ? 'Orders' : `Orders noted ${note}`,
    `<p id="count" data-value="${orders.length}">${orders.length} order(s)</p>\n<ul id="orders">\n${items}\n</ul>`,
  );
}

/** A refusal as a page: the code, the field path and the message in meta tags and in the body. */
export function refusalPage(identity: string, refusal: { code: string; path: string; message: string }): string {
  return page(
    identity,
    `Refused: ${refusal.code}`,
    `<p id="error" data-code="${escape(refusal.code)}">${escape(refusal.message)}</p>`,
    {
      'error-code': refusal.code,
      'error-path': refusal.path,
    },
  );
}

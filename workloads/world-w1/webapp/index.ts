// World W1's web app: a separate server process with its own durable, non-idempotent order file, a
// form a browser submits, and the client side (process control, the control routes, a read-only
// reader of the file, the browser adapter's config for it and the comparison's adapters). The
// server is `server.js`, run as a process.
export { startWebapp, type StartWebappOptions, type WebappExit, type WebappProcess } from './webapp-process.js';
export { setWebappFault, setWebappIdentity, changeWebappItem, webappOrders, resetWebapp } from './control.js';
export { readWebappFile, ordersWithInput, itemVersion, SEED_ITEMS } from './webapp-db.js';
export { webappBrowserConfig, type WebappBrowserOptions } from './browser-config.js';
export { findChromium, webappAdapters, type WebappAdapters } from './browser-adapters.js';
export { WEBAPP_CODES, WebappError, type WebappCode } from './webapp-error.js';
export { Order, Item, OrderForm, FaultMode, FaultRequest, FaultState, ErrorAnswer, PortLine } from './webapp-schema.js';

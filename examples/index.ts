/**
 * Examples are programs, not library code: `embedded-service.ts` (a Node HTTP service embedding
 * `createSupervisor`) and `task-events.ts` (scripts that send events to Task actors through a
 * running `ordivon serve`), and `real-providers.ts` (the demo's Task with a real `codex app-server` and a
 * real `hermes acp`). Nothing is exported.
 */
export {};

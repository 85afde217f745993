/**
 * Examples are programs, not library code: `embedded-service.ts` (a Node HTTP service embedding
 * `createSupervisor`) and `task-events.ts` (scripts that send events to Task actors through a
 * running `ordivon serve`). Nothing is exported.
 */
export {};

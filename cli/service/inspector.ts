import type { InspectionEvent } from 'xstate';
import type * as StatelyInspect from '@statelyai/inspect';

export interface InspectorHandle {
  inspect: (event: InspectionEvent) => void;
  stop(): void;
}

/**
 * Connects an `@statelyai/inspect` WebSocket inspector to `url` (an inspector server the user
 * runs, e.g. `createInspectorServer` from `@statelyai/inspect/server`). The package is a dev
 * dependency, loaded only when `--inspect` is given; without it this fails `inspector_missing`.
 * The inspector buffers events until its socket opens and reconnects on its own.
 */
export async function startInspector(url: string): Promise<InspectorHandle> {
  let mod: typeof StatelyInspect;
  try {
    mod = await import('@statelyai/inspect');
  } catch (error) {
    const { CliError } = await import('../cli-io.js');
    throw new CliError(
      'inspector_missing',
      `--inspect needs the @statelyai/inspect package: ${(error as Error).message}`,
    );
  }
  const inspector = mod.createWebSocketInspector({ url });
  return {
    inspect: (event) => inspector.inspect.next?.(event),
    stop: () => inspector.stop(),
  };
}

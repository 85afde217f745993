import { StoreError, type EventStore } from '../store/index.js';
import { ReadSetContext } from '../objects/index.js';

/** A compiled Context as admission needs it, kept by digest (objects are immutable, so it never goes stale). */
interface CompiledContextFacts {
  taskId: string;
  generation: number;
  readSet: ReadSetContext | undefined;
}
const compiledContexts = new Map<string, CompiledContextFacts>();
const COMPILED_CONTEXTS_KEPT = 1024;

/**
 * A Context this Task compiled, by digest: its generation, and its read set (undefined for a
 * Context written before read sets: nothing to re-validate). Undefined when the digest names no
 * Context of this Task (absent, a blob or another kind of object, another Task's).
 */
export function contextOf(
  store: Pick<EventStore, 'hasObject' | 'getObject'>,
  taskId: string,
  digest: string,
): Omit<CompiledContextFacts, 'taskId'> | undefined {
  let facts = compiledContexts.get(digest);
  if (!facts) {
    if (!store.hasObject(digest)) return undefined;
    let object: { kind: string; body: { taskId: string; generation: number } };
    try {
      object = store.getObject(digest);
    } catch (error) {
      // A blob (artifact bytes) is no object: the digest names no Context.
      if (error instanceof StoreError && error.code === 'object_missing') return undefined;
      throw error;
    }
    if (object.kind !== 'context') return undefined;
    const parsed = ReadSetContext.safeParse(object.body);
    facts = {
      taskId: object.body.taskId,
      generation: object.body.generation,
      readSet: parsed.success ? parsed.data : undefined,
    };
    if (compiledContexts.size >= COMPILED_CONTEXTS_KEPT) compiledContexts.delete(compiledContexts.keys().next().value!);
    compiledContexts.set(digest, facts);
  }
  return facts.taskId === taskId ? { generation: facts.generation, readSet: facts.readSet } : undefined;
}

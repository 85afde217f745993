import { z } from 'zod';

/** The name of an environment variable (POSIX portable: letters, digits, `_`, not starting with a digit). */
export const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

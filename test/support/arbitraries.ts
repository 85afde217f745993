import fc from 'fast-check';

/** A stored-format digest (`sha256:<64 hex>`). */
export const digestArb = fc.stringMatching(/^sha256:[0-9a-f]{64}$/);

/** Any value `EventRecord` accepts (ids up to `maxIdLength`), for property tests of the store's record paths. */
export function eventRecordArb(maxIdLength = 200) {
  return fc.record({
    id: fc.string({ minLength: 1, maxLength: maxIdLength }),
    type: fc.string({ minLength: 1, maxLength: 20 }),
    origin: fc.constantFrom('host' as const, 'external' as const),
    at: fc.string(),
    mono: fc.double({ noNaN: true, noDefaultInfinity: true }),
    data: fc.dictionary(fc.string(), fc.jsonValue()),
    refs: fc.array(digestArb, { maxLength: 4 }),
    disposition: fc.oneof(
      fc.constant({ admitted: true as const }),
      fc.record({ admitted: fc.constant(false as const), code: fc.string({ minLength: 1 }) }),
    ),
    prev: fc.option(digestArb, { nil: null }),
  });
}

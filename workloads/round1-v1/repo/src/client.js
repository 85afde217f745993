// Reads the records the inventory service sends. The schema version a record declares decides
// how it is read, so a record of a version this client does not know is refused, never guessed at.

/** The record schema versions this client reads. */
export const SUPPORTED_SCHEMA_VERSIONS = Object.freeze([0]);

/** A record declares a schema version this client does not read (or declares none). */
export class SchemaVersionError extends Error {
  constructor(version) {
    super(
      `unsupported schemaVersion ${JSON.stringify(version)}; this client reads ${SUPPORTED_SCHEMA_VERSIONS.join(', ')}`,
    );
    this.name = 'SchemaVersionError';
    this.version = version;
  }
}

/** A record of a known version is malformed. */
export class RecordShapeError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RecordShapeError';
  }
}

/**
 * Parses one record (a JSON string or an already-parsed object) into
 * `{ schemaVersion, id, name, tags }`.
 */
export function parseRecord(input) {
  const record = typeof input === 'string' ? JSON.parse(input) : input;
  if (record === null || typeof record !== 'object' || Array.isArray(record))
    throw new RecordShapeError('a record is a JSON object');
  if (!SUPPORTED_SCHEMA_VERSIONS.includes(record.schemaVersion)) throw new SchemaVersionError(record.schemaVersion);
  if (typeof record.id !== 'string' || record.id === '') throw new RecordShapeError('id: a non-empty string');
  if (typeof record.name !== 'string') throw new RecordShapeError('name: a string');
  return { schemaVersion: record.schemaVersion, id: record.id, name: record.name, tags: readTags(record) };
}

function readTags(record) {
  return [];
}

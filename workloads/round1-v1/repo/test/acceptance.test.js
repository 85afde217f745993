// Frozen acceptance tests: schema version 1 is read, version 0 still is, and anything else is
// refused. The Host checks their digests; a change that edits them is not accepted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRecord } from '../src/client.js';

const refusedAsVersion = (version) => (error) => error.name === 'SchemaVersionError' && error.version === version;

test('a version 0 record still parses, with no tags', () => {
  assert.deepEqual(parseRecord({ schemaVersion: 0, id: 'sku-17', name: 'Hex key set' }), {
    schemaVersion: 0,
    id: 'sku-17',
    name: 'Hex key set',
    tags: [],
  });
});

test('a version 0 record sent as JSON text parses the same way', () => {
  assert.deepEqual(parseRecord('{"schemaVersion":0,"id":"sku-18","name":"Torque driver"}'), {
    schemaVersion: 0,
    id: 'sku-18',
    name: 'Torque driver',
    tags: [],
  });
});

test('a version 1 record parses, its tags kept in order', () => {
  assert.deepEqual(parseRecord({ schemaVersion: 1, id: 'sku-40', name: 'Bench vise', tags: ['clamp', 'steel'] }), {
    schemaVersion: 1,
    id: 'sku-40',
    name: 'Bench vise',
    tags: ['clamp', 'steel'],
  });
});

test('a version 1 record whose tags are not strings is refused', () => {
  assert.throws(
    () => parseRecord({ schemaVersion: 1, id: 'sku-41', name: 'Pliers', tags: [3] }),
    (error) => error.name === 'RecordShapeError',
  );
});

test('a record of schema version 2 is refused with SchemaVersionError', () => {
  assert.throws(
    () => parseRecord({ schemaVersion: 2, id: 'sku-90', name: 'From the future', tags: [] }),
    refusedAsVersion(2),
  );
});

test('a record without a schemaVersion is refused with SchemaVersionError', () => {
  assert.throws(() => parseRecord({ id: 'sku-91', name: 'Unversioned' }), refusedAsVersion(undefined));
});

test('a schemaVersion given as text is not a version', () => {
  assert.throws(() => parseRecord({ schemaVersion: '1', id: 'sku-92', name: 'Quoted', tags: [] }), refusedAsVersion('1'));
});

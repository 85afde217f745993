'use strict';
// Frozen acceptance tests: the Host pins their digests when the Task is created.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { parseDuration } = require('../src/duration.js');

test('hours and minutes', () => assert.equal(parseDuration('1h30m'), 5_400_000));
test('seconds', () => assert.equal(parseDuration('45s'), 45_000));
test('milliseconds', () => assert.equal(parseDuration('250ms'), 250));
test('every unit at once', () => assert.equal(parseDuration('2h5m10s20ms'), 7_510_020));
test('minutes then milliseconds', () => assert.equal(parseDuration(' 1m500ms '), 60_500));
test('a repeated unit adds up', () => assert.equal(parseDuration('1m1m'), 120_000));
test('not a string', () => assert.throws(() => parseDuration(42), TypeError));
test('an unknown unit', () => assert.throws(() => parseDuration('3d'), SyntaxError));

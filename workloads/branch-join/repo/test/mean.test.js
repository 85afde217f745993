'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { mean } = require('../src/mean.js');

test('mean of numbers, and of none', () => {
  assert.equal(mean([1, 2, 3]), 2);
  assert.equal(mean([]), 0);
});

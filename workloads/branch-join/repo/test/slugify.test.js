'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slugify.js');

test('slugify lowercases and joins words with -', () => {
  assert.equal(slugify('hello world'), 'hello-world');
  assert.equal(slugify('Hello, World 2'), 'hello-world-2');
});

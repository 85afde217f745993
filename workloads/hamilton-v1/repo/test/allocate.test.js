// Frozen acceptance tests for specification v1. The Host checks their digests: a repair that
// edits them is not accepted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allocate } from '../src/allocate.js';

const seatsOf = (result) => Object.fromEntries(result.map((r) => [r.name, r.seats]));

test('textbook case: 10 seats among four parties', () => {
  const result = allocate(10, [
    { name: 'A', votes: 4700 },
    { name: 'B', votes: 2600 },
    { name: 'C', votes: 1800 },
    { name: 'D', votes: 900 },
  ]);
  // quotas 4.7, 2.6, 1.8, 0.9: wholes 4+2+1+0 = 7, leftovers to D (.9), C (.8), A (.7)
  assert.deepEqual(seatsOf(result), { A: 5, B: 2, C: 2, D: 1 });
});

test('leftover seats go to the largest remainders, not the smallest', () => {
  const result = allocate(7, [
    { name: 'North', votes: 5210 },
    { name: 'South', votes: 2730 },
    { name: 'East', votes: 1310 },
    { name: 'West', votes: 750 },
  ]);
  // quotas 3.647, 1.911, 0.917, 0.525: wholes 3+1+0+0 = 4, leftovers to East, South, North
  assert.deepEqual(seatsOf(result), { North: 4, South: 2, East: 1, West: 0 });
});

test('ties in remainder go to more votes, then to the name that sorts first', () => {
  const result = allocate(3, [
    { name: 'Beta', votes: 100 },
    { name: 'Alpha', votes: 100 },
    { name: 'Gamma', votes: 50 },
    { name: 'Delta', votes: 50 },
  ]);
  // quotas 1.0, 1.0, 0.5, 0.5: one seat left, remainders of Gamma and Delta tie, Delta sorts first
  assert.deepEqual(seatsOf(result), { Beta: 1, Alpha: 1, Gamma: 0, Delta: 1 });
});

test('result keeps input order and sums to the house size', () => {
  const parties = [
    { name: 'p1', votes: 123457 },
    { name: 'p2', votes: 98765 },
    { name: 'p3', votes: 55555 },
    { name: 'p4', votes: 31337 },
    { name: 'p5', votes: 2024 },
  ];
  for (const seats of [1, 2, 5, 11, 50, 101]) {
    const result = allocate(seats, parties);
    assert.deepEqual(result.map((r) => r.name), parties.map((p) => p.name));
    assert.equal(result.reduce((s, r) => s + r.seats, 0), seats);
    const total = parties.reduce((s, p) => s + p.votes, 0);
    for (const [i, r] of result.entries()) {
      const quota = (parties[i].votes * seats) / total;
      assert.ok(r.seats === Math.floor(quota) || r.seats === Math.ceil(quota), `${r.name} gets ${r.seats} for quota ${quota}`);
    }
  }
});

test('rejects an empty house or no votes', () => {
  assert.throws(() => allocate(0, [{ name: 'A', votes: 1 }]), RangeError);
  assert.throws(() => allocate(3, [{ name: 'A', votes: 0 }]), RangeError);
});

import { crc32c } from './crc32c.js';

/**
 * One journal record on disk, little-endian, padded with zeros to a multiple of 8 bytes:
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0 | 4 | payload length (never 0: a zero length is the zero-filled end of a segment) |
 * | 4 | 4 | CRC-32C of every byte from offset 8 to the payload's end |
 * | 8 | 8 | sequence number (the journal position; one more than the record before) |
 * | 16 | 8 | the sequence number of the first record of its group (the records of one write) |
 * | 24 | 32 | the chained digest of the transition (sha256 of its event, which names the one before) |
 * | 56 | length | payload |
 *
 * The group field is what tells a torn write from corruption: the records of one group reach the
 * disk in one write, whose sectors may land in any order until its fdatasync returns, so a bad
 * record followed by a valid one *of the same group* is a torn last write; followed by one of a
 * later group (written only after this group's fdatasync returned) it is damage to acknowledged
 * data.
 */
export const HEADER_BYTES = 56;
export const DIGEST_BYTES = 32;

export interface JournalRecord {
  seq: number;
  group: number;
  /** The 32 bytes of the chained digest. */
  digest: Uint8Array;
  payload: Uint8Array;
}

const padded = (n: number) => (n + 7) & ~7;

/** Bytes a record of `payloadBytes` takes on disk. */
export function recordBytes(payloadBytes: number): number {
  return padded(HEADER_BYTES + payloadBytes);
}

/** Writes `record` at `offset` of `into` (zeros assumed in the padding); returns the offset after it. */
export function encodeRecord(into: Uint8Array, offset: number, record: JournalRecord): number {
  const view = new DataView(into.buffer, into.byteOffset, into.byteLength);
  const length = record.payload.length;
  if (length === 0) throw new RangeError('a journal record needs a payload');
  if (record.digest.length !== DIGEST_BYTES) throw new RangeError('a journal digest is 32 bytes');
  view.setUint32(offset, length, true);
  view.setBigUint64(offset + 8, BigInt(record.seq), true);
  view.setBigUint64(offset + 16, BigInt(record.group), true);
  into.set(record.digest, offset + 24);
  into.set(record.payload, offset + HEADER_BYTES);
  const end = offset + HEADER_BYTES + length;
  view.setUint32(offset + 4, crc32c(into, offset + 8, end), true);
  return padded(end);
}

/** The record at `offset` if its length fits in `bytes` and its CRC holds (its seq is not checked here). */
export function decodeRecord(bytes: Uint8Array, offset: number): JournalRecord | undefined {
  if (offset + HEADER_BYTES > bytes.length) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(offset, true);
  const end = offset + HEADER_BYTES + length;
  if (length === 0 || end > bytes.length) return undefined;
  if (crc32c(bytes, offset + 8, end) !== view.getUint32(offset + 4, true)) return undefined;
  return {
    seq: Number(view.getBigUint64(offset + 8, true)),
    group: Number(view.getBigUint64(offset + 16, true)),
    digest: bytes.subarray(offset + 24, offset + HEADER_BYTES),
    payload: bytes.subarray(offset + HEADER_BYTES, end),
  };
}

/** How a segment's records end. */
export type SegmentEnd =
  /** Zeros from `end` on: the journal's clean end (or the unused rest of a sealed segment). */
  | { kind: 'clean' }
  /** A write cut short from `end` on: its group was never acknowledged; the journal ends there. */
  | { kind: 'torn' }
  /** A bad record at `end` followed by a valid record of a later group: acknowledged data damaged. */
  | { kind: 'corrupt'; later: number };

export interface SegmentScan {
  records: JournalRecord[];
  /** The offset after the last valid record: where the next write goes. */
  end: number;
  how: SegmentEnd;
}

function zeroFrom(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * Reads a segment's records from its start, expecting sequence numbers from `firstSeq` on. The
 * first record that is not valid (bad length or CRC, or not the expected seq) ends the records; what
 * follows decides how: zeros are a clean end; a valid record further on (looked for at every
 * 8-byte offset, records being aligned) of a group that began after the bad record's seq is
 * corruption; anything else is a torn write.
 */
export function scanSegment(bytes: Uint8Array, firstSeq: number): SegmentScan {
  const records: JournalRecord[] = [];
  let offset = 0;
  let expected = firstSeq;
  for (;;) {
    const record = decodeRecord(bytes, offset);
    if (record === undefined || record.seq !== expected) break;
    records.push(record);
    offset = padded(offset + HEADER_BYTES + record.payload.length);
    expected++;
  }
  if (zeroFrom(bytes, offset)) return { records, end: offset, how: { kind: 'clean' } };
  for (let at = offset + 8; at + HEADER_BYTES <= bytes.length; at += 8) {
    const later = decodeRecord(bytes, at);
    if (later !== undefined && later.seq > expected && later.group > expected)
      return { records, end: offset, how: { kind: 'corrupt', later: later.seq } };
  }
  return { records, end: offset, how: { kind: 'torn' } };
}

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of ext4 metadata, iSCSI and
 * RocksDB's WAL: node:zlib gained a (plain CRC-32) `crc32` only in Node 22 and the package runs on
 * Node 20. Slicing-by-8 tables (eight bytes per step rather than one), since every journal record
 * of a few kilobytes is checksummed on the admission path and again at boot.
 */
const TABLES: Uint32Array[] = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const first = tables[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    first[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = first[n]!;
    for (let t = 1; t < 8; t++) {
      c = first[c & 0xff]! ^ (c >>> 8);
      tables[t]![n] = c >>> 0;
    }
  }
  return tables;
})();

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];

/** CRC-32C of `bytes[start, end)`, continuing `crc` (0 to start). */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
  let c = ~crc >>> 0;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    c ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    c =
      T7[c & 0xff]! ^
      T6[(c >>> 8) & 0xff]! ^
      T5[(c >>> 16) & 0xff]! ^
      T4[c >>> 24]! ^
      T3[bytes[i + 4]!]! ^
      T2[bytes[i + 5]!]! ^
      T1[bytes[i + 6]!]! ^
      T0[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = T0[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

import { readFileSync } from 'node:fs';

/**
 * This process's I/O counters from `/proc/self/io` (every thread, lmdb-js's write thread
 * included). Linux-specific: undefined where the file cannot be read.
 */
export interface ProcIo {
  /** Bytes handed to write-like system calls (`wchar`), page cache or not. */
  writeCallBytes: number;
  /** Write-like system calls (`syscw`). */
  writeCalls: number;
  /** Bytes this process caused to be sent to the storage layer (`write_bytes`). */
  storageWriteBytes: number;
}

/** Parses the text of a `/proc/<pid>/io` file; undefined when a field is missing. */
export function parseProcIo(text: string): ProcIo | undefined {
  const fields = new Map<string, number>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), Number(line.slice(colon + 1)));
  }
  const wchar = fields.get('wchar');
  const syscw = fields.get('syscw');
  const writeBytes = fields.get('write_bytes');
  if (wchar === undefined || syscw === undefined || writeBytes === undefined) return undefined;
  if (![wchar, syscw, writeBytes].every(Number.isFinite)) return undefined;
  return { writeCallBytes: wchar, writeCalls: syscw, storageWriteBytes: writeBytes };
}

/** `/proc/self/io` parsed, undefined where it cannot be read. */
export function readProcIo(): ProcIo | undefined {
  try {
    return parseProcIo(readFileSync('/proc/self/io', 'latin1'));
  } catch {
    return undefined;
  }
}

/**
 * CPU time the calling thread has run, in nanoseconds (the first field of
 * `/proc/thread-self/schedstat`); undefined where it cannot be read. `process.cpuUsage` counts
 * every thread of the process; this is the one thread alone (the main thread when called there).
 */
export function threadCpuNs(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/thread-self/schedstat', 'latin1');
  } catch {
    return undefined;
  }
  const ns = Number(text.split(' ')[0]);
  return Number.isFinite(ns) ? ns : undefined;
}

import { readFileSync } from 'node:fs';

/**
 * Which network peers a process tree contacted, as far as strace can tell: the launch is wrapped in
 * `strace -f` tracing only the calls that name a peer or carry a DNS query (connect, sendto,
 * sendmsg, sendmmsg), filtered in the kernel (--seccomp-bpf) so the traced agent runs at nearly
 * full speed. Payloads are printed in hex (-xx) so DNS query names can be read back.
 */
export function tracedLaunch(
  strace: string,
  log: string,
  launch: { command: string; args: readonly string[] },
): { command: string; args: string[] } {
  return {
    command: strace,
    args: [
      '-f',
      '-qq',
      '--seccomp-bpf',
      '-e',
      'trace=connect,sendto,sendmsg,sendmmsg',
      '-e',
      'signal=none',
      '-xx',
      '-s',
      '512',
      '-o',
      log,
      '--',
      launch.command,
      ...launch.args,
    ],
  };
}

export interface Peer {
  address: string;
  port: number;
  line: string;
}

const INET = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/;
const INET6 = /sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"/;

/** strace's `-xx` strings (`\\x31\\x32…`) back to text. */
function unhex(text: string): string {
  return text.replace(/\\x([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function loopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}

/** Every IPv4/IPv6 peer in the trace (Unix and netlink sockets are not network peers). */
export function peersIn(log: string): Peer[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const m = INET.exec(line) ?? INET6.exec(line);
      return m ? [{ address: unhex(m[2]!), port: Number(m[1]), line: unhex(line) }] : [];
    });
}

/** The peers that are neither loopback nor a DNS server (port 53): what an offline run must not have. */
export function foreignPeers(log: string): Peer[] {
  return peersIn(log).filter((p) => !loopback(p.address) && p.port !== 53);
}

/** The name asked for by a DNS query packet, or undefined when the bytes are not one. */
function queryName(packet: Buffer): string | undefined {
  if (packet.length < 17 || (packet[2]! & 0x80) !== 0 || packet.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let i = 12;
  while (i < packet.length && packet[i] !== 0) {
    const length = packet[i]!;
    if (length > 63 || i + 1 + length > packet.length) return undefined;
    labels.push(packet.subarray(i + 1, i + 1 + length).toString('latin1'));
    i += 1 + length;
  }
  return labels.length > 0 && i + 5 <= packet.length ? labels.join('.') : undefined;
}

/** Every host name the traced tree asked a DNS server for (the resolver's queries, deduplicated). */
export function dnsQueries(log: string): string[] {
  const names = new Set<string>();
  for (const m of readFileSync(log, 'utf8').matchAll(/"((?:\\x[0-9a-f]{2})+)"/g)) {
    const name = queryName(Buffer.from(m[1]!.replaceAll('\\x', ''), 'hex'));
    if (name !== undefined) names.add(name);
  }
  return [...names].sort();
}

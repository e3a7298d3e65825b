/**
 * A DNS server on 127.0.0.1 that the test controls, for resolvers pointed at it (`servers`). It
 * speaks just enough of RFC 1035 over UDP: it reads the one question of a query and answers A or
 * AAAA records (TTL 0, so c-ares' query cache keeps nothing between lookups), NODATA, NXDOMAIN or
 * SERVFAIL, or stays silent, the way a broken or hostile authoritative server can. Every question
 * is recorded, so a test can tell which names and record types reached DNS at all.
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { isIPv6 } from 'node:net';

/** What the server does with one question: addresses (none is NODATA), an error status, or nothing. */
export type DnsAnswer = readonly string[] | 'nxdomain' | 'servfail' | 'silent';

/** A question the server received. */
export interface DnsQuestion {
  name: string;
  type: 'A' | 'AAAA' | number;
}

/** A running test DNS server. */
export interface DnsServer {
  /** `127.0.0.1:<port>`, as `Resolver#setServers` takes it. */
  address: string;
  questions: DnsQuestion[];
  close(): Promise<void>;
}

/** Header flag bits and response codes (RFC 1035 §4.1.1). */
const QR_RESPONSE = 0x8000;
const RD_RECURSION_DESIRED = 0x0100;
const RA_RECURSION_AVAILABLE = 0x0080;
const RCODE = { ok: 0, servfail: 2, nxdomain: 3 } as const;
/** Record types and the IN class (RFC 1035 §3.2.2, RFC 3596). */
const TYPE_A = 1;
const TYPE_AAAA = 28;
const CLASS_IN = 1;
/** A compression pointer to the question's name, which always starts right after the header. */
const NAME_POINTER = 0xc00c;
const HEADER_BYTES = 12;

/** Starts a server on 127.0.0.1 that answers each question with `answer(question)`. */
export async function startDnsServer(answer: (question: DnsQuestion) => DnsAnswer): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const questions: DnsQuestion[] = [];
  socket.on('message', (query, peer) => {
    const parsed = parseQuestion(query);
    if (!parsed) return;
    questions.push(parsed.question);
    const verdict = answer(parsed.question);
    if (verdict === 'silent') return;
    socket.send(respond(query, parsed.end, parsed.question, verdict), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** The first question of a query and where it ends, or undefined for a packet we cannot read. */
function parseQuestion(query: Buffer): { question: DnsQuestion; end: number } | undefined {
  const labels: string[] = [];
  let offset = HEADER_BYTES;
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset]!;
    labels.push(query.toString('latin1', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  if (offset + 5 > query.length) return undefined;
  const code = query.readUInt16BE(offset + 1);
  const type = code === TYPE_A ? 'A' : code === TYPE_AAAA ? 'AAAA' : code;
  return { question: { name: labels.join('.'), type }, end: offset + 5 };
}

/** The response to `query`: its id and question, then the verdict as status and answers. */
function respond(
  query: Buffer,
  questionEnd: number,
  question: DnsQuestion,
  verdict: Exclude<DnsAnswer, 'silent'>,
): Buffer {
  const addresses =
    typeof verdict === 'string' ? [] : verdict.filter((a) => isIPv6(a) === (question.type === 'AAAA'));
  const rcode = typeof verdict === 'string' ? RCODE[verdict] : RCODE.ok;
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(
    QR_RESPONSE | (query.readUInt16BE(2) & RD_RECURSION_DESIRED) | RA_RECURSION_AVAILABLE | rcode,
    2,
  );
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  return Buffer.concat([header, query.subarray(HEADER_BYTES, questionEnd), ...addresses.map(record)]);
}

/** One answer record for the question's name: A for an IPv4 address, AAAA for IPv6, TTL 0. */
function record(address: string): Buffer {
  const data = isIPv6(address) ? ipv6Bytes(address) : Buffer.from(address.split('.').map(Number));
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(NAME_POINTER, 0);
  fixed.writeUInt16BE(isIPv6(address) ? TYPE_AAAA : TYPE_A, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(0, 6);
  fixed.writeUInt16BE(data.length, 10);
  return Buffer.concat([fixed, data]);
}

/** The 16 bytes of an IPv6 address written in hex groups, `::` allowed (no dotted IPv4 tail). */
function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [...groups(head), ...Array<string>(missing).fill('0'), ...groups(tail)];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

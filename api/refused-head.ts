/**
 * Reading a request head that Node's parser refused, from the bytes it hands over with the error
 * (`rawPacket`: the chunk it was parsing). Node refuses a header holding a character HTTP does not
 * allow (U+0000 and the other controls but tab) before any middleware sees the request; what is
 * read here lets server.ts still judge such a request the way the app judges every other one.
 */
import { SAFE_REQUEST_ID } from './middleware/request-id.ts';

/** A refused request's head, read leniently: enough to authenticate it and refuse it properly. */
export interface RefusedHead {
  method: string;
  url: string;
  /** HTTP/1.0 or HTTP/1.1. */
  minorVersion: 0 | 1;
  /** Names and values alternately, as `IncomingMessage.rawHeaders`; unreadable lines left out. */
  rawHeaders: string[];
  /** Lower-cased names, duplicates joined with `, ` as Node joins them (so two keys stay two). */
  headers: Record<string, string>;
  /** The refused header's name, lower-cased; '' when its line has no readable name. */
  refused: string;
}

/** The characters of a method or a header name (RFC 9110 `token`). */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const REQUEST_LINE = new RegExp(`^(${TOKEN}) ([!-~]+) HTTP/1\\.([01])$`);
const HEADER_NAME = new RegExp(`^(${TOKEN}):`);
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const REFUSED_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * The head in `raw` of the request that holds a refused character in a header line, when all of it
 * is there (request line through the empty line); undefined otherwise (the request line is at
 * fault, or the head began or ended in another chunk than the one Node read last). Requests
 * pipelined before it may share the chunk: the head is found around its refused line.
 */
export function readRefusedHead(raw: Buffer | undefined): RefusedHead | undefined {
  const lines = linesOf(raw);
  const refusedAt = refusedLine(lines);
  if (refusedAt < 0) return undefined;
  // Up to its request line, over header lines only; down to the empty line that ends the head.
  let first = refusedAt - 1;
  while (first > 0 && nameOf(lines[first]!) !== '' && !REQUEST_LINE.test(lines[first]!)) first--;
  const request = REQUEST_LINE.exec(lines[first]!);
  const end = lines.indexOf('', refusedAt);
  if (!request || end < 0) return undefined;
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  for (const line of lines.slice(first + 1, end)) {
    const name = HEADER_NAME.exec(line)?.[1];
    if (name === undefined) continue;
    const value = line.slice(name.length + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    rawHeaders.push(name, value);
    const key = name.toLowerCase();
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  const minorVersion = request[3] === '0' ? 0 : 1;
  return {
    method: request[1]!,
    url: request[2]!,
    minorVersion,
    rawHeaders,
    headers,
    refused: nameOf(lines[refusedAt]!),
  };
}

/**
 * The name of the first header whose line holds a refused character (CONTRACT.md: a U+0000 in a
 * header is refused naming the field); undefined when the request line is at fault or the bytes
 * Node read do not show it.
 */
export function refusedHeader(raw: Buffer | undefined): string | undefined {
  const lines = linesOf(raw);
  const refusedAt = refusedLine(lines);
  return refusedAt < 0 ? undefined : nameOf(lines[refusedAt]!) || undefined;
}

/**
 * The client's X-Request-Id when it is a safe one (echoed as usual): the header's value, or the
 * first such header in the bytes Node read.
 */
export function sentRequestId(from: string | Buffer | undefined): string | undefined {
  const sent =
    typeof from === 'string'
      ? from
      : from && /^x-request-id:[ \t]*([^\r\n]*?)[ \t]*\r?$/im.exec(from.toString('latin1'))?.[1];
  return sent && SAFE_REQUEST_ID.test(sent) ? sent : undefined;
}

function linesOf(raw: Buffer | undefined): string[] {
  return (raw?.toString('latin1') ?? '').split(/\r?\n/);
}

/** The index of the first line after the first one (a request line) with a refused character; -1. */
function refusedLine(lines: readonly string[]): number {
  return lines.findIndex((line, i) => i > 0 && REFUSED_CHARACTER.test(line));
}

/** A header line's name, lower-cased, or '' when the line has none HTTP would accept. */
function nameOf(line: string): string {
  return HEADER_NAME.exec(line)?.[1]?.toLowerCase() ?? '';
}

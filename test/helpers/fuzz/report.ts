/**
 * Reporting the fuzz: deduplicated failures, each with a curl command to reproduce it, and the
 * answers by operation (how deep the requests reached). Equal failures share one signature (ids and
 * timings replaced), so a survey of 4,000 requests reads as a short to-do list, each entry with the
 * hostile input shapes most often behind it and its shortest example.
 */
import type { Violation } from './checks.ts';
import type { Exchange } from './exchange.ts';
import type { FuzzFixture } from './fixture.ts';
import { describeRequest, escapeInvisible, excerpt } from './request.ts';

/** One distinct failure: where, what, how often, with which input shapes, and an example. */
export interface Finding {
  operation: string;
  kind: string;
  status: number;
  error: string;
  detail: string;
  count: number;
  tags: Map<string, number>;
  example: Exchange;
}

/** Replaces ids and numbers in a violation's detail so that equal failures share one signature. */
const normalise = (detail: string) =>
  detail
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/\d+ ms/g, 'N ms');

/** The failures and answers of one fuzz run. */
export class FuzzReport {
  /** Distinct failures, by signature. */
  readonly findings = new Map<string, Finding>();
  /** Answers by operation (`409 SLOT_NOT_AVAILABLE` → count): how deep the requests reached. */
  readonly answers = new Map<string, Map<string, number>>();

  /** Counts the answer and files its violations (hand-picked cases report their own). */
  record(exchange: Exchange, { file = true } = {}): void {
    const op = `${exchange.request.operation.method} ${exchange.request.operation.path}`;
    const counts = this.answers.get(op) ?? new Map<string, number>();
    const answer = `${exchange.response.status} ${exchange.response.body?.error ?? ''}`.trim();
    this.answers.set(op, counts.set(answer, (counts.get(answer) ?? 0) + 1));
    if (!file) return;
    for (const v of exchange.violations) this.file(op, exchange, v);
  }

  /** The distinct failures of `operation` ("GET /bookings"), or of all operations. */
  findingsOf(operation?: string): Finding[] {
    return [...this.findings.values()].filter((f) => operation === undefined || f.operation === operation);
  }

  private file(op: string, exchange: Exchange, v: Violation): void {
    const error = String(exchange.response.body?.error ?? '');
    const key = [op, v.kind, exchange.response.status, error, normalise(v.detail)].join(' | ');
    let finding = this.findings.get(key);
    if (!finding) {
      finding = {
        operation: op,
        kind: v.kind,
        status: exchange.response.status,
        error,
        detail: v.detail,
        count: 0,
        tags: new Map(),
        example: exchange,
      };
      this.findings.set(key, finding);
    }
    finding.count++;
    // The shortest example is the most readable one.
    if (describeRequest(exchange.request).length < describeRequest(finding.example.request).length)
      finding.example = exchange;
    for (const tag of new Set(exchange.request.tags.map((t) => t.replace(/\(.*\)$/, '')))) {
      finding.tags.set(tag, (finding.tags.get(tag) ?? 0) + 1);
    }
  }
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/**
 * A curl command for the exchange: keys as "$API_KEY" and "$OTHER_KEY", long runs squeezed
 * («a×10000» stands for 10,000 a's), control characters and lone surrogates shown as \uXXXX (a
 * shell cannot carry U+0000 anyway).
 */
function curl(fx: FuzzFixture, exchange: Exchange): string {
  const { raw } = exchange;
  const { apiKey, otherKey } = fx.world;
  const url = `${fx.server.url}${excerpt(raw.target, 400)}`;
  const parts = [`curl -sS -i -X ${raw.method} ${shellQuote(url)}`];
  for (const [name, value] of raw.headers ?? []) {
    // \uE000 marks where a shell variable goes, outside the single quotes.
    const shown = escapeInvisible(value)
      .replace(`${apiKey.slice(0, 32)}\\u0000${apiKey.slice(32)}`, 'API_KEY with U+0000 after 32 characters')
      .replace(apiKey, '\uE000$API_KEY\uE000')
      .replace(otherKey, '\uE000$OTHER_KEY\uE000');
    parts.push(`-H ${shellQuote(`${name}: ${shown}`).replace(/\uE000(\$\w+)\uE000/g, `'"$1"'`)}`);
  }
  if (raw.body !== undefined) {
    parts.push(`--data-binary ${shellQuote(escapeInvisible(excerpt(String(raw.body), 600)))}`);
  }
  return parts.join(' ');
}

/** The exchange for a failure message: request, X-Request-Id, curl, response, violations. */
export function describeExchange(fx: FuzzFixture, exchange: Exchange): string {
  const { response } = exchange;
  return [
    `  request:  ${describeRequest(exchange.request)}`,
    exchange.requestId === undefined ? '' : `  x-request-id: ${JSON.stringify(exchange.requestId)}`,
    `  curl:     ${curl(fx, exchange)}`,
    `  response: ${response.status} ${escapeInvisible(excerpt(response.text, 400))}`,
    ...exchange.violations.map((v) => `  ✗ ${v.kind}: ${v.detail}`),
  ]
    .filter(Boolean)
    .join('\n');
}

/** A distinct failure: signature, count, the input shapes most often behind it, its example. */
export function describeFinding(fx: FuzzFixture, f: Finding): string {
  const common = [...f.tags]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([tag, n]) => `${tag} (${Math.round((100 * n) / f.count)}%)`);
  return [
    `• ${f.operation} — ${f.kind} — ${f.status} ${f.error} ×${f.count}`,
    `  ${f.detail}`,
    `  input shapes: ${common.join(', ') || 'all valid'}`,
    describeExchange(fx, f.example),
  ].join('\n');
}

/**
 * A logger whose lines a test reads back: each line as written and parsed, in the order logged
 * (pino writes one line per write to its destination).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';

export function capturingLogger(level = 'info') {
  const raw: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = chunk.toString();
        raw.push(text);
        lines.push(JSON.parse(text) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, raw, lines };
}

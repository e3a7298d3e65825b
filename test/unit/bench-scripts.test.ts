/**
 * The benchmarks start `web` and `worker` with the node arguments of their package.json scripts
 * (test/bench/harness.ts): when the scripts became `exec node …`, every benchmark that starts a web
 * process failed at once ("unexpected web script").
 */
import test from 'ava';
import { scriptArguments } from '../bench/harness.ts';

for (const script of ['web', 'worker'] as const) {
  test(`the benchmarks read the node arguments of npm run ${script}`, async (t) => {
    const args = await scriptArguments(script);
    t.regex(args.at(-1)!, /^(api|workers)\/main\.ts$/);
    t.true(args.includes('--import'), 'the tracing preload, as npm runs it');
  });
}

/** The operator CLI run as operators run it: a child process, `node db/cli/main.ts …`. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './processes.ts';

const run = promisify(execFile);

export interface OpsResult {
  code: number;
  json: Record<string, any>;
  stdout: string;
  stderr: string;
}

/** Runs a command in this checkout with `env` over the tests' environment (undefined removes a variable). */
export function runOps(env: Record<string, string | undefined>, ...args: string[]): Promise<OpsResult> {
  return inCheckout(ROOT, env, ...args);
}

/** As runOps, in the checkout at `cwd` (a copy, with its own `.data/`). */
export async function inCheckout(
  cwd: string,
  env: Record<string, string | undefined>,
  ...args: string[]
): Promise<OpsResult> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete merged[name];
  try {
    const { stdout, stderr } = await run(process.execPath, ['db/cli/main.ts', ...args], {
      cwd,
      env: merged,
    });
    let json: Record<string, any> = {};
    try {
      json = JSON.parse(stdout) as Record<string, any>;
    } catch {
      // --help prints text
    }
    return { code: 0, json, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, json: {}, stdout: e.stdout, stderr: e.stderr };
  }
}

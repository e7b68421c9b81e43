/**
 * A small tar writer for image layers. Written here rather than driving GNU tar because a layer mixes
 * files from different places (host libraries under new paths, generated /etc/passwd, a bundle under
 * /app) with per-entry owners (/home/nonroot is 65532, everything else root): one list of entries says
 * exactly what the layer holds, and the same list always gives the same bytes (mtime 0, fixed order).
 *
 * Format: POSIX ustar headers, with a PAX extended header in front of an entry whose path or link target
 * does not fit ustar's 100 bytes.
 */
import { createReadStream } from 'node:fs';

interface EntryOwner {
  uid: number;
  gid: number;
}

export interface TarDirectory extends EntryOwner {
  type: 'directory';
  /** Relative, without a leading or trailing slash: `home/nonroot`. */
  path: string;
  mode: number;
}

export interface TarFile extends EntryOwner {
  type: 'file';
  path: string;
  mode: number;
  size: number;
  /** The bytes themselves, or a host file read while the archive is written (its size must not change). */
  content: Buffer | { hostPath: string };
}

export interface TarSymlink extends EntryOwner {
  type: 'symlink';
  path: string;
  target: string;
}

export type TarEntry = TarDirectory | TarFile | TarSymlink;

const blockSize = 512;
const typeFlags = { file: '0', symlink: '2', directory: '5', paxHeader: 'x' } as const;

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL, the form GNU tar and Go's archive/tar both write.
  const digits = value.toString(8);
  if (digits.length > width - 1) throw new RangeError(`tar: ${value} does not fit a ${width}-byte field`);
  return digits.padStart(width - 1, '0') + '\0';
}

function fitsUstar(text: string): boolean {
  return Buffer.byteLength(text) <= 100 && /^[\x20-\x7e]*$/.test(text);
}

interface HeaderFields {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  typeFlag: string;
  linkName: string;
}

function header(fields: HeaderFields): Buffer {
  const block = Buffer.alloc(blockSize);
  block.write(fields.name, 0, 100, 'utf8');
  block.write(octal(fields.mode, 8), 100, 'ascii');
  block.write(octal(fields.uid, 8), 108, 'ascii');
  block.write(octal(fields.gid, 8), 116, 'ascii');
  block.write(octal(fields.size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii'); // mtime: the epoch, for reproducible layers
  block.write(fields.typeFlag, 156, 'ascii');
  block.write(fields.linkName, 157, 100, 'utf8');
  block.write('ustar\x0000', 257, 'ascii');
  // The checksum is computed with its own field read as eight spaces.
  block.write(' '.repeat(8), 148, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return block;
}

/** One PAX record, `<length> <key>=<value>\n`, where the length counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLength = Buffer.byteLength(body);
  const digits = String(bodyLength).length;
  // Adding the digits can carry into one more digit (a 98-byte body is a 101-byte record).
  const length = String(bodyLength + digits).length > digits ? bodyLength + digits + 1 : bodyLength + digits;
  return `${length}${body}`;
}

function padding(size: number): Buffer {
  return Buffer.alloc((blockSize - (size % blockSize)) % blockSize);
}

function entryName(entry: TarEntry): string {
  return entry.type === 'directory' ? `${entry.path}/` : entry.path;
}

function headersFor(entry: TarEntry): Buffer[] {
  const name = entryName(entry);
  const linkName = entry.type === 'symlink' ? entry.target : '';
  const blocks: Buffer[] = [];
  const records = [
    ...(fitsUstar(name) ? [] : [paxRecord('path', name)]),
    ...(fitsUstar(linkName) ? [] : [paxRecord('linkpath', linkName)]),
  ].join('');
  if (records !== '') {
    const body = Buffer.from(records, 'utf8');
    const paxName = `PaxHeaders/${name.replace(/\/$/, '').split('/').pop() ?? ''}`.slice(0, 100);
    blocks.push(
      header({
        name: fitsUstar(paxName) ? paxName : 'PaxHeaders/entry',
        mode: 0o644,
        uid: 0,
        gid: 0,
        size: body.length,
        typeFlag: typeFlags.paxHeader,
        linkName: '',
      }),
      body,
      padding(body.length),
    );
  }
  blocks.push(
    header({
      name: fitsUstar(name) ? name : name.slice(0, 100).replace(/[^\x20-\x7e]/g, '_'),
      mode: entry.type === 'symlink' ? 0o777 : entry.mode & 0o7777,
      uid: entry.uid,
      gid: entry.gid,
      size: entry.type === 'file' ? entry.size : 0,
      typeFlag: typeFlags[entry.type],
      linkName: fitsUstar(linkName) ? linkName : linkName.slice(0, 100).replace(/[^\x20-\x7e]/g, '_'),
    }),
  );
  return blocks;
}

async function* fileContent(file: TarFile): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(file.content)) {
    if (file.content.length !== file.size) throw new Error(`tar: ${file.path}: size ${file.size} ≠ content`);
    yield file.content;
    return;
  }
  let written = 0;
  for await (const chunk of createReadStream(file.content.hostPath)) {
    const buffer = chunk as Buffer;
    written += buffer.length;
    if (written > file.size) break;
    yield buffer;
  }
  // A file that changed size between listing and archiving would shift every later header.
  if (written !== file.size) {
    throw new Error(`tar: ${file.content.hostPath} changed size while archived (${file.size} → ${written})`);
  }
}

/**
 * The archive of `entries`, in the order given (callers sort: {@link sortEntries}). Paths are relative
 * (`etc/passwd`); a directory is listed before what it holds.
 */
export async function* tarArchive(entries: Iterable<TarEntry>): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    yield* headersFor(entry);
    if (entry.type === 'file') {
      yield* fileContent(entry);
      yield padding(entry.size);
    }
  }
  yield Buffer.alloc(2 * blockSize);
}

/**
 * Sorted by path, as `tar --sort=name` would list them: deterministic, and every directory comes
 * before its contents. Throws on a path listed twice, which a layer could only resolve arbitrarily.
 */
export function sortEntries(entries: readonly TarEntry[]): TarEntry[] {
  const sorted = entries.toSorted((a, b) => {
    const [left, right] = [a.path.split('/'), b.path.split('/')];
    for (let i = 0; i < Math.min(left.length, right.length); i++) {
      const [l = '', r = ''] = [left[i], right[i]];
      if (l !== r) return Buffer.compare(Buffer.from(l), Buffer.from(r));
    }
    return left.length - right.length;
  });
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]?.path === sorted[i - 1]?.path) throw new Error(`tar: ${sorted[i]?.path} listed twice`);
  }
  return sorted;
}

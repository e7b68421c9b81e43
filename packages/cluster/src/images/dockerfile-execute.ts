/**
 * Executes a Dockerfile's last stage the way Docker's builder (BuildKit) would, without a container
 * runtime: the base is a stand-in we build ourselves, and `COPY --from=<stage>` takes that stage's
 * output from the caller (which produces it on the host). Every instruction either changes the image as
 * BuildKit does or throws with its line: the Dockerfile stays the single description of the image.
 */
import { lstat } from 'node:fs/promises';
import { posix } from 'node:path';
import { DockerfileError, type Dockerfile, type Instruction, type Stage } from './dockerfile.ts';
import { argDeclarations, expandWord, keyValues, words, type Variables } from './dockerfile-words.ts';
import { hostTreeEntries } from './host-files.ts';
import { writeLayer, type Layer } from './layer.ts';
import { epoch, type ContainerConfig, type HistoryEntry, type Image } from './oci-image.ts';
import type { TarEntry } from './tar.ts';

export interface ExecuteOptions {
  /** `--build-arg` values; one that no ARG declares throws (it would silently do nothing). */
  buildArgs?: Readonly<Record<string, string>>;
  /** The base image for a FROM reference (expanded); throws for a reference it does not know. */
  baseImage(reference: string, line: number): Promise<Image>;
  /**
   * A host directory holding what `stage` left at `sourcePath`, for `COPY --from=<stage> <sourcePath>`.
   * The caller checks that its way of producing it is the one the stage describes.
   */
  stageOutput(stage: Stage, sourcePath: string, copy: Instruction): Promise<string>;
  /** Where new layers are written (an OCI layout's `blobs` directory). */
  blobsDir: string;
  /** The built image's name. */
  name: string;
}

export interface ExecutedStage {
  image: Image;
  /** The layers the stage's own instructions added (WORKDIR, COPY), in order. */
  addedLayers: Layer[];
}

/** Files the stage's image holds so far, by path: WORKDIR and COPY create only what is missing. */
type FileSystem = Map<string, TarEntry>;

interface State {
  config: ContainerConfig;
  history: HistoryEntry[];
  layers: Layer[];
  addedLayers: Layer[];
  files: FileSystem;
  args: Map<string, string | undefined>;
  cmdSet: boolean;
}

function variables(state: State): Variables {
  // ENV wins over ARG of the same name.
  const result = new Map<string, string>();
  for (const [name, value] of state.args) if (value !== undefined) result.set(name, value);
  for (const pair of state.config.Env ?? []) {
    const equals = pair.indexOf('=');
    result.set(pair.slice(0, equals), pair.slice(equals + 1));
  }
  return result;
}

function setEnv(config: ContainerConfig, key: string, value: string): void {
  const env = config.Env ?? [];
  const index = env.findIndex((pair) => pair.startsWith(`${key}=`));
  if (index >= 0) env[index] = `${key}=${value}`;
  else env.push(`${key}=${value}`);
  config.Env = env;
}

function relative(absolutePath: string): string {
  return posix.normalize(absolutePath).replace(/^\/+/, '').replace(/\/+$/, '');
}

/** The owner BuildKit gives what WORKDIR creates: the current USER, a bare UID also as the GID. */
function workdirOwner(user: string | undefined, line: number): { uid: number; gid: number } {
  if (!user) return { uid: 0, gid: 0 };
  const match = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!match?.[1]) throw new DockerfileError(line, `WORKDIR under the named USER ${user} is not supported`);
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

function commandLine(instruction: Instruction): string[] {
  return instruction.json ?? ['/bin/sh', '-c', instruction.arguments];
}

async function addLayer(state: State, entries: TarEntry[], blobsDir: string): Promise<void> {
  const layer = await writeLayer(entries, blobsDir);
  state.layers.push(layer);
  state.addedLayers.push(layer);
  for (const entry of layer.entries) state.files.set(entry.path, entry);
}

/** Missing directories from the root down to `path`, as a WORKDIR or COPY destination needs them. */
function missingDirectories(
  files: FileSystem,
  path: string,
  mode: number,
  owner: { uid: number; gid: number },
) {
  const missing: TarEntry[] = [];
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    const existing = files.get(dir);
    if (existing && existing.type !== 'directory') throw new Error(`/${dir} exists and is not a directory`);
    if (!existing)
      missing.push({ type: 'directory', path: dir, mode: i === parts.length ? mode : 0o755, ...owner });
  }
  return missing;
}

function unsupportedFlags(instruction: Instruction, allowed: readonly string[]): void {
  const flag = instruction.flags.find(({ name }) => !allowed.includes(name));
  if (flag)
    throw new DockerfileError(instruction.line, `${instruction.keyword} --${flag.name} is not supported`);
}

async function copyFromStage(
  state: State,
  instruction: Instruction,
  stages: readonly Stage[],
  options: ExecuteOptions,
): Promise<void> {
  unsupportedFlags(instruction, ['from']);
  const from = instruction.flags.find(({ name }) => name === 'from')?.value;
  const stage = stages.find(({ name }) => name !== undefined && name === from?.toLowerCase());
  if (!stage) {
    throw new DockerfileError(instruction.line, 'only COPY --from=<an earlier stage> is supported');
  }
  const paths = instruction.json ?? words(instruction.arguments, variables(state));
  const [source, destination] = paths;
  if (paths.length !== 2 || source === undefined || destination === undefined) {
    throw new DockerfileError(instruction.line, 'COPY of exactly one source is supported');
  }
  const hostDir = await options.stageOutput(stage, source, instruction);
  const info = await lstat(hostDir);
  if (!info.isDirectory()) throw new DockerfileError(instruction.line, `${source} is not a directory`);
  const target = relative(posix.resolve(state.config.WorkingDir ?? '/', destination));
  // A directory's contents are copied into the destination; an existing destination keeps its owner and
  // mode (BuildKit's copy does not overwrite the top directory's metadata), a new one is root's.
  const created = missingDirectories(state.files, target, info.mode & 0o7777, { uid: 0, gid: 0 });
  await addLayer(state, [...created, ...(await hostTreeEntries(hostDir, target))], options.blobsDir);
  state.history.push({
    created: epoch,
    created_by: instruction.source,
    comment: 'loopwright dockerfile executor',
  });
}

async function workdir(state: State, instruction: Instruction, blobsDir: string): Promise<void> {
  const path = posix.resolve(
    state.config.WorkingDir ?? '/',
    expandWord(instruction.arguments, variables(state)),
  );
  state.config.WorkingDir = path;
  const missing =
    path === '/'
      ? []
      : missingDirectories(
          state.files,
          relative(path),
          0o755,
          workdirOwner(state.config.User, instruction.line),
        );
  if (missing.length > 0) await addLayer(state, missing, blobsDir);
  state.history.push({
    created: epoch,
    created_by: instruction.source,
    comment: 'loopwright dockerfile executor',
    ...(missing.length === 0 ? { empty_layer: true } : {}),
  });
}

/** The instructions that change only the image config. */
function configInstruction(
  state: State,
  instruction: Instruction,
  buildArgs: Readonly<Record<string, string>>,
  globalArgs: ReadonlyMap<string, string | undefined>,
): void {
  const vars = variables(state);
  switch (instruction.keyword) {
    case 'ARG':
      for (const { name, defaultValue } of argDeclarations(instruction.arguments, vars)) {
        state.args.set(name, buildArgs[name] ?? defaultValue ?? globalArgs.get(name));
      }
      return;
    case 'ENV':
      for (const { key, value } of keyValues(instruction.arguments, vars, true))
        setEnv(state.config, key, value);
      return;
    case 'LABEL':
      for (const { key, value } of keyValues(instruction.arguments, vars, false)) {
        state.config.Labels = { ...state.config.Labels, [key]: value };
      }
      return;
    case 'USER':
      state.config.User = expandWord(instruction.arguments, vars);
      return;
    case 'EXPOSE':
      for (const port of words(instruction.arguments, vars)) {
        const match = /^(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(port);
        if (!match?.[1])
          throw new DockerfileError(instruction.line, `EXPOSE ${port} is not a port[/protocol]`);
        state.config.ExposedPorts = {
          ...state.config.ExposedPorts,
          [`${match[1]}/${(match[2] ?? 'tcp').toLowerCase()}`]: {},
        };
      }
      return;
    case 'ENTRYPOINT':
      state.config.Entrypoint = commandLine(instruction);
      // A CMD inherited from the base would be arguments to an entrypoint it was never written for.
      if (!state.cmdSet) delete state.config.Cmd;
      return;
    case 'CMD':
      state.config.Cmd = commandLine(instruction);
      state.cmdSet = true;
      return;
    default:
      throw new DockerfileError(
        instruction.line,
        `${instruction.keyword} is not supported by this executor (only the runtime stage's ARG, ENV, LABEL, USER, EXPOSE, ENTRYPOINT, CMD, WORKDIR and COPY --from are)`,
      );
  }
}

function declaredArgs(dockerfile: Dockerfile): Set<string> {
  const instructions = [
    ...dockerfile.globalArgs,
    ...dockerfile.stages.flatMap((stage) => stage.instructions),
  ];
  return new Set(
    instructions
      .filter(({ keyword }) => keyword === 'ARG')
      .flatMap((arg) => argDeclarations(arg.arguments, new Map()).map(({ name }) => name)),
  );
}

/** The global ARGs' values: a `--build-arg`, else the default (FROM lines and redeclaring stages see them). */
function globalArgValues(
  dockerfile: Dockerfile,
  buildArgs: Readonly<Record<string, string>>,
): Map<string, string | undefined> {
  const globalArgs = new Map<string, string | undefined>();
  for (const arg of dockerfile.globalArgs) {
    for (const { name, defaultValue } of argDeclarations(arg.arguments, globalArgs as Variables)) {
      globalArgs.set(name, buildArgs[name] ?? defaultValue);
    }
  }
  return globalArgs;
}

/**
 * The variables `stage`'s instruction `before` sees, as BuildKit scopes them: the stage's own ARGs
 * (a `--build-arg`, else the ARG's default, else a global ARG's value when the stage redeclares it by
 * name only) and ENVs declared above it. A global ARG the stage does not redeclare is not visible.
 * For checking what a stage the executor does not run would do (its RUN lines).
 */
export function stageVariables(
  dockerfile: Dockerfile,
  stage: Stage,
  before: Instruction,
  buildArgs: Readonly<Record<string, string>> = {},
): Variables {
  const globalArgs = globalArgValues(dockerfile, buildArgs);
  const args = new Map<string, string | undefined>();
  const env = new Map<string, string>();
  const current = (): Map<string, string> => {
    const result = new Map<string, string>();
    for (const [name, value] of args) if (value !== undefined) result.set(name, value);
    for (const [name, value] of env) result.set(name, value);
    return result;
  };
  for (const instruction of stage.instructions) {
    if (instruction === before) break;
    if (instruction.keyword === 'ARG') {
      for (const { name, defaultValue } of argDeclarations(instruction.arguments, current())) {
        args.set(name, buildArgs[name] ?? defaultValue ?? globalArgs.get(name));
      }
    } else if (instruction.keyword === 'ENV') {
      for (const { key, value } of keyValues(instruction.arguments, current(), true)) env.set(key, value);
    }
  }
  return current();
}

/** Builds the image of `dockerfile`'s last stage. */
export async function executeLastStage(
  dockerfile: Dockerfile,
  options: ExecuteOptions,
): Promise<ExecutedStage> {
  const buildArgs = options.buildArgs ?? {};
  const declared = declaredArgs(dockerfile);
  const undeclared = Object.keys(buildArgs).filter((name) => !declared.has(name));
  if (undeclared.length > 0)
    throw new Error(`build args ${undeclared.join(', ')} are not declared by any ARG`);

  const globalArgs = globalArgValues(dockerfile, buildArgs);
  const stage = dockerfile.stages.at(-1);
  if (!stage) throw new Error('Dockerfile has no stage');
  const reference = expandWord(stage.baseImage, globalArgs as Variables);
  unsupportedFlags(stage.from, []);
  if (dockerfile.stages.some((earlier) => earlier !== stage && earlier.name === reference.toLowerCase())) {
    throw new DockerfileError(stage.from.line, `FROM an earlier stage (${reference}) is not supported`);
  }
  const base = await options.baseImage(reference, stage.from.line);
  const state: State = {
    config: structuredClone(base.config),
    history: [...base.history],
    layers: [...base.layers],
    addedLayers: [],
    files: new Map(
      base.layers.flatMap((layer) => layer.entries.map((entry) => [entry.path, entry] as const)),
    ),
    args: new Map(),
    cmdSet: false,
  };
  for (const instruction of stage.instructions) {
    try {
      if (instruction.keyword === 'COPY') await copyFromStage(state, instruction, dockerfile.stages, options);
      else if (instruction.keyword === 'WORKDIR') await workdir(state, instruction, options.blobsDir);
      else {
        configInstruction(state, instruction, buildArgs, globalArgs);
        state.history.push({
          created: epoch,
          created_by: instruction.source,
          comment: 'loopwright dockerfile executor',
          empty_layer: true,
        });
      }
    } catch (error) {
      if (error instanceof DockerfileError) throw error;
      throw new DockerfileError(instruction.line, `${instruction.keyword}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  return {
    image: { name: options.name, config: state.config, layers: state.layers, history: state.history },
    addedLayers: state.addedLayers,
  };
}

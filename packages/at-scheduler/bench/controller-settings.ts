/**
 * How the bench runs the controller: the released program's throughput options, as its option
 * declarations default them or the environment sets them. Read by the phase that forks the controller's
 * process and by that process.
 */
import { parseProgram, variableOf } from '@loopwright/runtime';
import { program } from '../src/index.ts';

/** The program's options that shape its throughput, by the flag the released program takes. */
const THROUGHPUT_FLAGS = ['--workers', '--kube-api-qps', '--kube-api-burst'] as const;

export interface ControllerSettings {
  workers: number;
  qps: number;
  burst: number;
  defaultImage: string;
  /** `VARIABLE=value` for each of the program's variables set in the environment. */
  overrides: string[];
}

/** The released program's configuration, given only the variables of THROUGHPUT_FLAGS from `env`. */
export function controllerSettings(env: NodeJS.ProcessEnv): ControllerSettings {
  const variables = THROUGHPUT_FLAGS.map(variableOf).filter((name) => env[name] !== undefined);
  const parsed = parseProgram(program, [], Object.fromEntries(variables.map((name) => [name, env[name]])));
  if (parsed.action !== 'run') throw new Error(`parsing no arguments gave ${parsed.action}`);
  return {
    workers: parsed.standard.workers,
    qps: parsed.standard.kubeApiQps,
    burst: parsed.standard.kubeApiBurst,
    defaultImage: parsed.config.defaultImage,
    overrides: variables.map((name) => `${name}=${env[name]}`),
  };
}

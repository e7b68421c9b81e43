/**
 * AT_BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of the controller's process from the window's opening until
 * the last pod create was answered, one file per controller phase (open it in Chrome DevTools or
 * speedscope): its work under the burst, without the set-up.
 */
import { Session } from 'node:inspector/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface WindowProfile {
  stop(label: string): Promise<void>;
}

export async function startWindowProfile(dir: string | undefined): Promise<WindowProfile | undefined> {
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(label) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${label}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

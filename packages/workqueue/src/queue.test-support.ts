/** Helpers shared by the queue's tests. */
import type { RateLimitingQueue } from './index.ts';

/** Takes every ready key without waiting, marking each done unless `markDone` is false. */
export function takeReady(queue: RateLimitingQueue<string>, markDone = true): string[] {
  const keys: string[] = [];
  for (let item = queue.tryGet(); item !== undefined && !item.shutdown; item = queue.tryGet()) {
    keys.push(item.key);
    if (markDone) queue.done(item.key);
  }
  return keys;
}

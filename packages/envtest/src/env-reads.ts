/**
 * Which environment variables a piece of code reads: it runs `read` once per given environment, each
 * wrapped so that every property lookup is recorded, and returns the names looked up, sorted. Tests use
 * it to keep a program's documented variable list (its `--help`) exactly in step with its parser.
 */
export function variablesRead(
  read: (env: Record<string, string | undefined>) => unknown,
  ...environments: Record<string, string>[]
): string[] {
  const names = new Set<string>();
  for (const env of environments)
    read(
      new Proxy(env, {
        get: (target, key) => {
          if (typeof key === 'string') names.add(key);
          return Reflect.get(target, key) as unknown;
        },
      }),
    );
  return [...names].sort();
}

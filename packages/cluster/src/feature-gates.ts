/**
 * `--feature-gates=<gates>` of `pnpm controlplane` and `pnpm cluster`: kube-apiserver's feature gates,
 * e.g. `ShardedListAndWatch=true` (Kubernetes 1.36's alpha server-side shard selectors, which a sharded
 * controller then uses to cache only its share). Checked here, so that a typo is one line rather than
 * an API server that does not start.
 */
const GATES = /^[A-Z][A-Za-z0-9]*=(true|false)(,[A-Z][A-Za-z0-9]*=(true|false))*$/;

/** The kube-apiserver flags for `args` (the command line): `[]` without `--feature-gates`. */
export function apiServerFlagsOf(args: readonly string[]): string[] {
  const given = args.filter((arg) => arg.startsWith('--feature-gates'));
  if (given.length === 0) return [];
  const [flag] = given;
  const value = flag?.startsWith('--feature-gates=') ? flag.slice('--feature-gates='.length) : undefined;
  if (given.length > 1 || value === undefined || !GATES.test(value)) {
    throw new Error(
      `--feature-gates: expected one --feature-gates=Name=true|false[,Name=true|false...], got ${given.join(' ')}`,
    );
  }
  return [`--feature-gates=${value}`];
}

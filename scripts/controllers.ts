/**
 * `node scripts/controllers.ts`: the workspace's controllers (packages tagged `controller`) as a JSON
 * array of names, one line, for CI's image matrix (`fromJSON`). It imports the derivation's module
 * itself rather than @loopwright/cluster: that module needs only Node's built-ins, so the workflow runs
 * this with a bare Node 24 and no `pnpm install`.
 */
import { workspaceControllers } from '../packages/cluster/src/workspace/controllers.ts';

console.log(JSON.stringify(workspaceControllers().map(({ name }) => name)));

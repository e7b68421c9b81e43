/**
 * `pnpm test`: typecheck, lint and every test suite of every package through Nx, then one summary line
 * adding up node:test's per-package counts (Nx replays cached output, so cached runs count too).
 */
import { spawn } from 'node:child_process';

const args = ['nx', 'run-many', '-t', 'typecheck', 'lint', 'test', ...process.argv.slice(2)];
if (process.env.CI) args.push('--output-style=static');
const nx = spawn('pnpm', ['exec', ...args], { stdio: ['inherit', 'pipe', 'inherit'] });

const totals = { pass: 0, fail: 0, skipped: 0 };
let pending = '';
const ansi = new RegExp(String.raw`\u001b\[[0-9;]*m`, 'g');
nx.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^\s*ℹ (pass|fail|skipped) (\d+)\s*$/.exec(line.replace(ansi, ''));
    if (match?.[1] && match[2]) totals[match[1] as keyof typeof totals] += Number(match[2]);
  }
});

nx.on('exit', (code, signal) => {
  console.log(`\nTests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
  process.exit(code ?? (signal ? 1 : 0));
});

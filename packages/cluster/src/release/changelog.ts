/**
 * The release notes are the CHANGELOG's section for the release (Keep a Changelog 1.1.0: `## [1.2.3] -
 * 2026-11-28`, then its `### Added`/`Changed`/... lists until the next `## `).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryRoot } from '../workspace/repository-root.ts';

class ChangelogError extends Error {
  override readonly name = 'ChangelogError';
}

/**
 * The body of `## [version]` (without its heading), trimmed. Throws when the CHANGELOG has no section
 * for it: a release without notes is a release nobody can read up on.
 */
export function changelogSection(changelog: string, version: string): string {
  const lines = changelog.split('\n');
  const heading = new RegExp(`^## \\[${version.replace(/[.+]/g, '\\$&')}\\](?:\\s|$)`);
  const start = lines.findIndex((line) => heading.test(line));
  if (start === -1) throw new ChangelogError(`CHANGELOG.md has no section "## [${version}]"`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => /^## /.test(line) || /^\[[^\]]+\]:\s/.test(line));
  const body = (end === -1 ? rest : rest.slice(0, end)).join('\n').trim();
  if (body === '') throw new ChangelogError(`CHANGELOG.md's section "## [${version}]" is empty`);
  return body;
}

/**
 * The release notes of `version`: its CHANGELOG.md section, or, when the CHANGELOG has none and
 * `fallback` is given, that section's (a local release of a version the CHANGELOG does not know yet
 * takes [Unreleased]). One reading for the GitHub release's notes and the charts' Artifact Hub changes.
 */
export async function releaseNotes(version: string, fallback?: string): Promise<string> {
  const changelog = await readFile(join(repositoryRoot, 'CHANGELOG.md'), 'utf8');
  try {
    return changelogSection(changelog, version);
  } catch (error) {
    if (fallback === undefined) throw error;
    return changelogSection(changelog, fallback);
  }
}

/** Artifact Hub's change kinds, by the Keep a Changelog heading they come from. */
const CHANGE_KINDS: Readonly<Record<string, string>> = {
  Added: 'added',
  Changed: 'changed',
  Deprecated: 'deprecated',
  Removed: 'removed',
  Fixed: 'fixed',
  Security: 'security',
};

export interface ArtifactHubChange {
  kind: string;
  description: string;
}

/**
 * A CHANGELOG section as Artifact Hub's `artifacthub.io/changes`: one change per top-level bullet
 * (continuation lines joined) under a `### Added`/`Changed`/... heading, of that heading's kind. Bullets
 * under another heading and text outside bullets (a section's intro) are not changes.
 */
export function artifactHubChanges(section: string): ArtifactHubChange[] {
  const changes: ArtifactHubChange[] = [];
  let kind: string | undefined;
  let current: string[] | undefined;
  const flush = () => {
    if (kind !== undefined && current !== undefined)
      changes.push({ kind, description: current.join(' ').replace(/\s+/g, ' ').trim() });
    current = undefined;
  };
  for (const line of section.split('\n')) {
    const heading = /^###\s+(\S.*?)\s*$/.exec(line);
    if (heading) {
      flush();
      kind = CHANGE_KINDS[heading[1] ?? ''];
      continue;
    }
    const bullet = /^[-*]\s+(.*)$/.exec(line);
    if (bullet) {
      flush();
      current = [bullet[1] ?? ''];
    } else if (current !== undefined && /^\s+\S/.test(line)) current.push(line.trim());
    else flush();
  }
  flush();
  return changes;
}

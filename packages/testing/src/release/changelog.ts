/**
 * The release notes are the CHANGELOG's section for the release (Keep a Changelog 1.1.0: `## [1.2.3] -
 * 2026-11-28`, then its `### Added`/`Changed`/... lists until the next `## `).
 */

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

/**
 * Exactly one mail per MailgunCluster, from the Mailgun peer's record of every accepted mail: each
 * carries its object's uid (user variable `loopwright-uid`, which the controller's own recovery looks up)
 * and its Cluster's name in the subject; both must name the same object.
 */
import type { AcceptedMail } from '@loopwright/fakes/mailgun';
import { subjectOf, type CreatedCluster } from './clusters.ts';

export interface ExactlyOnce {
  /** Names of MailgunClusters without a mail. */
  none: string[];
  /** Names with two or more, and how many. */
  several: { name: string; mails: number }[];
  /** Mails whose uid is none of the created objects', or whose subject names another cluster. */
  stray: number;
}

export function checkExactlyOnce(
  created: readonly CreatedCluster[],
  mails: readonly AcceptedMail[],
): ExactlyOnce {
  const byUid = new Map<string, AcceptedMail[]>();
  for (const mail of mails) {
    const uid = mail.userVariables['loopwright-uid'] ?? '';
    byUid.set(uid, [...(byUid.get(uid) ?? []), mail]);
  }
  const none: string[] = [];
  const several: { name: string; mails: number }[] = [];
  let matched = 0;
  for (const { name, uid } of created) {
    const own = (byUid.get(uid) ?? []).filter((mail) => mail.subject === subjectOf(name));
    matched += own.length;
    if (own.length === 0) none.push(name);
    if (own.length > 1) several.push({ name, mails: own.length });
  }
  return { none, several, stray: mails.length - matched };
}

export function passed(check: ExactlyOnce): boolean {
  return check.none.length === 0 && check.several.length === 0 && check.stray === 0;
}

export function formatExactlyOnce(check: ExactlyOnce, n: number): string {
  if (passed(check)) return `exactly one mail each: yes (${n} of ${n})`;
  const list = (names: string[]): string =>
    names.slice(0, 10).join(', ') + (names.length > 10 ? ', ...' : '');
  return (
    `exactly one mail each: NO: ${check.none.length} without a mail (${list(check.none)}), ` +
    `${check.several.length} with two or more (${list(check.several.map((s) => `${s.name}: ${s.mails}`))}), ` +
    `${check.stray} stray mails`
  );
}

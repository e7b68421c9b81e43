import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { labelSelector } from './label-selector.ts';

describe('labelSelector', () => {
  it('accepts what the API server accepts, keeping the text as given', () => {
    for (const selector of [
      'a',
      '!a',
      '! a',
      'a=b',
      'a==b',
      'a!=b',
      'a=',
      'a==',
      'a = b',
      'node-role.kubernetes.io/worker',
      'node-role.kubernetes.io/worker=',
      'Upper_Case.ok-1=Value_2.x',
      `${'k'.repeat(63)}=${'v'.repeat(63)}`,
      `${'p'.repeat(253)}/name`,
      'pool in (a, b),!legacy',
      'x notin (y)',
      'x in (a,)',
      'tier in (web),zone=fsn1,!drain',
      'replicas>3',
      'replicas<1',
      'a in ()',
      'a notin ( )',
      'a in (,)',
      'a in (b,,c)',
    ])
      assert.equal(labelSelector.parse(selector), selector, selector);
  });

  it('refuses what the API server would refuse', () => {
    for (const selector of [
      'a b',
      '!a=b',
      'a in b',
      'pool in (a,b',
      'a/b/c=d',
      '/name',
      'Prefix.Upper/name',
      'x=-bad-',
      'x=has space',
      '-a',
      'a.',
      'k'.repeat(64),
      `k=${'v'.repeat(64)}`,
      `${'p'.repeat(254)}/name`,
      'a in (b c)',
      'replicas<-1',
      'a in ((b))',
      'replicas>three',
      'replicas>',
      'a=b,',
      ',a',
      'a=b=c',
    ])
      assert.equal(labelSelector.parse(selector), undefined, selector);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUILT_IN_KINDS,
  GENERATED_TYPES_IMPORTS,
  InvalidOptionError,
  defaultShortName,
  kindTypeName,
  ownedExample,
  ownedKinds,
  pluralOf,
  templateVariables,
  type ControllerOptions,
} from './names.ts';

const widget: ControllerOptions = {
  name: 'widget-sync',
  group: 'widgets.example.com',
  apiVersion: 'v1alpha1',
  kind: 'Widget',
};

/** Asserts that `options` is refused with exactly `message`. */
function refused(options: Partial<ControllerOptions>, message: string): void {
  assert.throws(
    () => templateVariables({ ...widget, ...options }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError);
      assert.equal(error.message, message);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    },
  );
}

describe('templateVariables', () => {
  it('the contract variables of a namespaced controller without owned kinds', () => {
    assert.deepEqual(templateVariables(widget), {
      name: 'widget-sync',
      packageName: '@loopwright/widget-sync',
      group: 'widgets.example.com',
      version: 'v1alpha1',
      kind: 'Widget',
      kindType: 'Widget',
      kindImport: 'Widget',
      singular: 'widget',
      plural: 'widgets',
      shortName: 'wdgt',
      namespaced: true,
      scope: 'Namespaced',
      owns: [],
      customOwns: [],
      constantPrefix: 'WIDGET',
      title: 'Widget',
      ownedExample: undefined,
    });
  });

  it('--cluster-scoped or --no-namespaced: scope Cluster; both defaults: Namespaced', () => {
    for (const options of [
      { clusterScoped: true },
      { namespaced: false },
      { namespaced: true, clusterScoped: true },
    ]) {
      const variables = templateVariables({ ...widget, ...options });
      assert.equal(variables.namespaced, false, JSON.stringify(options));
      assert.equal(variables.scope, 'Cluster');
    }
    assert.equal(
      templateVariables({ ...widget, namespaced: true, clusterScoped: false }).scope,
      'Namespaced',
    );
  });

  it('--plural and --short-name override the derived ones', () => {
    const variables = templateVariables({ ...widget, plural: 'widgeten', shortName: 'wi2' });
    assert.equal(variables.plural, 'widgeten');
    assert.equal(variables.shortName, 'wi2');
  });

  it('a multi-word kind: UPPER_SNAKE constants, spaced title; a run of capitals is one word', () => {
    assert.deepEqual(
      (({ constantPrefix, title, singular }) => ({ constantPrefix, title, singular }))(
        templateVariables({ ...widget, kind: 'HTTPRouteSet' }),
      ),
      { constantPrefix: 'HTTP_ROUTE_SET', title: 'HTTP Route Set', singular: 'httprouteset' },
    );
    assert.equal(templateVariables({ ...widget, kind: 'WidgetV2' }).constantPrefix, 'WIDGET_V2');
    assert.equal(templateVariables({ ...widget, kind: 'HTTP2Route' }).title, 'HTTP2 Route');
  });

  it('refuses a name that is no DNS label', () => {
    const message = (name: string) =>
      `name: expected a DNS label (lower-case letters, digits and '-', a letter first, at most 63 characters), e.g. widget-sync; got "${name}"`;
    for (const name of ['Widget', '1widget', 'widget-', 'wid_get', '', 'a'.repeat(64)])
      refused({ name }, message(name));
    assert.equal(templateVariables({ ...widget, name: 'a'.repeat(63) }).name.length, 63);
  });

  it('refuses a group that is no DNS subdomain with a dot', () => {
    for (const group of [
      'widgets',
      'Widgets.example.com',
      'widgets..example.com',
      '-w.example.com',
      `${'a'.repeat(250)}.com`,
    ])
      refused(
        { group },
        `--group: expected a DNS subdomain with at least one dot, e.g. widgets.example.com; got "${group}"`,
      );
  });

  it('accepts v1, v1alpha1, v2beta3 and refuses other versions', () => {
    for (const apiVersion of ['v1', 'v1alpha1', 'v2beta3', 'v10beta12'])
      assert.equal(templateVariables({ ...widget, apiVersion }).version, apiVersion);
    for (const apiVersion of ['1', 'v0', 'v1gamma1', 'v1alpha', 'v1alpha0', 'V1', 'v1beta1x'])
      refused(
        { apiVersion },
        `--api-version: expected a Kubernetes API version, e.g. v1, v1alpha1 or v2beta3; got "${apiVersion}"`,
      );
  });

  it('refuses a kind that is not PascalCase', () => {
    for (const kind of ['widget', 'Wid-get', 'Wid get', '', `W${'a'.repeat(63)}`])
      refused(
        { kind },
        `--kind: expected a PascalCase kind (a capital letter first, then letters and digits), e.g. Widget; got "${kind}"`,
      );
  });

  it('a kind named like an identifier of the templates: its type imported as <Kind>Object', () => {
    const names = { used: new Set(['Controller', 'Date', 'DateObject']), exported: new Set<string>() };
    const typeNames = (kind: string) =>
      (({ kindType, kindImport }) => ({ kindType, kindImport }))(
        templateVariables({ ...widget, kind }, names),
      );
    assert.deepEqual(typeNames('Controller'), {
      kindType: 'ControllerObject',
      kindImport: 'Controller as ControllerObject',
    });
    assert.deepEqual(typeNames('Date'), { kindType: 'DateObject2', kindImport: 'Date as DateObject2' });
    assert.deepEqual(typeNames('Widget'), { kindType: 'Widget', kindImport: 'Widget' });
    assert.equal(kindTypeName('DateObject', names.used), 'DateObjectObject');
  });

  it("refuses a kind the package exports for something else, and the generated types' import", () => {
    const names = { used: new Set<string>(), exported: new Set(['StatusPatch']) };
    assert.throws(() => templateVariables({ ...widget, kind: 'StatusPatch' }, names), {
      name: 'InvalidOptionError',
      message:
        '--kind: "StatusPatch" is also the name of something else the generated package exports (its src/index.ts), beside the kind\'s type; pick another kind',
    });
    assert.deepEqual(GENERATED_TYPES_IMPORTS, ['ObjectMeta']);
    refused(
      { kind: 'ObjectMeta' },
      '--kind: "ObjectMeta" is the name of the type the generated src/generated/types.ts imports for the kind\'s metadata; pick another kind',
    );
  });

  it('refuses a --plural that is no DNS label', () => {
    refused(
      { plural: 'Widgets' },
      '--plural: expected a lower-case resource name (a DNS label), e.g. widgets; got "Widgets"',
    );
  });

  it('refuses a --short-name outside 2 to 5 lower-case letters or digits', () => {
    for (const shortName of ['w', 'widgets', 'W1', '1w'])
      refused(
        { shortName },
        `--short-name: expected 2 to 5 lower-case letters or digits, a letter first, e.g. wdgt; got "${shortName}"`,
      );
  });

  it('asks for --short-name when the kind gives fewer than 2 letters', () => {
    refused(
      { kind: 'Queue' },
      '--kind: "Queue" gives no short name of 2 to 5 letters (its first letter and consonants: "q"); pass --short-name',
    );
    assert.equal(templateVariables({ ...widget, kind: 'Queue', shortName: 'qu' }).shortName, 'qu');
  });

  it('--owns: resolved owned kinds and the integration test example', () => {
    const variables = templateVariables({ ...widget, owns: 'ConfigMap,cluster.x-k8s.io/v1beta2/Cluster' });
    assert.deepEqual(variables.owns, [
      { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', apiVersion: 'v1' },
      {
        kind: 'Cluster',
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'clusters',
        apiVersion: 'cluster.x-k8s.io/v1beta2',
      },
    ]);
    assert.equal(variables.ownedExample?.kind, 'ConfigMap');
  });
});

describe('pluralOf', () => {
  it('+es after s, x, z, ch, sh; consonant+y -> ies; else +s', () => {
    const cases: [string, string][] = [
      ['widget', 'widgets'],
      ['class', 'classes'],
      ['box', 'boxes'],
      ['quiz', 'quizes'],
      ['batch', 'batches'],
      ['mesh', 'meshes'],
      ['policy', 'policies'],
      ['gateway', 'gateways'],
      ['ingress', 'ingresses'],
    ];
    for (const [singular, plural] of cases) assert.equal(pluralOf(singular), plural, singular);
  });
});

describe('defaultShortName', () => {
  it('the first letter and the consonants after it, at most 5', () => {
    assert.equal(defaultShortName('widget'), 'wdgt');
    assert.equal(defaultShortName('at'), 'at');
    assert.equal(defaultShortName('application'), 'applc');
    assert.equal(defaultShortName('widgetv2'), 'wdgtv');
  });
});

describe('ownedKinds', () => {
  it('none: an empty list', () => {
    assert.deepEqual(ownedKinds(undefined), []);
    assert.deepEqual(ownedKinds(''), []);
    assert.deepEqual(ownedKinds(' , '), []);
  });

  it('every built-in kind by name, in the order given, spaces ignored', () => {
    const names = BUILT_IN_KINDS.map((kind) => kind.kind);
    assert.deepEqual(ownedKinds(names.join(' , ')), BUILT_IN_KINDS);
    assert.deepEqual(
      ownedKinds('Deployment,Ingress').map(({ apiVersion, plural }) => `${apiVersion} ${plural}`),
      ['apps/v1 deployments', 'networking.k8s.io/v1 ingresses'],
    );
  });

  it('an unknown bare kind: named, with what is accepted', () => {
    assert.throws(() => ownedKinds('Pod,Gizmo'), {
      name: 'InvalidOptionError',
      message: `--owns: unknown kind "Gizmo": expected one of ${BUILT_IN_KINDS.map((k) => k.kind).join(', ')}, or group/version/Kind such as cluster.x-k8s.io/v1beta2/Cluster`,
    });
  });

  it('a malformed group/version/Kind', () => {
    for (const entry of [
      'apps/Deployment',
      'example.com/v1/gizmo',
      'example/v1/Gizmo',
      'example.com/1/Gizmo',
      'a.b/v1/C/D',
    ])
      assert.throws(() => ownedKinds(entry), {
        message: `--owns: "${entry}" is neither a built-in kind nor group/version/Kind such as cluster.x-k8s.io/v1beta2/Cluster`,
      });
  });

  it('a kind listed twice', () => {
    assert.throws(() => ownedKinds('Pod,ConfigMap,Pod'), { message: '--owns: Pod (v1) is listed twice' });
    assert.throws(() => ownedKinds('a.io/v1/Gizmo,a.io/v2/Gizmo'), {
      message: '--owns: Gizmo (a.io/v2) is listed twice',
    });
    assert.equal(ownedKinds('a.io/v1/Gizmo,b.io/v1/Gizmo').length, 2);
  });
});

describe('ownedExample', () => {
  it('none without a built-in owned kind (a custom kind has no CRD in the test cluster)', () => {
    assert.equal(ownedExample([]), undefined);
    assert.equal(ownedExample(ownedKinds('example.com/v1/Pod')), undefined);
  });

  it('the first built-in kind: its resource and a minimal object', () => {
    assert.deepEqual(ownedExample(ownedKinds('example.com/v1/Gizmo,Deployment,Pod')), {
      kind: 'Deployment',
      group: 'apps',
      version: 'v1',
      plural: 'deployments',
      body: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        spec: {
          selector: { matchLabels: { app: 'example' } },
          template: {
            metadata: { labels: { app: 'example' } },
            spec: { containers: [{ name: 'main', image: 'busybox:1.37.0' }] },
          },
        },
      }),
    });
    assert.deepEqual(ownedExample(ownedKinds('ConfigMap')), {
      kind: 'ConfigMap',
      group: '',
      version: 'v1',
      plural: 'configmaps',
      body: '{"apiVersion":"v1","kind":"ConfigMap","data":{"key":"value"}}',
    });
  });

  it('has an example for every built-in kind', () => {
    for (const kind of BUILT_IN_KINDS) assert.equal(ownedExample([kind])?.kind, kind.kind);
  });
});

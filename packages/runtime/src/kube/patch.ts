/**
 * JSON merge patches (RFC 7386) on any resource or its status subresource, through a {@link KubeClient}.
 *
 * Why merge patch: it works on built-in and custom resources alike (custom resources reject strategic
 * merge patch), and the body is exactly what the caller wrote, so a status write only sends the fields
 * the controller owns. Remember the RFC 7386 rules: `null` deletes a field, arrays are replaced whole.
 *
 * Optimistic concurrency: with `resourceVersion`, the patch carries `metadata.resourceVersion` and the
 * API server applies it only if the object still has that version; otherwise it answers 409 Conflict
 * (`isConflict(err)`), so a controller never overwrites state it has not seen. Without it the patch
 * applies to whatever is current (last write wins for the fields in the patch).
 */
import type { KubeClient } from './client.ts';

/** Names one object of one resource type. `group` is `''` for the core group. */
export interface ResourceRef {
  group: string;
  version: string;
  /** The resource (plural, lower case): `pods`, `ats`, `mailgunclusters`. */
  plural: string;
  /** Omit for cluster-scoped resources. */
  namespace?: string;
  name: string;
}

export interface MergePatchOptions {
  /** Make the patch conditional on this `metadata.resourceVersion` (409 Conflict when stale). */
  resourceVersion?: string;
  /** Patch a subresource (`status`) instead of the main resource. */
  subresource?: string;
  /** `fieldManager` query parameter (server-side field ownership bookkeeping). */
  fieldManager?: string;
  signal?: AbortSignal;
}

/** The REST path of `ref` (and a subresource): `/api/v1/...` for core, `/apis/<group>/<version>/...` otherwise. */
export function resourcePath(ref: ResourceRef, subresource?: string): string {
  const base = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const scope = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  const sub = subresource ? `/${subresource}` : '';
  return `${base}${scope}/${ref.plural}/${encodeURIComponent(ref.name)}${sub}`;
}

/**
 * Applies `patch` as a JSON merge patch and resolves with the object the server returns. Rejects with
 * `KubeApiError` (NotFound, Conflict for a stale `resourceVersion`, Invalid, Forbidden...).
 */
export async function mergePatch<T = unknown>(
  client: KubeClient,
  ref: ResourceRef,
  patch: Record<string, unknown>,
  options: MergePatchOptions = {},
): Promise<T> {
  let body = patch;
  if (options.resourceVersion !== undefined) {
    const metadata = (patch.metadata ?? {}) as Record<string, unknown>;
    body = { ...patch, metadata: { ...metadata, resourceVersion: options.resourceVersion } };
  }
  const query = options.fieldManager ? `?fieldManager=${encodeURIComponent(options.fieldManager)}` : '';
  const request: { body: unknown; contentType: string; signal?: AbortSignal } = {
    body,
    contentType: 'application/merge-patch+json',
  };
  if (options.signal) request.signal = options.signal;
  return client.requestJson<T>('PATCH', `${resourcePath(ref, options.subresource)}${query}`, request);
}

/**
 * {@link mergePatch} on the `status` subresource: the only way to write status when the CRD enables the
 * subresource (the main resource then ignores `status`, and the status endpoint ignores everything but
 * `status` and `metadata`).
 */
export function mergePatchStatus<T = unknown>(
  client: KubeClient,
  ref: ResourceRef,
  patch: Record<string, unknown>,
  options: Omit<MergePatchOptions, 'subresource'> = {},
): Promise<T> {
  return mergePatch<T>(client, ref, patch, { ...options, subresource: 'status' });
}

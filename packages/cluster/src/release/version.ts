/**
 * A release is named by its tag, `vX.Y.Z` (SemVer 2.0.0, pre-release and build metadata allowed): the
 * images' tag, the charts' `version` and `appVersion` are `X.Y.Z`, without the `v`.
 */

// SemVer 2.0.0's own grammar (semver.org): no leading zeros in numeric identifiers.
const numeric = '0|[1-9]\\d*';
const preRelease = `(?:${numeric}|\\d*[a-zA-Z-][0-9a-zA-Z-]*)`;
const semver = new RegExp(
  `^v(${numeric})\\.(${numeric})\\.(${numeric})(?:-(${preRelease}(?:\\.${preRelease})*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$`,
);

export interface ReleaseVersion {
  /** The tag as given, `v1.2.3`. */
  tag: string;
  /** `1.2.3`: the image tag, the charts' version and appVersion. */
  version: string;
  major: number;
  minor: number;
  patch: number;
}

export class ReleaseVersionError extends Error {
  override readonly name = 'ReleaseVersionError';
}

export function parseReleaseTag(tag: string): ReleaseVersion {
  const match = semver.exec(tag);
  if (!match)
    throw new ReleaseVersionError(
      `${JSON.stringify(tag)} is not a release tag: expected vMAJOR.MINOR.PATCH (SemVer), e.g. v0.2.0`,
    );
  // The build metadata (`+...`) is not allowed in an OCI tag; Helm turns it into `_` for the same reason.
  if (match[5] !== undefined)
    throw new ReleaseVersionError(`${tag}: build metadata (+${match[5]}) cannot name an image tag`);
  return {
    tag,
    version: tag.slice(1),
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
  };
}

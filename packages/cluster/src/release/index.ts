export { releaseLocal, type LocalRelease, type LocalReleaseOptions, type PublishedChart } from './release.ts';
export { verifiedSbomAttestations, verifyImage } from './signing.ts';
export { parseReleaseTag, ReleaseVersionError, type ReleaseVersion } from './version.ts';
export { writeReleaseAssets } from './assets.ts';
export { packageReleaseChart, pushChart } from './charts.ts';
export { artifactHubChanges, releaseNotes } from './changelog.ts';
export type { PublishedImage } from './images.ts';

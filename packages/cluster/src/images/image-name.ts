/**
 * The name containerd stores an image under. A pod's `image: busybox:1.37.0` reaches containerd's CRI
 * plugin normalized as Docker does it (`docker.io/library/busybox:1.37.0`), and the CRI looks the image up
 * by that full name; `ctr images import` stores names verbatim, so an image must be imported under the
 * normalized name to be found by the kubelet.
 */
export function normalizedImageName(reference: string): string {
  const [first = '', ...rest] = reference.split('/');
  const hasDomain = rest.length > 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const path = hasDomain ? rest.join('/') : reference;
  const domain = hasDomain ? first : 'docker.io';
  const repository = domain === 'docker.io' && !path.includes('/') ? `library/${path}` : path;
  const lastComponent = repository.split('/').pop() ?? '';
  const tagged = lastComponent.includes(':') || repository.includes('@');
  return `${domain}/${repository}${tagged ? '' : ':latest'}`;
}

/** A file name for an image's archive: `ghcr.io/loopwright/at-scheduler:0.1.0` → `ghcr.io_loopwright_at-scheduler_0.1.0.tar`. */
export function archiveFileName(name: string): string {
  return `${name.replace(/[/:@]/g, '_')}.tar`;
}

/**
 * The pod sandbox image: one static binary that sleeps until it is signalled, run as 65535 like
 * registry.k8s.io/pause. The binary is built with the node harness's other binaries; this only packs it.
 */
import { writeLayer } from './layer.ts';
import { epoch, type Image } from './oci-image.ts';
import { hostFile } from './rootfs-entries.ts';

/** The name to configure as containerd's `sandbox_image`. */
export const pauseImage = 'loopwright.local/pause:3.10';

export async function pauseStandIn(pauseBinaryPath: string, blobsDir: string): Promise<Image> {
  const layer = await writeLayer([await hostFile(pauseBinaryPath, 'pause')], blobsDir);
  return {
    name: pauseImage,
    config: { User: '65535:65535', Entrypoint: ['/pause'], WorkingDir: '/' },
    layers: [layer],
    history: [{ created: epoch, created_by: `loopwright pause: ${pauseBinaryPath}` }],
  };
}

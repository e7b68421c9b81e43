/**
 * The images a test run needs on the node: the stand-in bases (busybox is the At's default image) and
 * each controller's image built from the Dockerfile, imported under the exact names the charts use.
 */
import { buildBaseImages, buildControllerImage, importImage, type ControllerImage } from '../images/index.ts';
import { workspaceControllers } from '../workspace/controllers.ts';
import type { TestNode } from './test-node.ts';

export interface NodeImagesOptions {
  /** Where the archives and layer blobs go. */
  outDir: string;
  /** By name; default: every controller of the workspace. */
  controllers?: readonly string[];
  log?: (line: string) => void;
}

export async function loadImagesIntoNode(
  node: TestNode,
  options: NodeImagesOptions,
): Promise<ControllerImage[]> {
  const log = options.log ?? (() => undefined);
  const address = node.containerdSocket;
  for (const base of await buildBaseImages({ outDir: options.outDir }))
    await importImage(base.archivePath, { address });
  const images: ControllerImage[] = [];
  // One after the other, so that each one's log line says how long it took.
  for (const controller of options.controllers ?? workspaceControllers().map(({ name }) => name)) {
    const started = performance.now();
    const image = await buildControllerImage(controller, { outDir: options.outDir });
    await importImage(image.archivePath, { address });
    log(
      `${image.name}: ${(image.sizeBytes / 2 ** 20).toFixed(1)} MiB, app layer ${(image.appLayerBytes.compressed / 2 ** 20).toFixed(1)} MiB compressed, built and imported in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    images.push(image);
  }
  return images;
}

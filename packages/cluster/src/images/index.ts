export { buildBaseImages, buildPauseImage, type BuildImagesOptions } from './base-images.ts';
export { busyboxImage, busyboxReference } from './busybox.ts';
export {
  buildControllerImage,
  chartDefaultImage,
  type ControllerImage,
  type ControllerImageOptions,
} from './controller-image.ts';
export { importImage, type ImportOptions } from './containerd-import.ts';
export { distrolessNodejsImage } from './distroless-nodejs.ts';
export { normalizedImageName } from './image-name.ts';
export type { ImageArchive } from './oci-image.ts';
export { pauseImage } from './pause.ts';

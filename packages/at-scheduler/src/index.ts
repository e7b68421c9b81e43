export { kubeAtApi, type AtApi } from './api.ts';
export { DEFAULT_IMAGE, program } from './config.ts';
export { CONTROLLER_NAME, createAtControllers, type AtControllerOptions } from './controller.ts';
export { decide, observePod, type Action, type AtView, type ObservedPod } from './decide.ts';
export type { At, AtSpec, AtStatus, AtStatusCondition } from './generated/types.ts';
export { atNameLabelValue, podNameFor } from './names.ts';
export { buildPod } from './pod.ts';
export { ConditionReason, ConditionType, EventReason } from './reasons.ts';
export {
  claimStatus,
  createAtReconciler,
  type AtReconcilerOptions,
  type StartObservation,
} from './reconcile.ts';
export * from './resource.ts';
export { parseSchedule } from './schedule.ts';

export { clientRateLimit, runController, type ControllerRun } from './run-controller.ts';

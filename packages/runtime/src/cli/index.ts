export { runController, type ControllerRun } from './run-controller.ts';

export {
  InvalidConditionError,
  findCondition,
  isConditionReason,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
  type ConditionInput,
  type ConditionStatus,
} from './conditions.ts';
export { updateConditions, type ConditionsStatus, type ConditionsUpdate } from './conditions-status.ts';

/** Asks for approval: the gate in front of tools, the broker that waits for one answer, and answering. */
export {
  approvalModes,
  createApprovalBroker,
  type ApprovalBroker,
  type ApprovalBrokerOptions,
  type ApprovalMode,
  type Approver,
  type NewAsk,
} from './approval-broker.ts';
export { alwaysRuleOf, answerApproval, describeResolution, type AnsweredApproval, type ApprovalAnswer } from './answer-approval.ts';
export { closeOrphanedApprovals } from './close-orphaned-approvals.ts';
export { gateToolCalls, unknownToolRisk, type ToolGateContext, type ToolGateServices } from './gate-tools.ts';
export { ToolDeniedError } from './tool-denied-error.ts';

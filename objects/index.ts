export {
  OBJECT_KINDS,
  AssignmentObject,
  ContextObject,
  ProposalObject,
  EvidenceObject,
  VerificationObject,
  OutcomeObject,
} from './object-kinds.js';
export {
  TaskSpec,
  RequiredArtifact,
  Stage,
  WorkspacePath,
  DEFAULT_STAGE,
  stagesOf,
  stageNamed,
  type TaskSpecInput,
} from './task-spec.js';
export {
  BUILT_IN_CONTRACTS,
  TEMPLATE_NAMES,
  TEMPLATE_PLACEHOLDER,
  checkArtifact,
  checkSpecContracts,
  checkSpecTemplates,
  contractLabel,
  type ArtifactCheck,
  type ArtifactContracts,
  type ContractIssue,
} from './artifact-contracts.js';

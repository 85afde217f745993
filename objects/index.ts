export {
  OBJECT_KINDS,
  TaskSpec,
  RequiredArtifact,
  AssignmentObject,
  ContextObject,
  ProposalObject,
  EvidenceObject,
  VerificationObject,
  OutcomeObject,
  type TaskSpecInput,
} from './object-kinds.js';
export { ARTIFACT_SCHEMAS, Diagnosis, Completion, checkArtifact, type ArtifactCheck } from './artifact-schemas.js';

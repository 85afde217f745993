// The generic git Effect adapter: publishes a Task's workspace as one commit on a branch of a
// remote, pushed once with the branch's expected head as its lease (docs/publication.md).
export { gitEffectAdapter, type GitEffectAdapter, type GitEffectObservation } from './git-effect-adapter.js';
export {
  DEFAULT_GIT_EXCLUDE,
  GitPublishInput,
  type GitEffectAdapterConfig,
  type GitPublishReceipt,
  type GitWorkspaceRequest,
} from './git-effect-config.js';
export { GIT_EFFECT_CODES, GitEffectError, gitNotPerformed, type GitEffectCode } from './git-effect-error.js';

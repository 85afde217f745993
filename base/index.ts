/** The leaf every layer may import: the coded error shape and the zod-issue helpers. */
export { CodedError, isCodedError, type CodedErrorOptions, type ErrorData } from './coded-error.js';
export { describeIssues, issuePath, zodIssue, type Issue } from './zod-issue.js';
export { editDistance, nearestKey, unknownKeyMessage } from './nearest-key.js';
export { strictObject } from './strict-object.js';
export { ReceiptWithEvidence, withEvidence, type EffectEvidenceFile } from './effect-evidence.js';

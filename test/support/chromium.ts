import { findExecutable, optionalPart } from './optional-part.js';

/**
 * Debian's chromium, for the tests that drive a real browser (through playwright-core; .ci/run
 * installs it, `npm install` does not). ORDIVON_CHROMIUM, when set, is the only place looked at.
 */
export const CHROMIUM = optionalPart(
  'Chromium',
  findExecutable(process.env.ORDIVON_CHROMIUM ? [process.env.ORDIVON_CHROMIUM] : ['/usr/bin/chromium', 'chromium']),
  process.env.ORDIVON_CHROMIUM
    ? `ORDIVON_CHROMIUM=${process.env.ORDIVON_CHROMIUM} is not an executable`
    : 'looked for /usr/bin/chromium and `chromium` on PATH; install it (apt-get install chromium) or set ORDIVON_CHROMIUM',
);

// The Host's composition root: a Supervisor with the frontier's work, the Runtime and the
// driver pool attached (`openHost`). Above the kernel, the frontier and the views it wires.
export { openHost, type Host, type HostOptions } from './host.js';

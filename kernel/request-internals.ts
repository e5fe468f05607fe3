import type { Request } from './request.js';

/** Ways into a Request's private state for the kernel's own files (not in index.ts); Request's static block sets them. */
export const requestInternals: {
  /** The request is done (kernel.terminate has run): its signal stops following the caller's. */
  endSignalFollowing: (request: Request) => void;
} = { endSignalFollowing: () => {} };

import { isPromiseLike, type HttpKernel, type Request, type Response } from '../../kernel/index.js';
import type { Profiler } from '../profiler/index.js';

/**
 * Makes `kernel.terminateMaybeAsync()` (which `terminate()`, the server and inject() call) take the
 * profile of a request whose `kernel.terminate` listeners never reached the profiler's own (-1024: one
 * above it stopped propagation or threw), once they have run: its X-Debug-Token already names it. The
 * kernel stays an HttpKernel (its frames in stack traces too); only this one method of it is wrapped.
 */
export function profileStoppedTerminates(kernel: HttpKernel, profiler: Profiler): void {
  const terminate = kernel.terminateMaybeAsync.bind(kernel);
  const stack = kernel.requestStack;
  // In the request's context, alone on the stack, as its kernel.terminate listeners ran: what the profiler logs is the request's.
  const takeMissed = (request: Request, response: Response): void => {
    const take = (): void => profiler.takeMissedProfile(request, response);
    const current = stack.all();
    if (current.length === 1 && current[0] === request) return take();
    if (current.length === 0) return stack.run(request, take);
    stack.exit(() => stack.run(request, take));
  };
  kernel.terminateMaybeAsync = (request: Request, response: Response): void | Promise<void> => {
    let pending: void | Promise<void>;
    try {
      pending = terminate(request, response);
    } catch (error) {
      takeMissed(request, response);
      throw error;
    }
    if (!isPromiseLike(pending)) return takeMissed(request, response);
    return pending.then(
      () => takeMissed(request, response),
      (error: unknown) => {
        takeMissed(request, response);
        throw error;
      },
    );
  };
}

import { abortableSleep, createSandboxProvider, type Provider, type SandboxProviderOptions } from '@sdx/providers';

export interface HeldSandbox {
  /** The sandbox provider, for StackOptions.providers. */
  provider: Provider;
  /**
   * Holds every page that waits (a `sandbox_slow_MS` target) after its wait, until the function
   * returned is called: what a test asserts of a running job then happens while it runs, however
   * slow the machine. An aborted attempt (cancel, lease lost) stops waiting at once.
   */
  hold(): () => void;
}

export function heldSandbox(options: Omit<SandboxProviderOptions, 'sleep'> = {}): HeldSandbox {
  let held: Promise<void> | null = null;
  let letGo = (): void => undefined;
  const aborted = (signal: AbortSignal) =>
    new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  const provider = createSandboxProvider({
    ...options,
    sleep: async (ms, signal) => {
      await abortableSleep(ms, signal);
      while (held && !signal.aborted) await Promise.race([held, aborted(signal)]);
    },
  });
  return {
    provider,
    hold() {
      if (!held) {
        held = new Promise<void>((resolve) => {
          letGo = () => {
            held = null;
            resolve();
          };
        });
      }
      return letGo;
    },
  };
}

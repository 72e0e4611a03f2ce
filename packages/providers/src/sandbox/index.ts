export {
  createSandboxProvider,
  abortableSleep,
  abortError,
  isAbortError,
  SANDBOX_PROVIDER_NAME,
  type SandboxProviderOptions,
  type SleepFn,
} from './provider';
export { parseSandboxTokens, type SandboxTokens } from './tokens';
export { SANDBOX_EPOCH_MS } from './items';

export {
  createSandboxProvider,
  drifted,
  abortableSleep,
  abortError,
  isAbortError,
  SANDBOX_PROVIDER_NAME,
  type SandboxProviderOptions,
  type SleepFn,
} from './provider';
export { parseSandboxTokens, SANDBOX_DRIFT_EPOCH_MS, type SandboxTokens } from './tokens';
export { SANDBOX_EPOCH_MS } from './items';

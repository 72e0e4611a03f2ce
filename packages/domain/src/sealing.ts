/** Secrets at rest: the sealing lives in its own package (@sdx/sealing) so migrations can use it too. */
export {
  DEVELOPMENT_KEY_ID,
  DevelopmentKeyRefused,
  isDevelopmentKey,
  SEALED_COLUMNS,
  SEALED_PREFIX,
  type Sealer,
  sealerOf,
} from '@sdx/sealing';

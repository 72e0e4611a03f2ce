import type { OAuthLimiter } from './limits';
import type { SdxOAuthProvider } from './provider';

/** What the OAuth endpoints of one app share: the provider on the domain and the limiter. */
export interface OAuthKit {
  provider: SdxOAuthProvider;
  limiter: OAuthLimiter;
}

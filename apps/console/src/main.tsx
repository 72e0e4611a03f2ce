import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { ApiProblem } from './api/client';
import { App } from './app';
import { SESSION_ENDED, SessionProvider, TWO_FACTOR_REQUIRED } from './session';

/**
 * A 401 anywhere means the session ended (expired, signed out elsewhere): back to the sign-in. A
 * 403 two_factor_required means the workspace requires two-factor sign-in the user lacks: the
 * shell says so above every page, with the way to the security settings.
 */
const TYPED = new Set(['invalid_credentials', 'invalid_otp', 'otp_required']);
const onError = (error: unknown) => {
  if (!(error instanceof ApiProblem)) return;
  // A wrong password or code is an answer to what was typed, not the end of the session.
  if (error.status === 401 && !TYPED.has(error.code)) window.dispatchEvent(new Event(SESSION_ENDED));
  if (error.status === 403 && error.code === 'two_factor_required') window.dispatchEvent(new Event(TWO_FACTOR_REQUIRED));
};

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      // A refused request (4xx) is an answer, not a fault: show it instead of asking again.
      retry: (count, error) => count < 2 && !(error instanceof ApiProblem && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: true,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter basename="/console">
        <SessionProvider>
          <App />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);

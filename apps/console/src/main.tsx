import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { ApiProblem } from './api/client';
import { App } from './app';
import { SESSION_ENDED, SessionProvider } from './session';

/** A 401 anywhere means the session ended (expired, signed out elsewhere): back to the sign-in. */
const onError = (error: unknown) => {
  if (error instanceof ApiProblem && error.status === 401) window.dispatchEvent(new Event(SESSION_ENDED));
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
